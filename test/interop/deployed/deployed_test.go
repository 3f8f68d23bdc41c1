package deployed

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mpool-dev/mpool/internal/manager"
	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/test/integration/itest"
	"github.com/mpool-dev/mpool/test/interop"
)

// mode is the mode the package runs upstream and mpool in (see the package
// comment).
const mode = manager.ModeProviders

var (
	env *testenv.Env
	up  *interop.Upstream
	// mpoolBin is the mpool binary, built once for the package.
	mpoolBin string
)

func TestMain(m *testing.M) {
	interop.Main(m, &env, &up, mode, func(*testenv.Env) (func(), error) {
		dir, err := os.MkdirTemp("", "mpool-deployed-")
		if err != nil {
			return nil, err
		}
		if mpoolBin, err = buildMpool(dir); err != nil {
			_ = os.RemoveAll(dir)
			return nil, err
		}
		return func() { _ = os.RemoveAll(dir) }, nil
	})
}

const (
	// replicas is the pool's size: enough for a roll of several waves.
	replicas = 5
	// The local sample's strategy at 5 replicas: maxSurge 25% rounds up
	// to 2, maxUnavailable 1.
	maxSurge, maxUnavailable = 2, 1
	// converge bounds every wait for the pool.
	converge = 2 * time.Minute
)

// TestLeaderKilledMidRollout runs two replicas of the manager as the
// overlay deploys them, kills the leader while a version roll is half
// done, and checks that the other replica takes the Lease and finishes the
// roll within the budgets, that no instance is deleted twice and that
// neither replica met a missing permission.
func TestLeaderKilledMidRollout(t *testing.T) {
	if up.Mode != mode {
		t.Fatalf("upstream runs in mode %s, the package in %s", up.Mode, mode)
	}
	d := deployOverlay(t, up.Mode)
	kubeconfig, _ := serviceAccountKubeconfig(t, d)
	leaseID := manager.DefaultOptions().LeaderElectionID

	var seed interop.Seed
	for _, s := range interop.Seeds {
		if s.Name == "local" {
			seed = s
		}
	}
	cloud := seed.Provider.StartCloud(t, env, itest.CloudOptions{BootDelay: 300 * time.Millisecond, BootJitter: 200 * time.Millisecond})
	f := interop.NewFixture(t, env, seed.Provider, cloud)

	dir := t.TempDir()
	if os.Getenv("MPOOL_INTEROP_KEEP") != "" {
		var err error
		if dir, err = os.MkdirTemp("", "mpool-deployed-"); err != nil {
			t.Fatal(err)
		}
		t.Logf("the replicas' logs are kept in %s (MPOOL_INTEROP_KEEP)", dir)
	}
	var rs []*replica
	for _, name := range []string{"a", "b"} {
		rs = append(rs, startReplica(t, mpoolBin, d, kubeconfig, dir, name, newDeleteSpy(t, cloud.URL()),
			"--leader-elect-lease-duration=4s", "--leader-elect-renew-deadline=3s", "--leader-elect-retry-period=500ms"))
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, r := range rs {
				t.Logf("replica %s's log:\n%s", r.name, r.proc.Tail(60))
			}
			t.Logf("the pool's objects:\n%s", interop.Dump(f))
			t.Logf("upstream core's log:\n%s", up.Logs("core", 30))
		}
	})

	// The Lease names its holder <hostname>_<uuid>: the same host name for
	// both processes here, as it would be the Pod's name in a cluster. Each
	// replica says on its metrics endpoint whether it leads.
	var leader, survivor *replica
	testenv.Eventually(t, 30*time.Second, func() error {
		var leading []*replica
		for _, r := range rs {
			ok, err := r.leads(leaseID)
			if err != nil {
				return fmt.Errorf("replica %s's metrics: %w", r.name, err)
			}
			if ok {
				leading = append(leading, r)
			}
		}
		if len(leading) != 1 {
			return fmt.Errorf("%d replicas lead, want 1", len(leading))
		}
		if holder(t, d.Namespace, leaseID) == "" {
			return fmt.Errorf("Lease %s/%s has no holder", d.Namespace, leaseID)
		}
		leader = leading[0]
		return nil
	})
	for _, r := range rs {
		if r != leader {
			survivor = r
		}
	}
	firstHolder := holder(t, d.Namespace, leaseID)
	t.Logf("replica %s leads (Lease holder %s)", leader.name, firstHolder)

	f.ApplySeed(itest.Replicas(replicas))
	f.WaitConverged(replicas, seed.Version, converge)
	interop.CheckPlannedBudgets(t, f, replicas, maxSurge, maxUnavailable)
	if _, n := survivor.spy.counts(); n != 0 {
		t.Errorf("replica %s, not the leader, made %d requests to the cloud", survivor.name, n)
	}

	t.Logf("version %s → %s; the leader is killed half-way", seed.Version, seed.NextVersion)
	before := f.InstanceIDs()
	w := itest.WatchBudgets(f, replicas, maxSurge, maxUnavailable)
	f.SetVersion(seed.NextVersion)
	testenv.Eventually(t, converge, func() error {
		deleted, _ := leader.spy.counts()
		left := 0
		for _, in := range f.Instances() {
			if slices.Contains(before, in.ID) {
				left++
			}
		}
		if len(deleted) == 0 || left < 2 {
			return fmt.Errorf("the leader has deleted %d instances, %d of the %d old ones are left: not half-way yet", len(deleted), left, len(before))
		}
		return nil
	})
	leader.proc.Kill()
	killed, _ := leader.spy.counts()
	t.Logf("killed replica %s after it deleted %v", leader.name, keys(killed))

	testenv.Eventually(t, 30*time.Second, func() error {
		ok, err := survivor.leads(leaseID)
		if err != nil || !ok {
			return fmt.Errorf("replica %s does not lead (%v)", survivor.name, err)
		}
		if h := holder(t, d.Namespace, leaseID); h == "" || h == firstHolder {
			return fmt.Errorf("Lease holder %q, want a new one", h)
		}
		return nil
	})
	f.WaitRolled(before, replicas, seed.NextVersion, converge)
	w.AssertHeld()
	if err := up.Running(); err != nil {
		t.Fatal(err)
	}

	byLeader, _ := leader.spy.counts()
	bySurvivor, _ := survivor.spy.counts()
	if len(bySurvivor) == 0 {
		t.Errorf("replica %s deleted nothing: it did not finish the roll", survivor.name)
	}
	total := map[string]int{}
	for _, m := range []map[string]int{byLeader, bySurvivor} {
		for id, n := range m {
			total[id] += n
		}
	}
	for id, n := range total {
		if n > 1 {
			t.Errorf("instance %s was deleted %d times (by %s %d, by %s %d)", id, n, leader.name, byLeader[id], survivor.name, bySurvivor[id])
		}
	}
	for _, id := range before {
		if total[id] != 1 {
			t.Errorf("old instance %s was deleted %d times, want once", id, total[id])
		}
	}
	t.Logf("deleted by %s (killed): %v; by %s: %v", leader.name, keys(byLeader), survivor.name, keys(bySurvivor))

	f.DeletePoolAndWaitGone(converge)
	for _, r := range rs {
		if lines := r.forbidden(); len(lines) > 0 {
			t.Errorf("replica %s was refused by the API server (missing RBAC?):\n%s", r.name, strings.Join(lines, "\n"))
		}
	}
}

// keys returns the instance IDs of counts, sorted.
func keys(counts map[string]int) []string { return slices.Sorted(maps.Keys(counts)) }
