package interop

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/yaml"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/cli"
	"github.com/mpool-dev/mpool/internal/manager"
	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/test/integration/itest"
)

// converge bounds every wait for a pool to settle.
const converge = 3 * time.Minute

// Seed is one pool example run beside upstream: a provider, the example's
// replicas and version, a version to roll to, the budgets its strategy
// gives the roll, and how the example is changed before it is applied
// (nil: unchanged).
type Seed struct {
	Name        string
	Provider    *itest.Provider
	Replicas    int
	Version     string
	NextVersion string
	// MaxSurge and MaxUnavailable are the example's strategy resolved
	// against Replicas, as the engine resolves it (rollout.ResolveBudgets:
	// a surge percentage rounds up, an unavailable one down), worked out
	// by hand from the example's fields. RunSeeds checks that `mpool
	// rollout plan` reports the same and holds the roll to them, watched
	// from outside (itest.WatchBudgets).
	MaxSurge, MaxUnavailable int
	Mutate                   func(*unstructured.Unstructured)
	// Remediate runs a MachineHealthCheck on the pool beside upstream (its
	// own controller marks the Machine of an instance whose kubelet
	// stopped; mpool's engine, the Machine's remediating owner, drains and
	// replaces that instance).
	Remediate bool
}

// LocalSample is the local sample (examples/local) as the Local provider.
var LocalSample = func() *itest.Provider {
	p := *itest.Local
	p.ClusterName, p.PoolName = "local", "local-mp-0"
	p.ClusterManifest = []string{"examples", "local", "cluster.yaml"}
	p.SeedManifest = []string{"examples", "local", "machinepool.yaml"}
	return &p
}()

// capaTemplate is examples/capa/machinepool.yaml, CAPA's own machinepool
// flavor template's pool written in CAPA's v1beta2, for the AWS provider
// with examples/aws/cluster.yaml's Cluster.
var capaTemplate = func() *itest.Provider {
	p := *itest.AWS
	p.SeedManifest = []string{"examples", "capa", "machinepool.yaml"}
	return &p
}()

// Seeds are the examples every mode runs: the local sample, seed 000's
// Azure example (Uniform, and Flexible at a version CAPZ allows it), seed
// 004's AWS example, and CAPA v2.13's own machinepool template (its
// AWSMachinePool in infrastructure.cluster.x-k8s.io/v1beta2), each applied
// unchanged but for Flexible and the AWS example's version.
var Seeds = []Seed{
	// LocalMachinePool spec.strategy.rollingUpdate: maxSurge 25% of 3
	// rounds up to 1, maxUnavailable 1.
	{Name: "local", Provider: LocalSample, Replicas: 3, Version: "v1.37.1", NextVersion: "v1.37.2", MaxSurge: 1, MaxUnavailable: 1},
	// AzureMachinePool spec.strategy.rollingUpdate: maxSurge 25% of 2
	// rounds up to 1, maxUnavailable 1 (the same for Flexible).
	{Name: "azure-uniform", Provider: itest.Azure, Replicas: 2, Version: "v1.22.0", NextVersion: "v1.23.1", MaxSurge: 1, MaxUnavailable: 1},
	{Name: "azure-flexible", Provider: itest.Azure, Replicas: 2, Version: "v1.30.4", NextVersion: "v1.31.0", MaxSurge: 1, MaxUnavailable: 1, Mutate: func(obj *unstructured.Unstructured) {
		switch obj.GetKind() {
		case "AzureMachinePool":
			_ = unstructured.SetNestedField(obj.Object, "Flexible", "spec", "orchestrationMode")
		case "MachinePool":
			_ = unstructured.SetNestedField(obj.Object, "v1.30.4", "spec", "template", "spec", "version")
		}
	}},
	// Upstream's kubeadm bootstrap provider refuses versions below v1.22.0
	// ("the bootstrap provider for kubeadm doesn't support Kubernetes
	// version lower than v1.22.0"), seed 004's v1.16.8 among them; mpool's
	// own accepts it. Beside upstream the example runs at a version it takes.
	// (one the simulated AWS publishes an AMI for).
	// The AWSMachinePool sets no refreshPreferences: instance refresh's
	// defaults, minHealthyPercentage 90 (maxUnavailable 10% of 2 rounds
	// down to 0) and maxHealthyPercentage 100 (maxSurge 0%); with both
	// zero, one instance at a time is taken down first, as AWS does:
	// maxSurge 0, maxUnavailable 1.
	// It also runs a MachineHealthCheck: upstream's controller evaluates
	// Machines only once the Cluster's InfrastructureReady is True, which
	// upstream core never reports for a Cluster without an
	// infrastructureRef (the local sample's); the AWSCluster is marked
	// ready as CAPA would.
	{Name: "aws", Provider: itest.AWS, Replicas: 2, Version: "v1.31.2", NextVersion: "v1.32.1", MaxSurge: 0, MaxUnavailable: 1, Remediate: true, Mutate: func(obj *unstructured.Unstructured) {
		if obj.GetKind() == "MachinePool" {
			_ = unstructured.SetNestedField(obj.Object, "v1.31.2", "spec", "template", "spec", "version")
		}
	}},
	// CAPA's template sets no refreshPreferences either: the same budgets.
	{Name: "capa-v1beta2", Provider: capaTemplate, Replicas: 2, Version: "v1.31.2", NextVersion: "v1.32.1", MaxSurge: 0, MaxUnavailable: 1},
}

// RunSeeds runs each of Seeds as a subtest beside upstream: the example
// becomes a Running pool; it scales up and down; a version change rolls
// every instance; deleting one pool Machine replaces exactly that instance;
// where the seed asks, a MachineHealthCheck's remediation replaces an
// instance whose kubelet stopped; deleting the MachinePool leaves nothing
// in the cloud or the cluster.
func RunSeeds(t *testing.T, env *testenv.Env, up *Upstream) {
	for _, s := range Seeds {
		t.Run(s.Name, func(t *testing.T) {
			runSeed(t, env, up, s)
		})
	}
}

func runSeed(t *testing.T, env *testenv.Env, up *Upstream, s Seed) {
	cloud := s.Provider.StartCloud(t, env, itest.CloudOptions{BootDelay: 300 * time.Millisecond, BootJitter: 200 * time.Millisecond})
	f := NewFixture(t, env, s.Provider, cloud)
	// What mpool's engine was blocked on, if anything, read before the
	// manager stops (cleanups run last first) and printed last.
	var engine string
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the pool's objects:\n%s", Dump(f))
			t.Logf("upstream core's log:\n%s", up.Logs("core", 40))
			t.Logf("upstream kubeadm bootstrap's log:\n%s", up.Logs("kubeadm", 20))
			// Last: a failure's output is read from its end.
			ns := f.NS + "/"
			t.Logf("mpool's last reconciles of namespace %s:\n%s", f.NS, ManagerLog.Last(5, func(l string) bool {
				return strings.Contains(l, ns) && strings.Contains(l, `"Reconciled"`)
			}))
			t.Logf("mpool's log for namespace %s, but reconciles and API warnings:\n%s", f.NS, ManagerLog.Last(40, func(l string) bool {
				return strings.Contains(l, ns) && !strings.Contains(l, `"Reconciled"`) && !strings.Contains(l, "warning_handler.go")
			}))
			t.Logf("mpool's engine reconciles running when the test failed:\n%s", engine)
		}
	})
	f.StartManager(func(o *manager.Options) { o.Mode = up.Mode })
	t.Cleanup(func() {
		if t.Failed() {
			engine = testenv.Goroutines("infrapool.(*Engine).Reconcile", 5)
		}
	})
	f.ApplySeed(s.Mutate)
	f.WaitConverged(s.Replicas, s.Version, converge)
	checkMachines(t, f)
	CheckDescribe(t, f, up.Kubeconfig())

	t.Log("scale up by 2, then down to 1")
	f.Scale(int32(s.Replicas + 2))
	f.WaitConverged(s.Replicas+2, s.Version, converge)
	f.Scale(1)
	f.WaitConverged(1, s.Version, converge)
	f.Scale(int32(s.Replicas))
	f.WaitConverged(s.Replicas, s.Version, converge)

	t.Logf("version %s → %s rolls every instance within maxSurge %d and maxUnavailable %d", s.Version, s.NextVersion, s.MaxSurge, s.MaxUnavailable)
	CheckPlannedBudgets(t, f, s.Replicas, s.MaxSurge, s.MaxUnavailable)
	before := f.InstanceIDs()
	w := itest.WatchBudgets(f, s.Replicas, s.MaxSurge, s.MaxUnavailable)
	f.SetVersion(s.NextVersion)
	f.WaitRolled(before, s.Replicas, s.NextVersion, converge)
	w.AssertHeld()
	if err := up.Running(); err != nil {
		t.Fatal(err)
	}

	t.Log("deleting one pool Machine replaces exactly that instance")
	victim, infra := poolMachine(t, f)
	rest := slices.DeleteFunc(f.InstanceIDs(), func(id string) bool { return id == infra })
	if err := env.Client.Delete(f.Ctx, victim); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, converge, func() error {
		m := &clusterv1.Machine{}
		if err := env.Client.Get(f.Ctx, client.ObjectKeyFromObject(victim), m); err == nil {
			// Upstream's Machine controller says where its deletion is.
			c := conditions.Get(m, clusterv1.MachineDeletingCondition)
			if c == nil {
				c = &metav1.Condition{}
			}
			return fmt.Errorf("deleted Machine %s is still there: Deleting %s %s %q, finalizers %v", victim.Name, c.Status, c.Reason, c.Message, m.Finalizers)
		} else if !apierrors.IsNotFound(err) {
			return err
		}
		ids := f.InstanceIDs()
		for _, id := range rest {
			if !slices.Contains(ids, id) {
				return fmt.Errorf("instance %s, not the deleted Machine's, is gone", id)
			}
		}
		return f.Converged(s.Replicas, s.NextVersion)
	})

	if s.Remediate {
		t.Log("upstream's MachineHealthCheck marks the Machine of an instance whose kubelet stopped; mpool's engine replaces it")
		f.CheckStoppedKubeletRemediated(s.Replicas, s.NextVersion, converge)
	}

	f.DeletePoolAndWaitGone(converge)
}

// CheckPlannedBudgets fails the test unless `mpool rollout plan`
// (cli.PlanRollout) reports, for the fixture's pool, desired replicas and
// the budgets maxSurge and maxUnavailable the test expects.
func CheckPlannedBudgets(t *testing.T, f *itest.Fixture, desired, maxSurge, maxUnavailable int) {
	t.Helper()
	v, err := cli.PlanRollout(f.Ctx, f.Env.Client, f.NS, f.Provider.PoolName, cli.PlanOptions{Now: time.Now()})
	if err != nil {
		t.Fatalf("mpool rollout plan: %v", err)
	}
	if int(v.Desired) != desired || int(v.MaxSurge) != maxSurge || int(v.MaxUnavailable) != maxUnavailable {
		t.Fatalf("mpool rollout plan reports desired %d, maxSurge %d, maxUnavailable %d (from %s); the test expects %d, %d, %d",
			v.Desired, v.MaxSurge, v.MaxUnavailable, v.BudgetFrom, desired, maxSurge, maxUnavailable)
	}
}

// checkMachines checks the pool Machines upstream's MachinePool controller
// made: one per per-instance object, controlled by the MachinePool, named
// and referring to it, labelled with the pool's and cluster's names.
func checkMachines(t *testing.T, f *itest.Fixture) {
	t.Helper()
	// Upstream's Machine controller sets a Machine's nodeRef on its own
	// reconcile, after the per-instance object reports the Node that the
	// convergence waited for: wait for it, bounded.
	testenv.Eventually(t, converge, func() error {
		ms := &clusterv1.MachineList{}
		if err := f.Env.Client.List(f.Ctx, ms, client.InNamespace(f.NS)); err != nil {
			return err
		}
		var errs []error
		for _, m := range ms.Items {
			ref := m.Spec.InfrastructureRef
			owner := metav1.GetControllerOf(&m)
			switch {
			case ref.Kind != f.Provider.MachineKind() || ref.Name != m.Name:
				errs = append(errs, fmt.Errorf("Machine %s refers to %s %s, want its own %s", m.Name, ref.Kind, ref.Name, f.Provider.MachineKind()))
			case owner == nil || owner.Kind != "MachinePool" || owner.Name != f.Provider.PoolName:
				errs = append(errs, fmt.Errorf("Machine %s is controlled by %+v, want MachinePool %s", m.Name, owner, f.Provider.PoolName))
			case m.Labels[clusterv1.MachinePoolNameLabel] != f.Provider.PoolName || m.Labels[clusterv1.ClusterNameLabel] != f.Provider.ClusterName:
				errs = append(errs, fmt.Errorf("Machine %s labels %v", m.Name, m.Labels))
			case !m.Status.NodeRef.IsDefined():
				errs = append(errs, fmt.Errorf("Machine %s has no nodeRef", m.Name))
			}
		}
		return errors.Join(errs...)
	})
}

// poolMachine returns one of the pool's Machines and the ID of the
// instance its per-instance object stands for, waiting until upstream has
// made the Machines of the instances a roll created.
func poolMachine(t *testing.T, f *itest.Fixture) (*clusterv1.Machine, string) {
	t.Helper()
	var machine *clusterv1.Machine
	var instance string
	testenv.Eventually(t, converge, func() error {
		ms := &clusterv1.MachineList{}
		if err := f.Env.Client.List(f.Ctx, ms, client.InNamespace(f.NS)); err != nil {
			return err
		}
		for i := range ms.Items {
			m := &ms.Items[i]
			// Only a Machine upstream's Machine controller has taken: one
			// deleted before it carries upstream's finalizer is gone at
			// once, and upstream's MachinePool controller recreates it for
			// the per-instance object that is still there.
			if !m.DeletionTimestamp.IsZero() || !controllerutil.ContainsFinalizer(m, clusterv1.MachineFinalizer) || m.Spec.ProviderID == "" {
				continue
			}
			// The per-instance object's providerID: upstream copies it to
			// the Machine only once the Machine controller has seen it ready.
			obj := &unstructured.Unstructured{}
			obj.SetGroupVersionKind(schema.GroupVersionKind{Group: infrav1.GroupVersion.Group, Version: "v1beta1", Kind: m.Spec.InfrastructureRef.Kind})
			if err := f.Env.Client.Get(f.Ctx, client.ObjectKey{Namespace: f.NS, Name: m.Spec.InfrastructureRef.Name}, obj); err != nil {
				continue
			}
			id, _, _ := unstructured.NestedString(obj.Object, "spec", "providerID")
			for _, in := range f.Instances() {
				if in.ProviderID == id {
					machine, instance = m, in.ID
					return nil
				}
			}
		}
		return fmt.Errorf("no instance has the providerID of any of the %d Machines' %ss that upstream's Machine controller has taken (finalizer and providerID set)", len(ms.Items), f.Provider.MachineKind())
	})
	return machine, instance
}

// Dump renders the pool's MachinePool, infrastructure pool, per-instance
// objects and Machines as YAML, then the cloud's instances of the pool (the
// only place an instance's join message is read), for a failing test to
// print.
func Dump(f *itest.Fixture) string {
	var b strings.Builder
	lists := []schema.GroupVersionKind{
		clusterv1.GroupVersion.WithKind("MachinePoolList"),
		{Group: infrav1.GroupVersion.Group, Version: "v1beta1", Kind: f.Provider.PoolKind() + "List"},
		{Group: infrav1.GroupVersion.Group, Version: "v1beta1", Kind: f.Provider.MachineKind() + "List"},
		clusterv1.GroupVersion.WithKind("MachineList"),
	}
	for _, gvk := range lists {
		l := &unstructured.UnstructuredList{}
		l.SetGroupVersionKind(gvk)
		if err := f.Env.Client.List(f.Ctx, l, client.InNamespace(f.NS)); err != nil {
			fmt.Fprintf(&b, "listing %s: %v\n", gvk.Kind, err)
			continue
		}
		for _, o := range l.Items {
			unstructured.RemoveNestedField(o.Object, "metadata", "managedFields")
			y, _ := yaml.Marshal(o.Object)
			fmt.Fprintf(&b, "---\n%s", y)
		}
	}
	if g := f.Group(); g == nil {
		b.WriteString("--- the cloud has no group for the pool\n")
	} else {
		b.WriteString("--- the cloud's instances of the pool:\n")
		for _, in := range g.Instances {
			fmt.Fprintf(&b, "%s %s %s/%s node %q: %s\n", in.ID, in.PrivateIP, in.State, in.Join, in.NodeName, in.Message)
		}
	}
	return b.String()
}
