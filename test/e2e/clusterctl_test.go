package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mpool-dev/mpool/internal/kubeenv"
	"github.com/mpool-dev/mpool/internal/testenv"
)

// TestClusterctlDescribesThePool checks that mpool's management cluster is
// acceptable to upstream tooling: on `mpool up`, the local example pool in
// today's Cluster API (examples/v1beta2/local-machinepool.yaml, the v1beta2
// equivalent of examples/local/machinepool.yaml) becomes Running, and
// `clusterctl describe cluster` of the pinned upstream release exits 0 and
// shows the Cluster, the MachinePool and each of its Machines, Ready and
// Available.
func TestClusterctlDescribesThePool(t *testing.T) {
	bin := buildMpool(t)
	// --empty: the example below is the pool `up` would otherwise create as
	// its sample; here it is applied the way the README's kubectl does.
	up, _ := startUp(t, bin, "--data-dir", t.TempDir(), "--empty")
	up.drain()
	c := up.client(t)
	ctx := context.Background()
	const ns, cluster, pool = "default", "local", "local-mp-0"

	applyManifests(t, c, ns, "../../examples/v1beta2/local-machinepool.yaml")

	mp := &clusterv1.MachinePool{}
	testenv.Eventually(t, 5*time.Minute, func() error {
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: pool}, mp); err != nil {
			return err
		}
		if mp.Status.Phase != string(clusterv1.MachinePoolPhaseRunning) || ptr.Deref(mp.Status.ReadyReplicas, -1) != 3 {
			return fmt.Errorf("MachinePool %s/%s %q, %v ready", ns, pool, mp.Status.Phase, mp.Status.ReadyReplicas)
		}
		return nil
	})

	// The pool's Machines, as the API server has them: the ones it controls.
	var machines []string
	testenv.Eventually(t, time.Minute, func() error {
		list := &clusterv1.MachineList{}
		if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
			return err
		}
		machines = machines[:0]
		var others []string
		for _, m := range list.Items {
			if ref := controllerOf(&m); ref != nil && ref.Kind == "MachinePool" && ref.Name == pool {
				machines = append(machines, m.Name)
			} else {
				others = append(others, fmt.Sprintf("%s (labels %v, owners %v)", m.Name, m.Labels, m.OwnerReferences))
			}
		}
		if len(machines) != 3 {
			return fmt.Errorf("%d Machines controlled by MachinePool %s, want 3; others: %v", len(machines), pool, others)
		}
		return nil
	})

	clusterctl, err := kubeenv.EnsureClusterctl(ctx, testWriter{t})
	if err != nil {
		t.Skipf("clusterctl %s cannot be built here: %v", kubeenv.ClusterctlVersion, err)
	}
	testenv.CheckDescribe(t, clusterctl, up.kubeconfig, ns, cluster, pool,
		func() ([]string, error) { return machines, nil }, "--show-machinesets")
	up.stop(t)
}

func controllerOf(m *clusterv1.Machine) *struct{ Kind, Name string } {
	for _, r := range m.OwnerReferences {
		if ptr.Deref(r.Controller, false) {
			return &struct{ Kind, Name string }{r.Kind, r.Name}
		}
	}
	return nil
}

// testWriter sends progress lines (a clusterctl build) to the test log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
