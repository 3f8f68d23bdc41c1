package rollout

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Plan decides, from one observation of a scale group, which instances to
// delete and how many instances the group should have. It is pure: the same
// Input always gives the same Result, whatever the order of Input.Instances.
// It fails only on an invalid Input (strategy, desired replicas, instance IDs
// or states); see the package documentation for the rules it applies.
func Plan(in Input) (Result, error) {
	surge, unavailable, err := ResolveBudgets(in.Desired, in.Strategy)
	if err != nil {
		return Result{}, fmt.Errorf("invalid rollout strategy: %w", err)
	}
	if err := validate(in); err != nil {
		return Result{}, err
	}
	p := newPlanner(in, surge, unavailable)
	p.observe()
	if in.Paused {
		return p.pause(), nil
	}
	p.res.Delete = append(p.res.Delete, p.gone...)
	p.removeOld()
	p.removeExcess()
	p.setCapacity()
	p.report()
	return p.res, nil
}

// validate rejects input the planner cannot reason about.
func validate(in Input) error {
	switch in.Strategy.DeletePolicy {
	case "", DeletePolicyOldest, DeletePolicyNewest, DeletePolicyRandom:
	default:
		return fmt.Errorf("invalid rollout strategy: unknown delete policy %q", in.Strategy.DeletePolicy)
	}
	if in.Strategy.MinReadySeconds < 0 {
		return fmt.Errorf("invalid rollout strategy: minReadySeconds %d is negative", in.Strategy.MinReadySeconds)
	}
	seen := make(map[string]struct{}, len(in.Instances))
	for i := range in.Instances {
		inst := &in.Instances[i]
		if inst.ID == "" {
			return fmt.Errorf("instance %d: empty ID", i)
		}
		if _, dup := seen[inst.ID]; dup {
			return fmt.Errorf("instance %s: listed twice", inst.ID)
		}
		seen[inst.ID] = struct{}{}
		switch inst.State {
		case StatePending, StateRunning, StateFailed, StateDeleting:
		default:
			return fmt.Errorf("instance %s: unknown state %q", inst.ID, inst.State)
		}
	}
	return nil
}

// planner holds one run of Plan.
type planner struct {
	in       Input
	policy   DeletePolicy
	desired  int64
	ceiling  int64 // desired + maxSurge
	minAvail int64 // desired - maxUnavailable
	res      Result

	// gone are the failed and deleting instances, always removed.
	gone []Victim
	// old are the live instances to replace: marked, or stale unless the gate
	// is set. fresh are the other live instances.
	old, fresh []candidate

	// available counts the available instances the plan keeps so far.
	available int64
	// oldKept counts old instances the budget holds back (all available).
	oldKept int64
	// freshKept and freshKeptUnavailable count the fresh instances kept.
	freshKept, freshKeptUnavailable int64
	// heldBack counts instances that should go but the budget keeps.
	heldBack int64
	// inFlight counts remediations in flight (Deleting with Remediate, and
	// those this plan starts).
	inFlight int64
	// held counts the stale instances Input.HoldStale keeps.
	held int64
}

func newPlanner(in Input, surge, unavailable int32) *planner {
	policy := in.Strategy.DeletePolicy
	if policy == "" {
		policy = DeletePolicyOldest
	}
	return &planner{
		in:       in,
		policy:   policy,
		desired:  int64(in.Desired),
		ceiling:  maxCapacity(in.Desired, surge),
		minAvail: minAvailable(in.Desired, unavailable),
		res:      Result{MaxSurge: surge, MaxUnavailable: unavailable},
	}
}

// observe classifies every instance, fills Counts and finds when the next
// instance becomes available.
func (p *planner) observe() {
	minReady := time.Duration(p.in.Strategy.MinReadySeconds) * time.Second
	c := &p.res.Counts
	p.old = make([]candidate, 0, len(p.in.Instances))
	p.fresh = make([]candidate, 0, len(p.in.Instances))
	for i := range p.in.Instances {
		inst := &p.in.Instances[i]
		switch inst.State {
		case StateFailed:
			c.Failed++
			p.gone = append(p.gone, Victim{ID: inst.ID, Reason: ReasonFailed})
			continue
		case StateDeleting:
			c.Deleting++
			if inst.Remediate {
				c.Remediating++
				p.inFlight++
			}
			p.gone = append(p.gone, Victim{ID: inst.ID, Reason: ReasonDeleting})
			continue
		}
		if inst.Quarantined && !inst.MarkedForDeletion && !inst.Remediate {
			c.Quarantined++
			continue
		}
		available, wait := availableAt(inst.ReadySince, p.in.Now, minReady)
		cand := candidate{
			id:        inst.ID,
			createdAt: inst.CreatedAt,
			marked:    inst.MarkedForDeletion,
			remediate: inst.Remediate,
			ready:     inst.ReadySince != nil,
			available: available,
			upToDate:  inst.ModelHash == p.in.ModelHash,
		}
		if p.policy == DeletePolicyRandom {
			cand.rank = randomRank(p.in.RandSeed, inst.ID)
		}
		c.Replicas++
		if cand.upToDate {
			c.UpToDate++
		} else {
			c.Stale++
		}
		if cand.ready {
			c.Ready++
		}
		if cand.available {
			c.Available++
		}
		if cand.marked {
			c.Marked++
		}
		if cand.remediate {
			c.Unhealthy++
		}
		if wait > 0 && (p.res.RequeueAfter == 0 || wait < p.res.RequeueAfter) {
			p.res.RequeueAfter = wait
		}
		if !cand.upToDate && !cand.marked && !cand.remediate && p.in.HoldStale != "" {
			p.held++
		}
		if cand.marked || cand.remediate || (!cand.upToDate && !p.in.SkipModelReconciliation && p.in.HoldStale == "") {
			p.old = append(p.old, cand)
		} else {
			p.fresh = append(p.fresh, cand)
		}
	}
	c.Unavailable = int32(max(0, p.desired-int64(c.Available)))
	p.available = int64(c.Available)
	slices.SortFunc(p.gone, func(a, b Victim) int { return strings.Compare(a.ID, b.ID) })
	p.res.Done = len(p.gone) == 0 && c.Marked == 0 && c.Unhealthy == 0 && int64(c.Replicas) == p.desired &&
		c.Available == c.Replicas && (c.Stale == 0 || p.in.SkipModelReconciliation)
}

// pause reports without acting: no deletions and the capacity the group has.
func (p *planner) pause() Result {
	p.res.TargetCapacity = p.res.Counts.Replicas
	p.res.SurgeInUse = int32(max(0, int64(p.res.TargetCapacity)-p.desired))
	p.res.Waiting = []Wait{{Reason: WaitPaused, Message: "paused"}}
	return p.res
}

// removeOld deletes the unhealthy, marked and stale instances: not-available
// ones freely, available ones while the unavailability budget allows, and
// unhealthy ones only while fewer than MaxRemediationsInFlight remediations
// are in flight.
func (p *planner) removeOld() {
	sortForDeletion(p.old, p.policy)
	for i := range p.old {
		c := &p.old[i]
		reason := ReasonStale
		switch {
		case c.remediate:
			reason = ReasonRemediate
			if capped := p.in.MaxRemediationsInFlight; capped != nil && p.inFlight >= int64(*capped) {
				p.res.Deferred = append(p.res.Deferred, c.id)
				p.oldKept++
				continue
			}
		case c.marked:
			reason = ReasonMarked
		}
		if !p.take(c, reason) {
			p.oldKept++
			continue
		}
		if c.remediate {
			p.inFlight++
		}
	}
	slices.Sort(p.res.Deferred)
}

// removeExcess deletes fresh instances beyond desired, and beyond
// desired + maxSurge when old instances are still held back. Instances that are
// not Ready go first, then the delete policy decides; a held-back available
// instance does not stop the search for one that can go for free.
func (p *planner) removeExcess() {
	n := int64(len(p.fresh))
	allowed := p.desired
	if p.held > 0 {
		// The surge of a replacement the window interrupted stays until
		// the window opens: removing it would be a disruption too.
		allowed += min(p.ceiling-p.desired, int64(p.res.Counts.UpToDate))
	}
	excess := max(n-allowed, n+p.oldKept-p.ceiling)
	if excess > 0 {
		sortForDeletion(p.fresh, p.policy)
	}
	for i := range p.fresh {
		c := &p.fresh[i]
		if excess > 0 && p.take(c, ReasonExcess) {
			excess--
			continue
		}
		p.freshKept++
		if !c.available {
			p.freshKeptUnavailable++
		}
	}
}

// take deletes c unless it is available and deleting it would leave fewer
// than desired - maxUnavailable available instances. It reports whether c goes.
func (p *planner) take(c *candidate, reason DeleteReason) bool {
	if c.available {
		if !canDeleteAvailable(p.available, p.minAvail) {
			p.heldBack++
			return false
		}
		p.available--
	}
	p.res.Delete = append(p.res.Delete, Victim{ID: c.id, Reason: reason})
	return true
}

// setCapacity asks for enough up-to-date instances to reach desired: up to
// desired while nothing is being replaced, up to desired + maxSurge while old
// instances remain. It never goes below the instances the plan keeps.
func (p *planner) setCapacity() {
	kept := p.oldKept + p.freshKept
	limit := p.desired
	if p.oldKept > 0 {
		limit = p.ceiling
	}
	wanted := max(0, p.desired-p.freshKept)
	create := min(wanted, max(0, limit-kept))
	p.res.TargetCapacity = int32(kept + create)
	p.res.SurgeInUse = int32(max(0, kept+create-p.desired))
	if create < wanted {
		p.res.Waiting = append(p.res.Waiting, Wait{
			Reason: WaitSurge,
			Message: fmt.Sprintf("surge exhausted: %d of max %d instances (desired %d + maxSurge %d), %d still to create",
				kept+create, p.ceiling, p.desired, p.res.MaxSurge, wanted-create),
		})
	}
	p.freshKeptUnavailable += create
}

// report explains what the plan waits for.
func (p *planner) report() {
	if p.held > 0 {
		p.res.Waiting = append(p.res.Waiting, Wait{
			Reason:  WaitWindow,
			Message: fmt.Sprintf("%d stale instances wait: %s", p.held, p.in.HoldStale),
		})
	}
	if n := len(p.res.Deferred); n > 0 {
		p.res.Waiting = append(p.res.Waiting, Wait{
			Reason: WaitRemediation,
			Message: fmt.Sprintf("remediation deferred: %d remediations in flight of max %d, %d unhealthy instances waiting",
				p.inFlight, *p.in.MaxRemediationsInFlight, n),
		})
	}
	if p.heldBack > 0 {
		p.res.Waiting = append(p.res.Waiting, Wait{
			Reason: WaitBudget,
			Message: fmt.Sprintf("budget exhausted: %d unavailable of max %d, %d still to delete",
				max(0, p.desired-p.available), p.res.MaxUnavailable, p.heldBack),
		})
	}
	if p.freshKeptUnavailable > 0 {
		p.res.Waiting = append(p.res.Waiting, Wait{
			Reason:  WaitAvailable,
			Message: fmt.Sprintf("waiting for instances to become available: %d", p.freshKeptUnavailable),
		})
	}
}
