package cli

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/provider/contract"
)

// TestInstancesInOneVocabulary reads the same healthy instance of every
// provider through its provider's reader: describe shows one state,
// Running, with the cloud's own word in CloudState, and its zone. Before
// the readers, the CLI guessed the fields: the instance was "Succeeded" on
// Azure, "-" on AWS and "running" on EKS, and Azure's zone was "-".
func TestInstancesInOneVocabulary(t *testing.T) {
	meta := metav1.ObjectMeta{Name: "pool-0", Labels: map[string]string{contract.ZoneLabel: "zone-1"},
		Annotations: map[string]string{clusterv1.DeleteMachineAnnotation: "yes"}}
	node := &corev1.ObjectReference{Name: "node-0"}
	tests := []struct {
		kind  string
		obj   contract.InstanceObject
		cloud string
	}{
		{"LocalMachinePool", &infrav1.LocalMachinePoolMachine{ObjectMeta: meta,
			Spec:   infrav1.LocalMachinePoolMachineSpec{InstanceID: "0", ProviderID: "p://0"},
			Status: infrav1.LocalMachinePoolMachineStatus{State: infrav1.LocalInstanceRunning, Zone: "zone-1", Ready: true, Version: "v1.37.1", NodeRef: node}}, ""},
		{"AzureMachinePool", &infrav1.AzureMachinePoolMachine{ObjectMeta: meta,
			Spec:   infrav1.AzureMachinePoolMachineSpec{InstanceID: "0", ProviderID: "p://0"},
			Status: infrav1.AzureMachinePoolMachineStatus{ProvisioningState: ptr.To(infrav1.Succeeded), Ready: true, Version: "v1.37.1", NodeRef: node}}, "Succeeded"},
		{"AWSMachinePool", &infrav1.AWSMachinePoolMachine{ObjectMeta: meta,
			Spec:   infrav1.AWSMachinePoolMachineSpec{InstanceID: "0", ProviderID: "p://0"},
			Status: infrav1.AWSMachinePoolMachineStatus{LifecycleState: "InService", AvailabilityZone: "zone-1", Ready: true, Version: "v1.37.1", NodeRef: node}}, "InService"},
		{"AWSManagedMachinePool", &infrav1.AWSManagedMachinePoolMachine{ObjectMeta: meta,
			Spec:   infrav1.AWSManagedMachinePoolMachineSpec{InstanceID: "0", ProviderID: "p://0"},
			Status: infrav1.AWSManagedMachinePoolMachineStatus{State: "running", AvailabilityZone: "zone-1", Ready: true, Version: "v1.37.1", NodeRef: node}}, "running"},
	}
	for _, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) {
			a := adapterOf(clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: tt.kind})
			if a == nil {
				t.Fatalf("no provider serves %s", tt.kind)
			}
			got := instanceFromView(tt.obj, a.ReadInstance(tt.obj))
			got.Created = nil
			want := InstanceView{
				Name: "pool-0", InstanceID: "0", ProviderID: "p://0", State: "Running", CloudState: tt.cloud, Zone: "zone-1",
				UpToDate: ptr.To(false), Ready: true, Version: "v1.37.1", MarkedForDeletion: true, Node: &NodeView{Name: "node-0"},
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got  %s\nwant %s", spew(got), spew(want))
			}
			if text := stateText(got); text != "Running" && text != "Running ("+tt.cloud+")" {
				t.Errorf("state column %q", text)
			}
		})
	}
}

func spew(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestReplicaCounts: the counts are the MachinePool's v1beta2 status
// (unreported ones 0); up to date is counted from the live instances only
// until the MachinePool reports status.upToDateReplicas.
func TestReplicaCounts(t *testing.T) {
	yes, no := true, false
	instances := []InstanceView{
		{Name: "a", State: "Running", UpToDate: &yes},
		{Name: "b", State: "Running", UpToDate: &no},
		{Name: "c", State: "Running", UpToDate: &yes, Deleting: true},
		{Name: "d", State: string(contract.InstanceFailed), UpToDate: &yes},
		{Name: "e", State: "Booting", UpToDate: &yes},
	}
	tests := []struct {
		name   string
		status clusterv1.MachinePoolStatus
		want   ReplicaCounts
	}{
		{
			name:   "nothing reported yet",
			status: clusterv1.MachinePoolStatus{},
			want:   ReplicaCounts{Desired: 3, UpToDate: 2},
		},
		{
			name: "up to date counted from the instances",
			status: clusterv1.MachinePoolStatus{
				Replicas: ptr.To[int32](4), ReadyReplicas: ptr.To[int32](3), AvailableReplicas: ptr.To[int32](1),
			},
			want: ReplicaCounts{Desired: 3, Current: 4, Ready: 3, Available: 1, UpToDate: 2},
		},
		{
			name: "up to date as the MachinePool reports it",
			status: clusterv1.MachinePoolStatus{
				Replicas: ptr.To[int32](4), ReadyReplicas: ptr.To[int32](3), AvailableReplicas: ptr.To[int32](1), UpToDateReplicas: ptr.To[int32](1),
			},
			want: ReplicaCounts{Desired: 3, Current: 4, Ready: 3, Available: 1, UpToDate: 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mp := &clusterv1.MachinePool{Spec: clusterv1.MachinePoolSpec{Replicas: ptr.To[int32](3)}, Status: tt.status}
			if got := replicaCounts(&poolState{pool: mp, instances: instances}); got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestContractStatus reads readiness and failures from providers of either
// Cluster API contract: v1beta1 (status.ready, status.failureReason) and
// v1beta2 (status.initialization, status.deprecated.v1beta1), at the
// version the kind's CustomResourceDefinition's contract label names.
func TestContractStatus(t *testing.T) {
	t.Run("bootstrap config", func(t *testing.T) {
		for _, tt := range []struct {
			name   string
			status map[string]any
			want   bool
		}{
			{name: "v1beta2 created", status: map[string]any{"initialization": map[string]any{"dataSecretCreated": true}, "dataSecretName": "s"}, want: true},
			{name: "v1beta2 not created", status: map[string]any{"initialization": map[string]any{"dataSecretCreated": false}}},
			{name: "v1beta1 ready", status: map[string]any{"ready": true, "dataSecretName": "s"}, want: true},
			{name: "nothing reported", status: map[string]any{}},
		} {
			s := &poolState{pool: &clusterv1.MachinePool{}}
			s.pool.Namespace = "ns"
			s.pool.Spec.Template.Spec.Bootstrap.ConfigRef = clusterv1.ContractVersionedObjectReference{
				APIGroup: testGroup, Kind: "TestConfig", Name: "config",
			}
			if err := s.readBootstrap(context.Background(), contractClient(t, "TestConfig", tt.status)); err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
			if b := s.bootstrap; !b.Found || b.Ready != tt.want {
				t.Errorf("%s: got %s, want ready %v", tt.name, spew(b), tt.want)
			}
		}
	})
	t.Run("infrastructure pool", func(t *testing.T) {
		for _, tt := range []struct {
			name                   string
			status                 map[string]any
			ready                  bool
			failureReason, message string
		}{
			{
				name: "v1beta2 provisioned, failed",
				status: map[string]any{
					"initialization": map[string]any{"provisioned": true},
					"deprecated":     map[string]any{"v1beta1": map[string]any{"failureReason": "InvalidConfiguration", "failureMessage": "bad zone"}},
				},
				ready: true, failureReason: "InvalidConfiguration", message: "bad zone",
			},
			{
				name:   "v1beta1 ready, failed",
				status: map[string]any{"ready": true, "failureReason": "UpdateError", "failureMessage": "quota"},
				ready:  true, failureReason: "UpdateError", message: "quota",
			},
			{name: "nothing reported", status: map[string]any{}},
		} {
			s := &poolState{pool: &clusterv1.MachinePool{}}
			s.pool.Namespace = "ns"
			s.pool.Spec.Template.Spec.InfrastructureRef = clusterv1.ContractVersionedObjectReference{
				APIGroup: testGroup, Kind: "TestMachinePool", Name: "pool",
			}
			if err := s.readInfra(context.Background(), contractClient(t, "TestMachinePool", tt.status)); err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
			v := s.infra.view
			if !v.Found || v.APIVersion != testGroup+"/v1beta2" || v.Ready != tt.ready || v.FailureReason != tt.failureReason || v.FailureMessage != tt.message {
				t.Errorf("%s: got %s", tt.name, spew(v))
			}
		}
	})
}

// testGroup is the API group of the kinds contractClient serves.
const testGroup = "test.cluster.x-k8s.io"

// contractClient returns a fake client holding one object of kind (named
// "config" or "pool", in namespace ns) with status, served in versions
// v1beta1 (the API server's preferred one) and v1beta2, and kind's
// CustomResourceDefinition, whose contract label names v1beta2: the object
// is read at v1beta2.
func contractClient(t *testing.T, kind string, status map[string]any) client.Client {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	mapper := meta.NewDefaultRESTMapper([]schema.GroupVersion{{Group: testGroup, Version: "v1beta1"}})
	for _, v := range []string{"v1beta1", "v1beta2"} {
		mapper.Add(schema.GroupVersionKind{Group: testGroup, Version: v, Kind: kind}, meta.RESTScopeNamespace)
	}
	mapper.Add(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"), meta.RESTScopeRoot)
	plural := strings.ToLower(kind) + "s"
	crd := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{
		Name:   plural + "." + testGroup,
		Labels: map[string]string{clusterv1.GroupVersion.Group + "/v1beta2": "v1beta2"},
	}}
	name := "pool"
	if kind == "TestConfig" {
		name = "config"
	}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": testGroup + "/v1beta2",
		"kind":       kind,
		"metadata":   map[string]any{"name": name, "namespace": "ns"},
		"status":     status,
	}}
	return fake.NewClientBuilder().WithScheme(scheme).WithRESTMapper(mapper).WithObjects(crd, obj).Build()
}

// TestRefGVK: a referenced kind is read at the version its
// CustomResourceDefinition's contract label names; a user who may not read
// CustomResourceDefinitions gets the preferred version, and a kind the API
// server does not serve is a NoMatch error.
func TestRefGVK(t *testing.T) {
	ctx := context.Background()
	ref := clusterv1.ContractVersionedObjectReference{APIGroup: testGroup, Kind: "TestMachinePool", Name: "pool"}
	c := contractClient(t, "TestMachinePool", map[string]any{})
	if gvk, err := refGVK(ctx, c, ref); err != nil || gvk.Version != "v1beta2" {
		t.Errorf("with the CRD: %v, %v; want v1beta2", gvk, err)
	}
	forbidden := interceptor.NewClient(c.(client.WithWatch), interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if _, ok := obj.(*metav1.PartialObjectMetadata); ok {
				return apierrors.NewForbidden(apiextensionsv1.Resource("customresourcedefinitions"), key.Name, errors.New("no"))
			}
			return c.Get(ctx, key, obj, opts...)
		},
	})
	if gvk, err := refGVK(ctx, forbidden, ref); err != nil || gvk.Version != "v1beta1" {
		t.Errorf("CRDs forbidden: %v, %v; want the preferred v1beta1", gvk, err)
	}
	if _, err := refGVK(ctx, c, clusterv1.ContractVersionedObjectReference{APIGroup: testGroup, Kind: "Unserved", Name: "x"}); !meta.IsNoMatchError(err) {
		t.Errorf("an unserved kind: %v, want a NoMatch error", err)
	}
}
