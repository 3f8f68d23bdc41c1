package interop

import (
	"context"
	"os"
	"testing"
	"time"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mpool-dev/mpool/internal/kubeenv"
	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/test/integration/itest"
)

// CheckDescribe runs `clusterctl describe cluster` of the pinned upstream
// release against the fixture's cluster until it shows the Cluster, the
// MachinePool and each of the pool's Machines (by the pool-name label)
// Ready, Available and up to date (testenv.CheckDescribe).
func CheckDescribe(t *testing.T, f *itest.Fixture, kubeconfig string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	clusterctl, err := kubeenv.EnsureClusterctl(ctx, os.Stderr)
	if err != nil {
		t.Fatalf("building clusterctl %s: %v", kubeenv.ClusterctlVersion, err)
	}
	ns, pool := f.NS, f.Provider.PoolName
	testenv.CheckDescribe(t, clusterctl, kubeconfig, ns, f.Provider.ClusterName, pool, func() ([]string, error) {
		ms := &clusterv1.MachineList{}
		if err := f.Env.Client.List(f.Ctx, ms, client.InNamespace(ns), client.MatchingLabels{clusterv1.MachinePoolNameLabel: pool}); err != nil {
			return nil, err
		}
		names := make([]string, len(ms.Items))
		for i, m := range ms.Items {
			names[i] = m.Name
		}
		return names, nil
	})
}
