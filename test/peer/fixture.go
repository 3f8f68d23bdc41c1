package peer

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mpool-dev/mpool/examples"
	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/face/awsface"
	"github.com/mpool-dev/mpool/sim/server"
	"github.com/mpool-dev/mpool/test/interop"
)

// Names and values of the peer's manifests (testdata).
const (
	ClusterName = "peer"
	PoolName    = "peer-mp-0"
	// Version is the pool's Kubernetes version, one the simulated AWS has
	// a CAPA reference AMI of.
	Version = "v1.31.2"
	// SecurityGroupNode and SecurityGroupLB are the security groups the
	// test writes in the AWSCluster's status, as CAPA's cluster controller
	// would after creating them (CAPA puts both on a pool's instances).
	SecurityGroupNode = "sg-0000000000000node"
	SecurityGroupLB   = "sg-00000000000000lb0"
)

//go:embed testdata/cluster.yaml
var clusterManifest string

//go:embed testdata/machinepool.yaml
var poolManifest string

// GVKs of the kinds the tests read.
var (
	MachinePoolGVK    = schema.GroupVersionKind{Group: "cluster.x-k8s.io", Version: "v1beta2", Kind: "MachinePool"}
	MachineGVK        = schema.GroupVersionKind{Group: "cluster.x-k8s.io", Version: "v1beta2", Kind: "Machine"}
	AWSMachinePoolGVK = schema.GroupVersionKind{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta2", Kind: "AWSMachinePool"}
	AWSMachineGVK     = schema.GroupVersionKind{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta2", Kind: "AWSMachine"}
	AWSClusterGVK     = schema.GroupVersionKind{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta2", Kind: "AWSCluster"}
	KubeadmConfigGVK  = schema.GroupVersionKind{Group: "bootstrap.cluster.x-k8s.io", Version: "v1beta2", Kind: "KubeadmConfig"}
	// AWSMachinePoolMachineGVK is mpool's per-instance kind.
	AWSMachinePoolMachineGVK = schema.GroupVersionKind{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta1", Kind: "AWSMachinePoolMachine"}
)

// AMI is the simulated AWS's CAPA reference AMI of Version.
func AMI() string {
	return awsface.AWSImageID(awsface.AWSDefaultRegion, awsface.AWSImageName(Version))
}

// Fixture is one test's namespace on one system's control plane: the
// peer's Cluster, its control plane stand-in and its externally managed
// AWSCluster (marked ready with the default VPC's network), registered as
// a workload cluster served by that control plane's API server, in the
// package's simulated AWS. The same manifests serve both systems.
type Fixture struct {
	T     testing.TB
	Ctx   context.Context
	Sys   *System
	Env   *testenv.Env
	NS    string
	Cloud *server.Server

	poked time.Time
}

// NewFixture creates the fixture's namespace and cluster on sys's control
// plane. When the test ends it deletes the Nodes of the simulated AWS's
// instances.
func NewFixture(t testing.TB, sys *System, cloud *server.Server) *Fixture {
	t.Helper()
	env := sys.Env
	f := &Fixture{T: t, Ctx: context.Background(), Sys: sys, Env: env, NS: env.NewNamespace(t), Cloud: cloud}
	t.Cleanup(func() {
		env.DeleteNodes(t, func(n *corev1.Node) bool { return strings.HasPrefix(n.Spec.ProviderID, "aws:///") })
	})
	// Before the Cluster: upstream's cluster cache retries a connection
	// only every 30 seconds.
	env.RegisterWorkloadCluster(t, f.NS, ClusterName)
	cp := interop.CreateControlPlane(t, env, f.NS, ClusterName)
	endpoint := env.ControlPlaneEndpoint(t)
	manifest := strings.ReplaceAll(clusterManifest, "VPC_ID", awsface.AWSDefaultVPCID(awsface.AWSDefaultAccountID, awsface.AWSDefaultRegion))
	for _, obj := range f.objects(manifest) {
		if obj.GetKind() == "Cluster" {
			_ = unstructured.SetNestedField(obj.Object, endpoint.Host, "spec", "controlPlaneEndpoint", "host")
			_ = unstructured.SetNestedField(obj.Object, int64(endpoint.Port), "spec", "controlPlaneEndpoint", "port")
			_ = unstructured.SetNestedMap(obj.Object, map[string]any{
				"apiGroup": interop.ControlPlaneGroup, "kind": interop.ControlPlaneKind, "name": cp.GetName(),
			}, "spec", "controlPlaneRef")
		}
		if obj.GetKind() == "AWSCluster" {
			_ = unstructured.SetNestedField(obj.Object, endpoint.Host, "spec", "controlPlaneEndpoint", "host")
			_ = unstructured.SetNestedField(obj.Object, int64(endpoint.Port), "spec", "controlPlaneEndpoint", "port")
		}
		f.Create(obj)
	}
	// As CAPA's cluster controller would once the network is up, or
	// whoever manages it outside CAPA.
	testenv.Eventually(t, 30*time.Second, func() error {
		o := f.Get(AWSClusterGVK, ClusterName)
		if o == nil {
			return fmt.Errorf("AWSCluster %s not found", ClusterName)
		}
		o.Object["status"] = map[string]any{
			"ready": true,
			"networkStatus": map[string]any{
				"securityGroups": map[string]any{
					"node": map[string]any{"id": SecurityGroupNode, "name": ClusterName + "-node"},
					"lb":   map[string]any{"id": SecurityGroupLB, "name": ClusterName + "-lb"},
				},
			},
		}
		if err := env.Client.Status().Update(f.Ctx, o); err != nil {
			return fmt.Errorf("marking AWSCluster %s ready: %w", ClusterName, err)
		}
		return nil
	})
	return f
}

// objects decodes a manifest into objects of the fixture's namespace.
func (f *Fixture) objects(manifest string) []*unstructured.Unstructured {
	f.T.Helper()
	objs, err := examples.Objects([]byte(manifest), f.NS)
	if err != nil {
		f.T.Fatal(err)
	}
	return objs
}

// Create creates obj, failing the test on error.
func (f *Fixture) Create(obj client.Object) {
	f.T.Helper()
	if err := f.Env.Client.Create(f.Ctx, obj); err != nil {
		f.T.Fatalf("creating %s %s: %v", obj.GetObjectKind().GroupVersionKind().Kind, obj.GetName(), err)
	}
}

// Get returns the object of kind gvk named name in the fixture's
// namespace, nil when there is none.
func (f *Fixture) Get(gvk schema.GroupVersionKind, name string) *unstructured.Unstructured {
	f.T.Helper()
	o := &unstructured.Unstructured{}
	o.SetGroupVersionKind(gvk)
	if err := f.Env.Client.Get(f.Ctx, types.NamespacedName{Namespace: f.NS, Name: name}, o); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		f.T.Fatalf("reading %s %s: %v", gvk.Kind, name, err)
	}
	return o
}

// List returns the objects of kind gvk in the fixture's namespace.
func (f *Fixture) List(gvk schema.GroupVersionKind) []unstructured.Unstructured {
	f.T.Helper()
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err := f.Env.Client.List(f.Ctx, l, client.InNamespace(f.NS)); err != nil {
		f.T.Fatalf("listing %s: %v", gvk.Kind, err)
	}
	return l.Items
}

// CreatePool creates the pool (MachinePool, AWSMachinePool, KubeadmConfig)
// with n replicas and instance type instanceType, its maxSize raised to n
// when the manifest's is smaller.
func (f *Fixture) CreatePool(n int, instanceType string) {
	f.T.Helper()
	for _, obj := range f.objects(strings.ReplaceAll(poolManifest, "AMI_ID", AMI())) {
		switch obj.GetKind() {
		case "MachinePool":
			_ = unstructured.SetNestedField(obj.Object, int64(n), "spec", "replicas")
		case "AWSMachinePool":
			_ = unstructured.SetNestedField(obj.Object, instanceType, "spec", "awsLaunchTemplate", "instanceType")
			// The group's maxSize bounds the pool (both systems refuse
			// more replicas than it).
			if maxSize, _, _ := unstructured.NestedFieldNoCopy(obj.Object, "spec", "maxSize"); float64(n) > asFloat(maxSize) {
				_ = unstructured.SetNestedField(obj.Object, int64(n), "spec", "maxSize")
			}
		}
		f.Create(obj)
	}
}

// Patch merge-patches the object of kind gvk named name with patch.
func (f *Fixture) Patch(gvk schema.GroupVersionKind, name string, patch map[string]any) {
	f.T.Helper()
	o := &unstructured.Unstructured{}
	o.SetGroupVersionKind(gvk)
	o.SetNamespace(f.NS)
	o.SetName(name)
	testenv.Eventually(f.T, 30*time.Second, func() error {
		return f.Env.Client.Patch(f.Ctx, o, client.RawPatch(types.MergePatchType, mustJSON(patch)))
	})
}

// Scale sets the MachinePool's replicas.
func (f *Fixture) Scale(n int) {
	f.T.Helper()
	f.Patch(MachinePoolGVK, PoolName, map[string]any{"spec": map[string]any{"replicas": n}})
}

// SetInstanceType changes the AWSMachinePool's launch template's instance
// type.
func (f *Fixture) SetInstanceType(instanceType string) {
	f.T.Helper()
	f.Patch(AWSMachinePoolGVK, PoolName, map[string]any{"spec": map[string]any{"awsLaunchTemplate": map[string]any{"instanceType": instanceType}}})
}

// GroupKey is the core's key of the pool's Auto Scaling group (as the
// system names it).
func (f *Fixture) GroupKey() core.GroupKey {
	return awsface.AWSGroupKey(awsface.AWSDefaultAccountID, awsface.AWSDefaultRegion, f.Sys.GroupName(f.NS, PoolName))
}

// Group returns the pool's Auto Scaling group as the simulated cloud's
// core has it (not counted), nil when it does not exist.
func (f *Fixture) Group() *core.Group {
	k := f.GroupKey()
	g, err := f.Cloud.Cloud().Scope(k.Face, k.Scope).GetGroup(k.Name)
	if err != nil {
		return nil
	}
	return g
}

// Instances returns the group's instances that are not being deleted.
func (f *Fixture) Instances() []core.Instance { return f.Group().Live() }

// ReadyNodes returns the Ready Nodes of the group's instances.
func (f *Fixture) ReadyNodes() ([]corev1.Node, error) {
	ids := map[string]bool{}
	for _, in := range f.Instances() {
		ids[in.ProviderID] = true
	}
	nodes := &corev1.NodeList{}
	if err := f.Env.Client.List(f.Ctx, nodes); err != nil {
		return nil, err
	}
	var out []corev1.Node
	for _, n := range nodes.Items {
		if !ids[n.Spec.ProviderID] {
			continue
		}
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				out = append(out, n)
			}
		}
	}
	return out, nil
}

// Running returns nil once the MachinePool is Running with n ready
// replicas of n, the group has n instances, all of instanceType and each
// with a Ready Node, the AWSMachinePool lists their providerIDs, and
// there are n per-instance objects (the system's InstanceGVK, owned by its
// InstanceOwner), each of one of the n Machines, each with its Node; else
// it says what differs.
func (f *Fixture) Running(n int, instanceType string) error {
	if err := f.Serving(n, instanceType); err != nil {
		return err
	}
	return f.settled(n)
}

// Serving returns nil once the MachinePool is Running with n ready
// replicas of n and the group has n instances, all of instanceType and
// each with a Ready Node: what the pool's users see, whatever the state of
// the controllers' bookkeeping (Machines, per-instance objects).
func (f *Fixture) Serving(n int, instanceType string) error {
	mp := f.Get(MachinePoolGVK, PoolName)
	if mp == nil {
		return fmt.Errorf("MachinePool %s not found", PoolName)
	}
	phase, _, _ := unstructured.NestedString(mp.Object, "status", "phase")
	ready, _, _ := unstructured.NestedInt64(mp.Object, "status", "readyReplicas")
	replicas, _, _ := unstructured.NestedInt64(mp.Object, "status", "replicas")
	if phase != "Running" || ready != int64(n) || replicas != int64(n) {
		return fmt.Errorf("MachinePool is %q with %d/%d ready replicas, want Running with %d", phase, ready, replicas, n)
	}
	instances := f.Instances()
	if len(instances) != n {
		return fmt.Errorf("the group has %d instances, want %d", len(instances), n)
	}
	for _, in := range instances {
		if got := in.Metadata["instance_type"]; got != instanceType {
			return fmt.Errorf("instance %s is a %s, want %s", in.ID, got, instanceType)
		}
	}
	nodes, err := f.ReadyNodes()
	if err != nil {
		return err
	}
	if len(nodes) != n {
		return fmt.Errorf("%d of the group's %d instances have a Ready Node", len(nodes), n)
	}
	return nil
}

// settled returns nil once the AWSMachinePool lists n providerIDs and
// there are n per-instance objects and n Machines, each with its Node.
func (f *Fixture) settled(n int) error {
	amp := f.Get(AWSMachinePoolGVK, PoolName)
	if amp == nil {
		return fmt.Errorf("AWSMachinePool %s not found", PoolName)
	}
	ids, _, _ := unstructured.NestedStringSlice(amp.Object, "spec", "providerIDList")
	if len(ids) != n {
		return fmt.Errorf("the AWSMachinePool lists %d providerIDs, want %d", len(ids), n)
	}
	// The system's per-instance object (CAPA's AWSMachine, mpool's
	// AWSMachinePoolMachine) per instance, owned as the system owns them,
	// each a Machine's with its Node: the bookkeeping of the controllers
	// has settled.
	kind := f.Sys.InstanceGVK.Kind
	infraMachines := map[string]bool{}
	for _, m := range f.List(f.Sys.InstanceGVK) {
		owned := false
		for _, ref := range m.GetOwnerReferences() {
			owned = owned || ref.Kind == f.Sys.InstanceOwner
		}
		if !owned {
			return fmt.Errorf("%s %s has no owner %s yet", kind, m.GetName(), f.Sys.InstanceOwner)
		}
		infraMachines[m.GetName()] = true
	}
	if len(infraMachines) != n {
		return fmt.Errorf("%d %ss, want %d", len(infraMachines), kind, n)
	}
	machines := f.List(MachineGVK)
	if len(machines) != n {
		return fmt.Errorf("%d Machines, want %d", len(machines), n)
	}
	for _, m := range machines {
		infra, _, _ := unstructured.NestedString(m.Object, "spec", "infrastructureRef", "name")
		node, _, _ := unstructured.NestedString(m.Object, "status", "nodeRef", "name")
		if !infraMachines[infra] || node == "" {
			return fmt.Errorf("Machine %s: %s %q, Node %q", m.GetName(), kind, infra, node)
		}
	}
	return nil
}

// Gone returns nil once the pool's objects, its Machines and AWSMachines,
// and its Auto Scaling group are gone.
func (f *Fixture) Gone() error {
	for _, gvk := range []schema.GroupVersionKind{MachinePoolGVK, AWSMachinePoolGVK} {
		if f.Get(gvk, PoolName) != nil {
			return fmt.Errorf("%s %s is still there", gvk.Kind, PoolName)
		}
	}
	for _, gvk := range []schema.GroupVersionKind{MachineGVK, f.Sys.InstanceGVK} {
		if l := f.List(gvk); len(l) > 0 {
			return fmt.Errorf("%d %ss are left", len(l), gvk.Kind)
		}
	}
	if g := f.Group(); g != nil {
		return fmt.Errorf("the Auto Scaling group %s is still there with %d instances", g.Name, len(g.Instances))
	}
	return nil
}

// Delete deletes the MachinePool (the rest goes with it: Cluster API
// deletes its infrastructure and bootstrap objects).
func (f *Fixture) Delete() {
	f.T.Helper()
	mp := &unstructured.Unstructured{}
	mp.SetGroupVersionKind(MachinePoolGVK)
	mp.SetNamespace(f.NS)
	mp.SetName(PoolName)
	if err := f.Env.Client.Delete(f.Ctx, mp); err != nil {
		f.T.Fatalf("deleting MachinePool %s: %v", PoolName, err)
	}
}

// Identity is CAPA's default AWSClusterControllerIdentity, allowing every
// namespace: the controller's own credentials (its environment).
func Identity() *unstructured.Unstructured {
	o := &unstructured.Unstructured{}
	o.SetGroupVersionKind(schema.GroupVersionKind{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta2", Kind: "AWSClusterControllerIdentity"})
	o.SetName("default")
	o.Object["spec"] = map[string]any{"allowedNamespaces": map[string]any{}}
	return o
}

// asFloat is a decoded manifest's number (int64 or float64), 0 for
// anything else.
func asFloat(v any) float64 {
	switch v := v.(type) {
	case int64:
		return float64(v)
	case float64:
		return v
	}
	return 0
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
