package fieldowners_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/yaml"

	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/mpool-dev/mpool/config/crd"
	"github.com/mpool-dev/mpool/internal/conversion"
	"github.com/mpool-dev/mpool/internal/fieldowners"
	"github.com/mpool-dev/mpool/internal/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { os.Exit(testenv.Run(m, &env)) }

const v1beta1Pool = `
apiVersion: cluster.x-k8s.io/v1beta1
kind: MachinePool
metadata:
  name: pool
  labels: {team: a}
spec:
  clusterName: c
  replicas: 3
  template:
    spec:
      bootstrap:
        configRef: {apiVersion: bootstrap.cluster.x-k8s.io/v1beta1, kind: KubeadmConfig, name: pool}
      clusterName: c
      infrastructureRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: LocalMachinePool, name: pool}
      version: v1.37.1
`

const v1beta1Config = `
apiVersion: bootstrap.cluster.x-k8s.io/v1beta1
kind: KubeadmConfig
metadata:
  name: pool
spec:
  joinConfiguration:
    nodeRegistration:
      kubeletExtraArgs: {cloud-provider: aws}
`

// user is the field manager of the manifests' client: kubectl's.
const user = "kubectl-client-side-apply"

func upgrader(t *testing.T) *fieldowners.Upgrader {
	t.Helper()
	reg, err := conversion.Registry(env.Scheme)
	if err != nil {
		t.Fatal(err)
	}
	crds, err := crd.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	u, err := fieldowners.New(env.Scheme, reg, crds, clusterv1.GroupVersion.WithKind("MachinePool"), bootstrapv1.GroupVersion.WithKind("KubeadmConfig"))
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// create creates manifest's object in a new namespace as kubectl would
// and returns its key.
func create(t *testing.T, manifest string) client.ObjectKey {
	t.Helper()
	in := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(manifest), &in.Object); err != nil {
		t.Fatal(err)
	}
	in.SetNamespace(env.NewNamespace(t))
	if err := env.Client.Create(context.Background(), in, client.FieldOwner(user)); err != nil {
		t.Fatalf("creating %s: %v", in.GetKind(), err)
	}
	return client.ObjectKeyFromObject(in)
}

// entry returns obj's managed fields entry of manager, and its fields.
func entry(t *testing.T, obj client.Object, manager string) (metav1.ManagedFieldsEntry, *fieldpath.Set) {
	t.Helper()
	for _, e := range obj.GetManagedFields() {
		if e.Manager == manager {
			set := &fieldpath.Set{}
			if err := set.FromJSON(bytes.NewReader(e.FieldsV1.Raw)); err != nil {
				t.Fatal(err)
			}
			return e, set
		}
	}
	t.Fatalf("no managed fields entry of %s in %v", manager, obj.GetManagedFields())
	return metav1.ManagedFieldsEntry{}, nil
}

// TestMovedOwnersMakeWritesConvertNothing creates the v1beta1 MachinePool
// and KubeadmConfig of the seeds' manifests, as kubectl does, and checks
// that a status write of the controllers (v1beta2) costs two conversion
// webhook calls before the user's managed fields entry is moved and none
// after; that the moved entry names the same fields in v1beta2 (the
// references' apiGroup, a kubelet argument's list item); and that ownership
// kept its meaning: a server-side apply of another manager still conflicts
// with the user's fields.
func TestMovedOwnersMakeWritesConvertNothing(t *testing.T) {
	ctx := context.Background()
	u := upgrader(t)
	for _, tc := range []struct {
		name     string
		manifest string
		obj      func() client.Object
		// status is a status write of the controllers.
		status string
		// want are fields the user's moved entry must hold, in v1beta2.
		want []fieldpath.Path
		// apply is a server-side apply by another manager of a field
		// the user set, which must conflict.
		apply string
	}{{
		name: "MachinePool", manifest: v1beta1Pool,
		obj:    func() client.Object { return &clusterv1.MachinePool{} },
		status: `{"status":{"replicas":1}}`,
		want: []fieldpath.Path{
			fieldpath.MakePathOrDie("spec", "replicas"),
			fieldpath.MakePathOrDie("spec", "template", "spec", "bootstrap", "configRef", "apiGroup"),
			fieldpath.MakePathOrDie("spec", "template", "spec", "infrastructureRef", "apiGroup"),
			fieldpath.MakePathOrDie("spec", "template", "spec", "infrastructureRef", "name"),
			fieldpath.MakePathOrDie("metadata", "labels", "team"),
		},
		apply: `{"apiVersion":"cluster.x-k8s.io/v1beta2","kind":"MachinePool","metadata":{"name":"pool"},"spec":{"replicas":5}}`,
	}, {
		name: "KubeadmConfig", manifest: v1beta1Config,
		obj:    func() client.Object { return &bootstrapv1.KubeadmConfig{} },
		status: `{"status":{"initialization":{"dataSecretCreated":false}}}`,
		want: []fieldpath.Path{
			fieldpath.MakePathOrDie("spec", "joinConfiguration", "nodeRegistration", "kubeletExtraArgs",
				fieldpath.KeyByFields("name", "cloud-provider", "value", "aws"), "value"),
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			// conversions returns how many times a status write of the
			// controllers to key's object converts an object of its
			// namespace.
			conversions := func(key client.ObjectKey) int64 {
				t.Helper()
				env.ControlPlane.TrackConversionsIn(key.Namespace)
				before := settled(t, key.Namespace)
				obj := tc.obj()
				obj.SetNamespace(key.Namespace)
				obj.SetName(key.Name)
				if err := env.Client.Status().Patch(ctx, obj, client.RawPatch(types.MergePatchType, []byte(tc.status)), client.FieldOwner("mpool")); err != nil {
					t.Fatalf("writing the status: %v", err)
				}
				return settled(t, key.Namespace) - before
			}

			// As it is: the user's entry is of v1beta1.
			asIs := create(t, tc.manifest)
			before := conversions(asIs)
			if before < 2 {
				t.Errorf("a status write to the object as created converted %d times, want at least 2 (the test no longer measures what it should)", before)
			}

			key := create(t, tc.manifest)
			obj := tc.obj()
			if err := env.Client.Get(ctx, key, obj); err != nil {
				t.Fatal(err)
			}
			if !u.Outdated(obj) {
				t.Fatalf("Outdated: false for %v", obj.GetManagedFields())
			}
			wrote, err := u.Ensure(ctx, env.Client, obj)
			if err != nil || !wrote {
				t.Fatalf("Ensure: %v, %v", wrote, err)
			}
			if u.Outdated(obj) {
				t.Errorf("still outdated after Ensure: %v", obj.GetManagedFields())
			}
			e, set := entry(t, obj, user)
			if !strings.HasSuffix(e.APIVersion, "/v1beta2") {
				t.Errorf("the user's entry is of %s", e.APIVersion)
			}
			if e.Operation != metav1.ManagedFieldsOperationUpdate {
				t.Errorf("the user's entry's operation is %s", e.Operation)
			}
			for _, p := range tc.want {
				if !set.Has(p) {
					t.Errorf("the user's moved entry has no %s: %s", p, e.FieldsV1.Raw)
				}
			}
			status := "status"
			if !set.WithPrefix(fieldpath.PathElement{FieldName: &status}).Empty() {
				t.Errorf("the user wrote no status, but the moved entry owns some: %s", e.FieldsV1.Raw)
			}
			// The field manager's are gone (the old and the new object, at
			// least); what is left is not the managed fields': the API
			// server's watch cache of v1beta1 converts each write once.
			if after := conversions(key); after > 1 || after > before-2 {
				t.Errorf("a status write after the move converted %d times, as created %d: want at most 1, and at least 2 fewer", after, before)
			}
			if wrote, err := u.Ensure(ctx, env.Client, obj); err != nil || wrote {
				t.Errorf("a second Ensure: %v, %v (want nothing to do)", wrote, err)
			}

			if tc.apply == "" {
				return
			}
			applied := &unstructured.Unstructured{}
			if err := json.Unmarshal([]byte(tc.apply), &applied.Object); err != nil {
				t.Fatal(err)
			}
			applied.SetNamespace(key.Namespace)
			err = env.Client.Patch(ctx, applied, client.Apply, client.FieldOwner("someone-else"))
			if !apierrors.IsConflict(err) || !strings.Contains(err.Error(), user) {
				t.Errorf("another manager's apply of the user's field: %v, want a conflict with %s", err, user)
			}
		})
	}
}

// settled returns the count of conversions in ns once it has not moved for
// a while: the API server converts a write for its watch caches after it
// answers it.
func settled(t *testing.T, ns string) int64 {
	t.Helper()
	const still, limit = 400 * time.Millisecond, 15 * time.Second
	n, since := env.ControlPlane.ConversionsIn(ns), time.Now()
	for start := time.Now(); time.Since(start) < limit; {
		time.Sleep(20 * time.Millisecond)
		if m := env.ControlPlane.ConversionsIn(ns); m != n {
			n, since = m, time.Now()
		} else if time.Since(since) >= still {
			return n
		}
	}
	t.Fatalf("conversions in %s still moving after %s", ns, limit)
	return 0
}

// TestOnlyOlderUpdateEntriesMove checks what Outdated leaves alone: an
// object created in v1beta2, and an Apply entry of v1beta1.
func TestOnlyOlderUpdateEntriesMove(t *testing.T) {
	u := upgrader(t)
	hub := &clusterv1.MachinePool{}
	hub.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: user, Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "cluster.x-k8s.io/v1beta2", FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{}}`)}}})
	if u.Outdated(hub) {
		t.Error("an object with only v1beta2 entries is outdated")
	}
	hub.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: user, Operation: metav1.ManagedFieldsOperationApply, APIVersion: "cluster.x-k8s.io/v1beta1", FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{}}`)}}})
	if u.Outdated(hub) {
		t.Error("an Apply entry of v1beta1 is moved")
	}
	other := &unstructured.Unstructured{}
	other.SetGroupVersionKind(schema.GroupVersionKind{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta1", Kind: "LocalMachinePool"})
	other.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: user, Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "infrastructure.cluster.x-k8s.io/v1beta0", FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{}`)}}})
	if u.Outdated(other) {
		t.Error("a kind the Upgrader was not given is outdated")
	}
	// An unstructured object is moved only when it is of the hub version:
	// another version's content is not typed by the hub's schema.
	older := []metav1.ManagedFieldsEntry{{Manager: user, Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "cluster.x-k8s.io/v1beta1", FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{}}`)}}}
	for version, want := range map[string]bool{"v1beta2": true, "v1beta1": false} {
		pool := &unstructured.Unstructured{}
		pool.SetGroupVersionKind(clusterv1.GroupVersion.WithKind("MachinePool").GroupKind().WithVersion(version))
		pool.SetManagedFields(older)
		if got := u.Outdated(pool); got != want {
			t.Errorf("an unstructured MachinePool of %s with a v1beta1 entry: outdated %v, want %v", version, got, want)
		}
	}
}
