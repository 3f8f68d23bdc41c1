package aks_test

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/provider/azure/aks"
	"github.com/mpool-dev/mpool/internal/provider/contract"
	"github.com/mpool-dev/mpool/internal/provider/contract/contracttest"
	"github.com/mpool-dev/mpool/internal/scalegroup"
	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/face/azureface"
)

// TestOperationResumesAfterARestart: the PUT mpool starts is reported with
// its poller's resume token; the pool records it as CAPZ's
// longRunningOperationStates (and reads it back); a new provider (a
// restarted manager) given the recorded operation reports it as mpool's,
// one without it as another client's (no token); once the agent pool is at
// rest nothing is reported, and the pool records nothing.
func TestOperationResumesAfterARestart(t *testing.T) {
	ctx := context.Background()
	clk := clocktesting.NewFakeClock(time.Now())
	srv, sg, cp := startSimulatedAKS(t, core.Options{Clock: clk, Seed: 7, DefaultSimulation: &core.Simulation{BootDelay: time.Second}})
	pool := &infrav1.AzureManagedMachinePool{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "resume"},
		Spec: infrav1.AzureManagedMachinePoolSpec{Mode: infrav1.NodePoolModeUser, SKU: "Standard_D2s_v5"}}
	ref, err := aks.Adapter{}.GroupRef(pool, cp)
	if err != nil {
		t.Fatal(err)
	}
	ref.Credentials = ""
	if pool.Annotations == nil {
		pool.Annotations = map[string]string{}
	}
	pool.Annotations[contract.GroupRefAnnotation] = ref.Encode()
	spec := func(n int32) scalegroup.GroupSpec {
		mp := &clusterv1.MachinePool{Spec: clusterv1.MachinePoolSpec{ClusterName: "aks", Replicas: ptr.To(n)}}
		d, err := aks.Adapter{}.Desired(pool, contract.Owner{MachinePool: mp, Version: "v" + azureface.AKSDefaultVersion, InfraCluster: cp})
		if err != nil {
			t.Fatal(err)
		}
		return scalegroup.GroupSpec{Capacity: n, ModelHash: "h", Model: d.Model}
	}
	atRest := func(sg *aks.AgentPools) *scalegroup.Group {
		t.Helper()
		for range 60 {
			g, err := sg.Get(ctx, ref)
			if err != nil {
				t.Fatal(err)
			}
			if g.Operation == nil {
				return g
			}
			clk.Step(time.Second)
		}
		t.Fatal("the agent pool is still busy after 60s")
		return nil
	}
	if _, err := sg.Apply(ctx, ref, spec(1)); err != nil {
		t.Fatal(err)
	}
	atRest(sg)

	g, err := sg.Apply(ctx, ref, spec(2))
	if err != nil {
		t.Fatal(err)
	}
	op := g.Operation
	read := contracttest.RecordsOperation(t, aks.Adapter{}, pool, "the scale-out's PUT", op)
	if f := pool.Status.LongRunningOperationStates; len(f) != 1 || f[0] != (infrav1.Future{Type: "PUT", ServiceName: "agentpools",
		ResourceGroup: azureface.AzureDefaultResourceGroup, Name: ref.Name, Data: op.ResumeToken}) {
		t.Fatalf("longRunningOperationStates %+v", f)
	}

	// A restarted manager: told the recorded operation, it is mpool's.
	restarted := newAgentPools(t, srv)
	g, err = restarted.Get(scalegroup.WithRecordedOperation(ctx, read), ref)
	if err != nil || g.Operation == nil || g.Operation.ResumeToken != op.ResumeToken {
		t.Fatalf("after a restart, with the recorded operation: %+v, %v; want its token", g.Operation, err)
	}
	other := newAgentPools(t, srv)
	if g, err = other.Get(ctx, ref); err != nil || g.Operation == nil || g.Operation.ResumeToken != "" {
		t.Fatalf("after a restart, without the recorded operation: %+v, %v; want another client's operation (no token)", g.Operation, err)
	}

	g = atRest(restarted)
	aks.Adapter{}.WritePool(pool, contract.PoolReport{Observed: true, Operation: g.Operation})
	if f := pool.Status.LongRunningOperationStates; len(f) != 0 {
		t.Fatalf("at rest, longRunningOperationStates %+v", f)
	}
	if view, _ := (aks.Adapter{}).ReadPool(pool); view.Operation != nil {
		t.Fatalf("at rest, ReadPool's operation %+v", view.Operation)
	}
}
