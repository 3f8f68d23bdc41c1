package rollout

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"
)

// BlueGreenPhase is where a blue-green rollout is. The names are those of
// GKE's blue-green node pool upgrade, as one word each.
type BlueGreenPhase string

const (
	// PhaseCreatingGreen: the full new (green) set of the pool's size is
	// created beside the old (blue) one, which keeps serving.
	PhaseCreatingGreen BlueGreenPhase = "CreatingGreenPool"
	// PhaseCordoningBlue: every green instance is available; the blue
	// Nodes are cordoned.
	PhaseCordoningBlue BlueGreenPhase = "CordoningBluePool"
	// PhaseDrainingBlue: the blue Nodes are drained in batches, with the
	// batch soak after each.
	PhaseDrainingBlue BlueGreenPhase = "DrainingBluePool"
	// PhaseSoaking: every blue Node is drained; the blue instances are
	// kept (cordoned) for the pool soak, for a rollback.
	PhaseSoaking BlueGreenPhase = "NodePoolSoaking"
	// PhaseDeletingBlue: the soak is over; the blue instances are deleted.
	PhaseDeletingBlue BlueGreenPhase = "DeletingBluePool"
	// PhaseRollingBack: the pool's model is the blue one again (an undo, an
	// automatic rollback, a spec change back): the blue Nodes are made
	// schedulable again and the green instances drained and deleted; no
	// blue instance is recreated.
	PhaseRollingBack BlueGreenPhase = "RollingBack"
)

// IsBlueGreenPhase reports whether reason names a BlueGreenPhase (a
// RolloutProgressing reason of a pool in a blue-green rollout).
func IsBlueGreenPhase(reason string) bool {
	switch BlueGreenPhase(reason) {
	case PhaseCreatingGreen, PhaseCordoningBlue, PhaseDrainingBlue, PhaseSoaking, PhaseDeletingBlue, PhaseRollingBack:
		return true
	}
	return false
}

// DefaultBlueGreenBatchSize is the batch of blue Nodes drained at once when
// BlueGreenSettings.BatchSize is not set.
var DefaultBlueGreenBatchSize = intstr.FromInt32(1)

// BlueGreenSettings are a blue-green rollout's knobs, as GKE's
// blueGreenSettings (standardRolloutPolicy and nodePoolSoakDuration).
type BlueGreenSettings struct {
	// BatchSize is how many blue Nodes are drained at once: an integer, or a
	// percentage of the blue set rounded up (GKE's batchNodeCount or
	// batchPercentage). Nil means DefaultBlueGreenBatchSize. At least 1.
	BatchSize *intstr.IntOrString
	// BatchSoak is the wait after each batch is drained (GKE's
	// batchSoakDuration); zero: none.
	BatchSoak time.Duration
	// PoolSoak is the wait, once every blue Node is drained, before the blue
	// instances are deleted (GKE's nodePoolSoakDuration): the window in
	// which a rollback keeps them.
	PoolSoak time.Duration
}

// BatchCount resolves BatchSize against blue instances: percentages round
// up, and a batch is at least one instance and at most blue.
func (s BlueGreenSettings) BatchCount(blue int32) (int32, error) {
	v := intstr.ValueOrDefault(s.BatchSize, DefaultBlueGreenBatchSize)
	n, err := intstr.GetScaledValueFromIntOrPercent(v, int(blue), true)
	if err != nil {
		return 0, fmt.Errorf("blue-green batch size: %w", err)
	}
	if n < 0 {
		return 0, fmt.Errorf("blue-green batch size %s is negative", v.String())
	}
	return min(max(int32(n), 1), max(blue, 1)), nil
}

// BlueGreenRecord is what a blue-green rollout keeps between reconciles (on
// the infrastructure pool): the rest is derived from the instances.
type BlueGreenRecord struct {
	// Blue is the model of the old set when the rollout started: the pool
	// going back to it is a rollback.
	Blue string `json:"blue"`
	// Green is the model being rolled out.
	Green string `json:"green"`
	// Superseded are green models a newer change replaced before their set
	// served: their instances are deleted.
	Superseded []string `json:"superseded,omitempty"`
	// Phase is where the rollout is.
	Phase BlueGreenPhase `json:"phase"`
	// Since is when the phase started, or, while draining, when the last
	// batch started or was drained: the soaks count from it.
	Since time.Time `json:"since"`
	// BlueCount is the size of the blue set when it was cordoned: a batch
	// percentage is of it.
	BlueCount int32 `json:"blueCount,omitempty"`
	// Batch are the blue instances being drained.
	Batch []string `json:"batch,omitempty"`
	// Drained are the blue instances whose drain is done.
	Drained []string `json:"drained,omitempty"`
}

// Cordoned moves a record in PhaseCordoningBlue to PhaseDrainingBlue once
// every blue Node is cordoned.
func (r *BlueGreenRecord) Cordoned(now time.Time) {
	if r.Phase == PhaseCordoningBlue {
		r.Phase, r.Since = PhaseDrainingBlue, now
	}
}

// BatchDrained records that the current batch is drained: the batch soak
// counts from now.
func (r *BlueGreenRecord) BatchDrained(now time.Time) {
	if r.Phase != PhaseDrainingBlue || len(r.Batch) == 0 {
		return
	}
	r.Drained = append(r.Drained, r.Batch...)
	slices.Sort(r.Drained)
	r.Batch, r.Since = nil, now
}

// BlueGreenInput is what PlanBlueGreen needs: the rolling planner's input
// (Desired, ModelHash, Instances, MinReadySeconds, Now; Paused and
// HoldStale hold every new phase), the settings and the record.
type BlueGreenInput struct {
	Input
	// Settings are the pool's blue-green settings.
	Settings BlueGreenSettings
	// Record is the rollout in progress, nil when none.
	Record *BlueGreenRecord
}

// BlueGreenStep is what PlanBlueGreen decided.
type BlueGreenStep struct {
	// Record is the record to keep; nil when no blue-green rollout is in
	// progress (none is needed, or it just completed).
	Record *BlueGreenRecord
	// Own is true while the phase decides the group's capacity and victims
	// (TargetCapacity, Delete) in place of the rolling planner: from
	// CreatingGreenPool to NodePoolSoaking. In DeletingBluePool and
	// RollingBack the rolling planner removes the old set within the
	// pool's budgets.
	Own bool
	// TargetCapacity is the live instances the group should have: the blue
	// set plus the pool's size of green ones.
	TargetCapacity int32
	// Delete are the instances to remove now: failed, already being
	// removed, marked, to remediate, and those of a superseded green model.
	Delete []Victim
	// Cordon are the blue instances whose Nodes must be cordoned.
	Cordon []string
	// Uncordon are the instances whose Nodes the rollout cordoned and that
	// must serve again (a rollback, a superseded rollout).
	Uncordon []string
	// Drain are the blue instances of the batch being drained.
	Drain []string
	// Wait says what the phase waits for; its Reason is the phase.
	Wait Wait
	// RequeueAfter is when a soak ends or a green instance becomes
	// available.
	RequeueAfter time.Duration
	// Completed is true when this step ended the rollout: the blue set is
	// gone, or the rollback is over.
	Completed bool
}

// PlanBlueGreen decides the next step of a blue-green rollout. It is pure.
// A rollout starts when live instances run another model than the pool's
// and nothing holds it (Input.Paused, Input.HoldStale); no new phase starts
// while something does. See the package documentation.
func PlanBlueGreen(in BlueGreenInput) (BlueGreenStep, error) {
	if err := validate(in.Input); err != nil {
		return BlueGreenStep{}, err
	}
	if _, err := in.Settings.BatchCount(1); err != nil {
		return BlueGreenStep{}, err
	}
	p := newBlueGreen(in)
	return p.step(), nil
}

// blueGreen holds one run of PlanBlueGreen.
type blueGreen struct {
	in   BlueGreenInput
	hold bool
	rec  *BlueGreenRecord
	// live instances by set, sorted by creation then ID.
	blue, green, superseded []Instance
	// victims are removed in every phase the rollout owns.
	victims []Victim
	res     BlueGreenStep
}

func newBlueGreen(in BlueGreenInput) *blueGreen {
	p := &blueGreen{in: in, hold: in.Paused || in.HoldStale != ""}
	if in.Record != nil {
		r := *in.Record
		r.Superseded = slices.Clone(r.Superseded)
		r.Batch = slices.Clone(r.Batch)
		r.Drained = slices.Clone(r.Drained)
		p.rec = &r
	}
	return p
}

func (p *blueGreen) classify() {
	p.blue, p.green, p.superseded, p.victims = nil, nil, nil, nil
	insts := slices.Clone(p.in.Instances)
	slices.SortFunc(insts, func(a, b Instance) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	for _, inst := range insts {
		switch {
		case inst.State == StateFailed:
			p.victims = append(p.victims, Victim{ID: inst.ID, Reason: ReasonFailed})
			continue
		case inst.State == StateDeleting:
			p.victims = append(p.victims, Victim{ID: inst.ID, Reason: ReasonDeleting})
			continue
		case inst.Remediate:
			p.victims = append(p.victims, Victim{ID: inst.ID, Reason: ReasonRemediate})
			continue
		case inst.MarkedForDeletion:
			p.victims = append(p.victims, Victim{ID: inst.ID, Reason: ReasonMarked})
			continue
		case inst.Quarantined:
			continue
		}
		switch {
		case inst.ModelHash == p.in.ModelHash:
			p.green = append(p.green, inst)
		case p.rec != nil && slices.Contains(p.rec.Superseded, inst.ModelHash):
			p.superseded = append(p.superseded, inst)
		default:
			p.blue = append(p.blue, inst)
		}
	}
}

func ids(insts []Instance) []string {
	out := make([]string, len(insts))
	for i := range insts {
		out[i] = insts[i].ID
	}
	return out
}

// step runs the state machine from the record.
func (p *blueGreen) step() BlueGreenStep {
	now := p.in.Now
	p.classify()
	if p.rec == nil {
		if len(p.blue) == 0 || p.hold || p.in.SkipModelReconciliation {
			return p.res
		}
		p.rec = &BlueGreenRecord{Blue: majorityModel(p.blue), Green: p.in.ModelHash, Phase: PhaseCreatingGreen, Since: now}
	}
	r := p.rec
	if r.Green != p.in.ModelHash {
		switch {
		case r.Blue == p.in.ModelHash:
			if r.Phase != PhaseRollingBack {
				r.Phase, r.Since, r.Batch = PhaseRollingBack, now, nil
			}
		default:
			// A newer change: the blue set serves again, the old green set
			// goes (it is drained onto the blue one), and the new green set
			// is created: the peak stays twice the pool's size.
			if r.Phase != PhaseRollingBack && !slices.Contains(r.Superseded, r.Green) {
				r.Superseded = append(r.Superseded, r.Green)
			}
			r.Green, r.Phase, r.Since, r.Batch, r.Drained, r.BlueCount = p.in.ModelHash, PhaseCreatingGreen, now, nil, nil, 0
		}
		p.classify()
	}
	if r.Phase == PhaseRollingBack || r.Phase == PhaseDeletingBlue {
		// The rolling planner removes the old set; the blue Nodes serve
		// again on a rollback, and stay cordoned until deleted otherwise.
		if r.Phase == PhaseRollingBack {
			p.res.Uncordon = ids(p.green)
		} else {
			p.res.Cordon = ids(p.blue)
		}
		if len(p.blue) == 0 && len(p.superseded) == 0 {
			p.res.Completed = true
			return p.res
		}
		p.res.Record = r
		return p.res
	}
	p.res.Record, p.res.Own = r, true
	p.res.Delete = p.victims
	for _, inst := range p.superseded {
		p.res.Delete = append(p.res.Delete, Victim{ID: inst.ID, Reason: ReasonStale})
	}
	desired := p.in.Desired
	p.res.TargetCapacity = int32(len(p.blue)) + max(desired, int32(len(p.green)))
	if len(p.blue) == 0 {
		// Nothing left to replace (the blue set went by itself).
		p.res.Record, p.res.Own, p.res.Completed = nil, false, true
		return p.res
	}
	if r.Phase == PhaseCreatingGreen {
		p.res.Uncordon = ids(p.blue)
		available, wait := p.greenAvailable()
		if available < desired || p.hold {
			p.res.RequeueAfter = wait
			p.wait(PhaseCreatingGreen, "creating the green set: %d of %d instances of model %s available; the %d blue instances keep serving%s",
				available, desired, r.Green, len(p.blue), p.held())
			return p.res
		}
		r.Phase, r.Since, r.BlueCount = PhaseCordoningBlue, now, int32(len(p.blue))
	}
	p.res.Cordon = ids(p.blue)
	switch r.Phase {
	case PhaseCordoningBlue:
		p.wait(PhaseCordoningBlue, "cordoning the %d blue Nodes: the %d green instances are available", len(p.blue), len(p.green))
	case PhaseDrainingBlue:
		p.drain()
	case PhaseSoaking:
		p.soak()
	}
	return p.res
}

// greenAvailable counts the green instances available now, and when the
// next one becomes available.
func (p *blueGreen) greenAvailable() (int32, time.Duration) {
	minReady := time.Duration(p.in.Strategy.MinReadySeconds) * time.Second
	var n int32
	var next time.Duration
	for _, inst := range p.green {
		ok, wait := availableAt(inst.ReadySince, p.in.Now, minReady)
		if ok {
			n++
		} else if wait > 0 && (next == 0 || wait < next) {
			next = wait
		}
	}
	return n, next
}

// drain drains the blue set batch by batch, with the batch soak between.
func (p *blueGreen) drain() {
	r, now := p.rec, p.in.Now
	live := ids(p.blue)
	r.Batch = slices.DeleteFunc(r.Batch, func(id string) bool { return !slices.Contains(live, id) })
	if len(r.Batch) > 0 {
		p.res.Drain = slices.Clone(r.Batch)
		p.wait(PhaseDrainingBlue, "draining %d blue Nodes (%d of %d drained)", len(r.Batch), p.drainedCount(), len(p.blue))
		return
	}
	var remaining []string
	for _, id := range live {
		if !slices.Contains(r.Drained, id) {
			remaining = append(remaining, id)
		}
	}
	soakEnds := r.Since.Add(p.in.Settings.BatchSoak)
	if len(r.Drained) > 0 && now.Before(soakEnds) {
		p.res.RequeueAfter = soakEnds.Sub(now)
		p.wait(PhaseDrainingBlue, "batch soak: %d of %d blue Nodes drained, the next step at %s", len(live)-len(remaining), len(live), soakEnds.UTC().Format(time.RFC3339))
		return
	}
	if len(remaining) == 0 {
		if p.hold {
			p.wait(PhaseDrainingBlue, "every blue Node is drained%s", p.held())
			return
		}
		r.Phase, r.Since = PhaseSoaking, now
		p.soak()
		return
	}
	if p.hold {
		p.wait(PhaseDrainingBlue, "%d of %d blue Nodes drained%s", len(live)-len(remaining), len(live), p.held())
		return
	}
	n, _ := p.in.Settings.BatchCount(max(r.BlueCount, int32(len(live))))
	r.Batch = remaining[:min(int(n), len(remaining))]
	r.Since = now
	p.res.Drain = slices.Clone(r.Batch)
	p.wait(PhaseDrainingBlue, "draining %d blue Nodes (%d of %d drained)", len(r.Batch), len(live)-len(remaining), len(live))
}

func (p *blueGreen) drainedCount() int {
	n := 0
	for _, inst := range p.blue {
		if slices.Contains(p.rec.Drained, inst.ID) {
			n++
		}
	}
	return n
}

// soak keeps the drained blue set for the pool soak, then hands its
// deletion to the rolling planner.
func (p *blueGreen) soak() {
	r, now := p.rec, p.in.Now
	ends := r.Since.Add(p.in.Settings.PoolSoak)
	if now.Before(ends) || p.hold {
		if now.Before(ends) {
			p.res.RequeueAfter = ends.Sub(now)
		}
		p.wait(PhaseSoaking, "soaking until %s: the %d blue instances are kept, cordoned and drained; 'mpool rollout undo' rolls back to them%s",
			ends.UTC().Format(time.RFC3339), len(p.blue), p.held())
		return
	}
	r.Phase, r.Since = PhaseDeletingBlue, now
	p.res.Own, p.res.TargetCapacity, p.res.Delete = false, 0, nil
}

// held says why no new phase starts, or nothing.
func (p *blueGreen) held() string {
	switch {
	case p.in.Paused:
		return " (paused)"
	case p.in.HoldStale != "":
		return " (" + p.in.HoldStale + ")"
	}
	return ""
}

func (p *blueGreen) wait(phase BlueGreenPhase, format string, args ...any) {
	p.res.Wait = Wait{Reason: WaitReason(phase), Message: "blue-green: " + fmt.Sprintf(format, args...)}
}

// majorityModel is the model most of insts run (ties: the smallest hash).
func majorityModel(insts []Instance) string {
	count := map[string]int{}
	for _, in := range insts {
		count[in.ModelHash]++
	}
	best := ""
	for m, n := range count {
		if best == "" || n > count[best] || (n == count[best] && m < best) {
			best = m
		}
	}
	return best
}
