package peer

import (
	"fmt"
	"testing"
	"time"

	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/sim/face/awsface"
)

// converge bounds each step of the scenario: CAPA rechecks the group every
// resync (30 seconds here) and on changes of the pool's objects, and
// requeues a terminating instance's AWSMachine every minute.
const converge = 5 * time.Minute

// Instance types of the scenario: the pool's, and the one it is rolled to.
const (
	instanceType = "m5.large"
	rolledType   = "m5.xlarge"
)

// phases are the wall times of the scenario's steps, and what was seen
// during the roll.
type phases struct {
	Up, Roll, ScaleIn, Delete time.Duration
	// MinReady is the lowest count of Ready schedulable Nodes of the
	// pool's instances seen during the roll (sampled every poll, 50 ms
	// apart at most).
	MinReady int
}

// runScenario runs the pool's life on the fixture's system: created with n replicas to
// Running with n Ready Nodes, its instance type changed and rolled (every
// instance replaced), scaled in to n/2, deleted (its objects and group
// gone, and no launch template left).
//
// Each step is bounded by converge for every 50 instances (at least once):
// at N = 100 the peer took 93 s to Running and 201 s to roll, and its time
// grows faster than N.
func runScenario(t testing.TB, f *Fixture, n int) phases {
	t.Helper()
	bound := converge * time.Duration(max(1, n/50))
	wait := func(what string, cond func() error) time.Duration {
		t.Helper()
		start := time.Now()
		testenv.Eventually(t, bound, func() error {
			if err := f.Sys.Running(); err != nil {
				t.Fatal(err)
			}
			return cond()
		})
		d := time.Since(start)
		t.Logf("%s: %s in %s", f.Sys.Name, what, d.Round(100*time.Millisecond))
		return d
	}
	var p phases
	f.CreatePool(n, instanceType)
	p.Up = wait(fmt.Sprintf("Running with %d Ready Nodes", n), func() error { return f.Running(n, instanceType) })

	before := map[string]bool{}
	for _, in := range f.Instances() {
		before[in.ID] = true
	}
	f.SetInstanceType(rolledType)
	p.MinReady = n
	p.Roll = wait("the instance type rolled", func() error {
		if ready, err := f.ReadyNodes(); err == nil {
			schedulable := 0
			for _, node := range ready {
				if !node.Spec.Unschedulable {
					schedulable++
				}
			}
			p.MinReady = min(p.MinReady, schedulable)
		}
		for _, in := range f.Instances() {
			if before[in.ID] {
				return fmt.Errorf("instance %s of before the change is still there", in.ID)
			}
		}
		return f.Running(n, rolledType)
	})

	t.Logf("%s: at least %d of %d Nodes Ready and schedulable throughout the roll", f.Sys.Name, p.MinReady, n)
	f.Scale(n / 2)
	p.ScaleIn = wait(fmt.Sprintf("scaled in to %d", n/2), func() error { return f.Running(n/2, rolledType) })

	f.Delete()
	p.Delete = wait("deleted", func() error {
		if err := f.Gone(); err != nil {
			return err
		}
		if lts := launchTemplates(t); len(lts) > 0 {
			return fmt.Errorf("launch templates left: %v", lts)
		}
		return nil
	})
	return p
}

// TestCAPAMachinePool runs CAPA's AWSMachinePool controller, unmodified,
// through a pool's life on the simulated AWS (runScenario with 3
// instances): Running with 3 Ready Nodes (a launch template, an Auto
// Scaling group, an AWSMachine and a Machine per instance), an instance
// type change rolled through an instance refresh, a scale-in to 1, and
// deletion. Every request CAPA sends is one the face knows and answers as
// AWS does.
func TestCAPAMachinePool(t *testing.T) {
	f := NewFixture(t, peerSys, cloud)
	logOnFailure(t, f)
	refreshes := ops(awsface.OpAWSStartInstanceRefresh)
	runScenario(t, f, 3)
	if got := ops(awsface.OpAWSStartInstanceRefresh) - refreshes; got < 1 {
		t.Errorf("%d instance refreshes started for the change, want at least 1", got)
	}
	if s := refusedRequests(); s != "" {
		t.Errorf("the simulated AWS refused or did not know requests CAPA sent:\n%s", s)
	}
}

// TestMpoolMachinePool runs mpool's manager through the same life of the
// same pool, on the same simulated AWS (runScenario with 3 instances), on
// a control plane of its own: the scenario's manifests are the peer's,
// which mpool's v1beta2 kinds accept as they are. Every request mpool
// sends is one the face knows and answers.
func TestMpoolMachinePool(t *testing.T) {
	f := NewFixture(t, mpoolSys, cloud)
	logOnFailure(t, f)
	runScenario(t, f, 3)
	if s := refusedRequests(); s != "" {
		t.Errorf("the simulated AWS refused or did not know requests mpool sent:\n%s", s)
	}
}

// logOnFailure logs, when t ends, the simulated AWS's requests, and the
// tails of the system's managers' logs if t failed.
func logOnFailure(t *testing.T, f *Fixture) {
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(f.Sys.Logs())
		}
		t.Logf("the simulated AWS's requests:\n%s", requestSummary())
	})
}
