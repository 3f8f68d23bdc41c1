package local

import (
	"context"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/mpool-dev/mpool/test/integration/itest"

	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// TestV1beta1OwnersMoveWithTheControllersFirstWrites creates a pool from
// v1beta1 manifests, as the seeds' are, and follows its MachinePool and
// KubeadmConfig through a watch: the client's managed fields entry of
// v1beta1 moves to v1beta2 (package fieldowners) in the very write that
// adds the pool's finalizer and the one that gives the config its owner,
// not in a write of its own, and nothing reads either object at v1beta1
// from the API server to move it.
func TestV1beta1OwnersMoveWithTheControllersFirstWrites(t *testing.T) {
	f, _ := start(t, cloudOptions{}, managerOptions{})

	type seen struct{ outdated, done bool }
	var mu sync.Mutex
	events := map[string][]seen{}
	record := func(kind string, obj client.Object, done bool) {
		outdated := false
		for _, e := range obj.GetManagedFields() {
			if e.Operation == metav1.ManagedFieldsOperationUpdate && strings.HasSuffix(e.APIVersion, "/v1beta1") {
				outdated = true
			}
		}
		mu.Lock()
		events[kind] = append(events[kind], seen{outdated, done})
		mu.Unlock()
	}
	wc, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	for _, list := range []client.ObjectList{&clusterv1.MachinePoolList{}, &bootstrapv1.KubeadmConfigList{}} {
		w, err := wc.Watch(context.Background(), list, client.InNamespace(f.NS))
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			for ev := range w.ResultChan() {
				if ev.Type != watch.Added && ev.Type != watch.Modified {
					continue
				}
				switch o := ev.Object.(type) {
				case *clusterv1.MachinePool:
					record("MachinePool", o, controllerutil.ContainsFinalizer(o, clusterv1.MachinePoolFinalizer))
				case *bootstrapv1.KubeadmConfig:
					record("KubeadmConfig", o, metav1.GetControllerOf(o) != nil)
				}
			}
		}()
		t.Cleanup(func() { w.Stop(); <-done })
	}

	v1beta1Reads := func() float64 {
		var n float64
		for _, s := range itest.APIServerMetric(t, env.Config, "apiserver_request_total") {
			if s.Labels["verb"] == "GET" && s.Labels["version"] == "v1beta1" &&
				(s.Labels["resource"] == "machinepools" || s.Labels["resource"] == "kubeadmconfigs") {
				n += s.Value
			}
		}
		return n
	}
	readsBefore := v1beta1Reads()

	objs := f.poolObjects(clusterName, poolName, poolSpec{replicas: 2})
	f.Create(objs[0]) // the LocalMachinePool
	for _, manifest := range []map[string]any{{
		"apiVersion": "bootstrap.cluster.x-k8s.io/v1beta1", "kind": "KubeadmConfig",
		"metadata": map[string]any{"name": poolName, "namespace": f.NS},
		"spec": map[string]any{"joinConfiguration": map[string]any{"nodeRegistration": map[string]any{
			"name":             `{{ ds.meta_data["local_hostname"] }}`,
			"kubeletExtraArgs": map[string]any{"node-labels": "mpool.dev/pool=" + poolName},
		}}},
	}, {
		"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "MachinePool",
		"metadata": map[string]any{"name": poolName, "namespace": f.NS},
		"spec": map[string]any{"clusterName": clusterName, "replicas": int64(2), "template": map[string]any{"spec": map[string]any{
			"clusterName": clusterName, "version": v1,
			"bootstrap":         map[string]any{"configRef": map[string]any{"apiVersion": "bootstrap.cluster.x-k8s.io/v1beta1", "kind": "KubeadmConfig", "name": poolName}},
			"infrastructureRef": map[string]any{"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "LocalMachinePool", "name": poolName},
		}}},
	}} {
		u := &unstructured.Unstructured{Object: manifest}
		if err := env.Client.Create(f.Ctx, u); err != nil {
			t.Fatalf("creating %s: %v", u.GetKind(), err)
		}
	}
	f.waitConverged(2, v1, "ubuntu-2404", converge)

	for _, gvk := range []schema.GroupVersionKind{clusterv1.GroupVersion.WithKind("MachinePool"), bootstrapv1.GroupVersion.WithKind("KubeadmConfig")} {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		if err := env.Client.Get(f.Ctx, f.Key(poolName), u); err != nil {
			t.Fatal(err)
		}
		owned := false
		for _, e := range u.GetManagedFields() {
			if strings.HasSuffix(e.APIVersion, "/v1beta1") {
				t.Errorf("%s: a managed fields entry of %s is left: %s %s", gvk.Kind, e.APIVersion, e.Manager, e.Operation)
			}
			owned = owned || (e.FieldsV1 != nil && strings.Contains(string(e.FieldsV1.Raw), `"f:spec"`))
		}
		if !owned {
			t.Errorf("%s: no entry owns the spec the manifest set: %v", gvk.Kind, u.GetManagedFields())
		}
	}

	mu.Lock()
	defer mu.Unlock()
	for _, kind := range []string{"MachinePool", "KubeadmConfig"} {
		evs := events[kind]
		if len(evs) < 2 || !evs[0].outdated {
			t.Errorf("%s: watched %+v, want it created with an entry of v1beta1 and written after", kind, evs)
			continue
		}
		for i, e := range evs {
			// Outdated exactly until the controller's first write: moved
			// with it, never on its own before or after it.
			if e.outdated == e.done {
				t.Errorf("%s: event %d of %d outdated=%v with the controller's write done=%v (all: %+v)", kind, i, len(evs), e.outdated, e.done, evs)
				break
			}
		}
	}
	if n := v1beta1Reads() - readsBefore; n != 0 {
		t.Errorf("%v reads of MachinePools or KubeadmConfigs at v1beta1 reached the API server, want none", n)
	}
}
