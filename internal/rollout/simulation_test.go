package rollout

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"k8s.io/utils/ptr"
)

// The simulation steps the planner against a simulated scale group, in the
// spirit of Cluster API's Test_RollingUpdateSequences: every step runs a
// seeded random selection of events in a seeded random order (the clock moves
// and instances boot late, instances fail, get marked, the model and the
// desired replicas change, the pool is paused, the planner reconciles). After
// every reconcile it asserts the planner's invariants; once the chaos stops the
// group must converge within a bound.

const (
	simSeeds       = 200
	simChaosSteps  = 80
	simMaxDesired  = 8
	simMaxBoot     = 60 * time.Second
	simMaxDrain    = 30 * time.Second
	simQuietTick   = 5 * time.Second
	simFailPercent = 10 // of new instances that fail to boot, during chaos
)

// simStrategies are the budgets the simulation rolls with; the seeds pick one.
var simStrategies = [][2]string{
	{"1", "0"}, {"25%", "1"}, {"0", "1"}, {"", ""}, {"2", "0"},
	{"50%", "50%"}, {"0", "10%"}, {"1", "2"}, {"100%", "0"},
}

// simInstance is an instance of the simulated group with its fate.
type simInstance struct {
	Instance
	bootAt   time.Time // when it becomes Ready, or fails
	willFail bool
	goneAt   time.Time // when a deleting instance disappears
}

// simGroup is the simulated cloud group plus the pool's spec.
type simGroup struct {
	t        *testing.T
	seed     uint64
	rng      *rand.Rand
	now      time.Time
	nextID   int
	model    int
	desired  int32
	strategy Strategy
	skip     bool
	paused   bool
	chaos    bool
	insts    []*simInstance
	trace    []string // recent events, printed when an assertion fails
	last     Result
}

func TestRollingUpdateSequences(t *testing.T) {
	var worst, total int
	for seed := range uint64(simSeeds) {
		t.Run(fmt.Sprintf("seed-%d", seed), func(t *testing.T) {
			steps := runSequence(t, seed)
			worst, total = max(worst, steps), total+steps
		})
	}
	t.Logf("converged after chaos in at most %d quiet steps (mean %d)", worst, total/simSeeds)
}

// runSequence runs one seeded sequence and returns how many quiet steps
// convergence took.
func runSequence(t *testing.T, seed uint64) int {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	s := strategy(simStrategies[seed%uint64(len(simStrategies))][0], simStrategies[seed%uint64(len(simStrategies))][1])
	s.DeletePolicy = []DeletePolicy{DeletePolicyOldest, DeletePolicyNewest, DeletePolicyRandom}[rng.IntN(3)]
	s.MinReadySeconds = []int32{0, 10, 30}[rng.IntN(3)]
	g := &simGroup{
		t: t, seed: seed, rng: rng, now: t0, model: 1, chaos: true,
		desired:  int32(1 + rng.IntN(simMaxDesired)),
		strategy: s,
		skip:     rng.IntN(4) == 0,
	}
	// Start from a running pool of some size, already on the current model.
	for range rng.IntN(int(g.desired) + 3) {
		i := g.create()
		i.State, i.ReadySince = StateRunning, ptr.To(g.now.Add(-time.Hour))
	}
	g.record("start: desired=%d surge=%v unavailable=%v policy=%s minReady=%d skip=%v instances=%d",
		g.desired, s.MaxSurge, s.MaxUnavailable, s.DeletePolicy, s.MinReadySeconds, g.skip, len(g.insts))

	events := []struct {
		percent int
		run     func()
	}{
		{100, g.tick},
		{60, g.reconcile},
		{4, g.failOne},
		{4, g.markOne},
		{3, g.changeModel},
		{4, g.changeDesired},
		{2, g.togglePause},
	}
	for range simChaosSteps {
		for _, k := range rng.Perm(len(events)) {
			if rng.IntN(100) < events[k].percent {
				events[k].run()
			}
		}
	}

	// Quiet: no more failures or changes; the clock and the planner only.
	g.chaos, g.paused = false, false
	g.record("quiet")
	bound := g.convergenceBound()
	for step := 1; step <= bound; step++ {
		g.tick()
		g.reconcile()
		if g.last.Done {
			g.assertConverged()
			return step
		}
	}
	g.fail("not converged within %d quiet steps: %+v", bound, g.last.Waiting)
	return bound
}

// convergenceBound is how many quiet steps convergence may take. Each
// replacement round lasts at most a boot plus minReadySeconds plus a step;
// with either budget positive at least one instance is replaced per round;
// at most every live instance and every desired one needs a round; and the
// last victims need a drain.
func (g *simGroup) convergenceBound() int {
	perRound := int((simMaxBoot+time.Duration(g.strategy.MinReadySeconds)*time.Second)/simQuietTick) + 2
	rounds := len(g.insts) + int(g.desired) + 1
	return rounds*perRound + int(simMaxDrain/simQuietTick) + 2
}

// tick moves the clock; instances boot (late) or fail, drained ones vanish.
func (g *simGroup) tick() {
	if g.chaos {
		g.now = g.now.Add(time.Duration(1+g.rng.IntN(10)) * time.Second)
	} else {
		g.now = g.now.Add(simQuietTick)
	}
	kept := g.insts[:0]
	for _, i := range g.insts {
		switch {
		case i.State == StatePending && !g.now.Before(i.bootAt) && i.willFail:
			i.State = StateFailed
			g.record("%s failed to boot", i.ID)
		case i.State == StatePending && !g.now.Before(i.bootAt):
			i.State, i.ReadySince = StateRunning, ptr.To(i.bootAt)
		case i.State == StateDeleting && !g.now.Before(i.goneAt):
			g.record("%s gone", i.ID)
			continue
		}
		kept = append(kept, i)
	}
	g.insts = kept
}

// failOne breaks a random live instance, as a cloud or a kernel might.
func (g *simGroup) failOne() {
	if i := g.randomLive(); i != nil {
		i.State, i.ReadySince = StateFailed, nil
		g.record("%s failed", i.ID)
	}
}

// markOne puts the delete-machine mark on a random live instance.
func (g *simGroup) markOne() {
	if i := g.randomLive(); i != nil && !i.MarkedForDeletion {
		i.MarkedForDeletion = true
		g.record("%s marked", i.ID)
	}
}

func (g *simGroup) changeModel() {
	g.model++
	g.record("model -> %d", g.model)
}

func (g *simGroup) changeDesired() {
	g.desired = int32(g.rng.IntN(simMaxDesired + 1))
	g.record("desired -> %d", g.desired)
}

func (g *simGroup) togglePause() {
	g.paused = !g.paused
	g.record("paused -> %v", g.paused)
}

// reconcile plans from the current observation, checks the plan, applies it
// the way the infra pool engine does, and checks the group afterwards.
func (g *simGroup) reconcile() {
	in := g.observe()
	res, err := Plan(in)
	if err != nil {
		g.fail("Plan: %v", err)
	}
	g.last = res
	if errs := checkInvariants(in, res); len(errs) > 0 {
		g.fail("invariants broken:\n  %s\ninput: %s", strings.Join(errs, "\n  "), describeInput(in))
	}
	created := g.apply(res)
	g.record("plan: target=%d delete=%v created=%d waiting=%v", res.TargetCapacity, victims(res.Delete), created, waitReasons(res.Waiting))

	live := int64(len(g.live()))
	if live != int64(res.TargetCapacity) {
		g.fail("after apply %d live instances, target %d", live, res.TargetCapacity)
	}
	if !g.paused {
		if limit := int64(g.desired) + int64(res.MaxSurge); live > limit {
			g.fail("capacity %d exceeds desired %d + maxSurge %d", live, g.desired, res.MaxSurge)
		}
	}
}

// apply marks victims deleting (drain, then delete) and creates instances on
// the current model up to the target capacity. It returns how many it created.
func (g *simGroup) apply(res Result) int {
	byID := make(map[string]*simInstance, len(g.insts))
	for _, i := range g.insts {
		byID[i.ID] = i
	}
	for _, v := range res.Delete {
		i := byID[v.ID]
		if i.State != StateDeleting { // a restarted drain keeps its schedule
			i.State = StateDeleting
			i.goneAt = g.now.Add(time.Duration(g.rng.Int64N(int64(simMaxDrain))))
		}
	}
	created := 0
	for live := len(g.live()); live < int(res.TargetCapacity); live++ {
		g.create()
		created++
	}
	return created
}

// create adds a booting instance on the current model.
func (g *simGroup) create() *simInstance {
	g.nextID++
	i := &simInstance{
		Instance: Instance{
			ID:        fmt.Sprintf("vm-%04d", g.nextID),
			Zone:      fmt.Sprintf("zone-%d", g.nextID%3),
			CreatedAt: g.now,
			ModelHash: g.modelHash(),
			State:     StatePending,
		},
		bootAt:   g.now.Add(time.Duration(g.rng.Int64N(int64(simMaxBoot)))),
		willFail: g.chaos && g.rng.IntN(100) < simFailPercent,
	}
	g.insts = append(g.insts, i)
	return i
}

// observe builds the planner's input from the group, in the group's order.
func (g *simGroup) observe() Input {
	in := Input{
		Desired:                 g.desired,
		Strategy:                g.strategy,
		ModelHash:               g.modelHash(),
		SkipModelReconciliation: g.skip,
		Paused:                  g.paused,
		Now:                     g.now,
		RandSeed:                int64(g.seed),
		Instances:               make([]Instance, 0, len(g.insts)),
	}
	for _, i := range g.insts {
		in.Instances = append(in.Instances, i.Instance)
	}
	return in
}

// assertConverged checks the end state Done promises.
func (g *simGroup) assertConverged() {
	live := g.live()
	if len(live) != len(g.insts) || int32(len(live)) != g.desired {
		g.fail("done with %d live of %d instances, desired %d", len(live), len(g.insts), g.desired)
	}
	for _, i := range live {
		if !isAvailable(&i.Instance, g.now, g.strategy.MinReadySeconds) || i.MarkedForDeletion {
			g.fail("done but %s is not available or is marked", i.ID)
		}
		if !g.skip && i.ModelHash != g.modelHash() {
			g.fail("done but %s runs %s, not %s", i.ID, i.ModelHash, g.modelHash())
		}
	}
	// Converged is a fixed point: planning again changes nothing.
	res, err := Plan(g.observe())
	if err != nil || len(res.Delete) > 0 || res.TargetCapacity != g.desired || !res.Done {
		g.fail("replanning a converged group: err=%v delete=%v target=%d done=%v", err, victims(res.Delete), res.TargetCapacity, res.Done)
	}
}

func (g *simGroup) modelHash() string { return fmt.Sprintf("model-%d", g.model) }

func (g *simGroup) live() []*simInstance {
	var out []*simInstance
	for _, i := range g.insts {
		if i.State != StateFailed && i.State != StateDeleting {
			out = append(out, i)
		}
	}
	return out
}

func (g *simGroup) randomLive() *simInstance {
	live := g.live()
	if len(live) == 0 {
		return nil
	}
	return live[g.rng.IntN(len(live))]
}

// record keeps the last events for failure messages.
func (g *simGroup) record(format string, args ...any) {
	const keep = 40
	if len(g.trace) == keep {
		g.trace = g.trace[1:]
	}
	g.trace = append(g.trace, fmt.Sprintf("%s %s", g.now.Sub(t0), fmt.Sprintf(format, args...)))
}

func (g *simGroup) fail(format string, args ...any) {
	g.t.Helper()
	g.t.Fatalf("seed %d: %s\nrecent events:\n  %s", g.seed, fmt.Sprintf(format, args...), strings.Join(g.trace, "\n  "))
}
