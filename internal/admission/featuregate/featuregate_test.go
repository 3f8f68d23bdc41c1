package featuregate

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/mpool-dev/mpool/internal/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { os.Exit(testenv.Run(m, &env)) }

func pool(ns, name string) *clusterv1.MachinePool {
	return &clusterv1.MachinePool{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: clusterv1.MachinePoolSpec{
			ClusterName: "c1",
			Replicas:    ptr.To[int32](1),
			Template: clusterv1.MachineTemplateSpec{Spec: clusterv1.MachineSpec{
				ClusterName:       "c1",
				Bootstrap:         clusterv1.Bootstrap{DataSecretName: ptr.To("")},
				InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "LocalMachinePool", Name: "x"},
			}},
		},
	}
}

func TestGateDisabledRefusesMachinePools(t *testing.T) {
	ctx := context.Background()
	ns := env.NewNamespace(t)

	// Twice: Ensure is idempotent.
	for range 2 {
		if err := Ensure(ctx, env.Client, false); err != nil {
			t.Fatalf("Ensure(disabled): %v", err)
		}
	}
	// The API server loads policies asynchronously: poll until refused.
	i := 0
	testenv.Eventually(t, 30*time.Second, func() error {
		i++
		err := env.Client.Create(ctx, pool(ns, fmt.Sprintf("refused-%d", i)))
		if err == nil {
			return fmt.Errorf("create accepted")
		}
		if !strings.Contains(err.Error(), Message) {
			t.Fatalf("refused with %v, want the gate message", err)
		}
		return nil
	})

	// Other kinds are not affected.
	if err := env.Client.Create(ctx, &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c1"}, Spec: clusterv1.ClusterSpec{Paused: ptr.To(false)}}); err != nil {
		t.Fatalf("creating a Cluster with the gate off: %v", err)
	}

	for range 2 {
		if err := Ensure(ctx, env.Client, true); err != nil {
			t.Fatalf("Ensure(enabled): %v", err)
		}
	}
	testenv.Eventually(t, 30*time.Second, func() error {
		i++
		return env.Client.Create(ctx, pool(ns, fmt.Sprintf("accepted-%d", i)))
	})
}
