package rollout

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"k8s.io/utils/ptr"
)

// TestSupersedeReplacesEachInstanceOnce: a newer change during a rollout
// retargets it. The pool rolls from model 1 to model 2; when the first
// instances of model 2 exist, the model changes to 3. From then on no
// instance of model 2 is created (the applier creates on the current
// model only), the instances still on model 1 go straight to model 3, the instances of model 2 are replaced within the
// budgets, and no instance of model 3 is ever deleted: exactly desired
// instances of model 3 are created. The planner keeps no state, so this
// holds because stale means "not the current model" whatever the model
// was, and booting stale instances go first (they cost no budget).
func TestSupersedeReplacesEachInstanceOnce(t *testing.T) {
	for k, st := range simStrategies {
		for _, policy := range []DeletePolicy{DeletePolicyOldest, DeletePolicyNewest, DeletePolicyRandom} {
			for _, minReady := range []int32{0, 10} {
				name := fmt.Sprintf("surge=%s,unavailable=%s,%s,minReady=%d", st[0], st[1], policy, minReady)
				t.Run(name, func(t *testing.T) {
					s := strategy(st[0], st[1])
					s.DeletePolicy, s.MinReadySeconds = policy, minReady
					superseded(t, uint64(k), s)
				})
			}
		}
	}
}

// superseded runs one pool of six through the two changes (see
// TestSupersedeReplacesEachInstanceOnce).
func superseded(t *testing.T, seed uint64, s Strategy) {
	g := &simGroup{t: t, seed: seed, rng: rand.New(rand.NewPCG(seed, 0x5eed)), now: t0, model: 1, desired: 6, strategy: s}
	for range g.desired {
		i := g.create()
		i.State, i.ReadySince = StateRunning, ptr.To(g.now.Add(-time.Hour))
	}
	g.changeModel()
	// Roll until the first instance of model 2 exists, and some of model 1
	// are still there to be superseded.
	for step := 0; ; step++ {
		if step > 50 {
			g.fail("no instance of model 2 after %d steps", step)
		}
		g.tick()
		g.reconcile()
		if g.count("model-2") > 0 {
			break
		}
	}
	if g.count("model-1") == 0 {
		g.fail("every instance of model 1 went in the first step: nothing left to supersede")
	}
	created2 := g.nextID
	g.changeModel()
	for step := 1; ; step++ {
		if step > g.convergenceBound() {
			g.fail("not converged on model 3 within %d steps: %+v", step, g.last.Waiting)
		}
		g.tick()
		g.reconcile()
		for _, i := range g.insts {
			if i.ModelHash == "model-3" && i.State == StateDeleting {
				g.fail("%s of model 3 deleted: an instance was replaced twice", i.ID)
			}
		}
		if g.last.Done {
			break
		}
	}
	g.assertConverged()
	if made := g.nextID - created2; made != int(g.desired) {
		g.fail("%d instances created after the change to model 3, want exactly %d", made, g.desired)
	}
}

// count returns how many live instances run model.
func (g *simGroup) count(model string) int {
	n := 0
	for _, i := range g.live() {
		if i.ModelHash == model {
			n++
		}
	}
	return n
}
