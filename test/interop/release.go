package interop

import (
	"fmt"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/manager"
	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/test/integration/itest"
)

// RunMachineOutlivesNoInstance checks, under upstream's MachinePool
// controller (ModeProviders: each per-instance object is controlled by its
// Machine, and deleting the Machine of an instance that is gone is the
// infrastructure provider's job), that a Machine does not outlive its
// instance when the engine is stopped half-way through releasing it. An
// admission policy refuses to delete Machines while the pool scales in by
// one: the engine must keep the gone instance's per-instance object (the
// only thing that names the Machine) until the Machine is deleted, and
// finish once the policy is lifted. Before the fix the engine deleted the
// object first, and a manager killed between the two deletes (the
// deployed test's leader kill, once) left the Machine behind for good.
func RunMachineOutlivesNoInstance(t *testing.T, env *testenv.Env, up *Upstream) {
	s := Seeds[0] // local
	cloud := s.Provider.StartCloud(t, env, itest.CloudOptions{})
	f := NewFixture(t, env, s.Provider, cloud)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the pool's objects:\n%s", Dump(f))
		}
	})
	f.StartManager(func(o *manager.Options) { o.Mode = up.Mode })
	f.ApplySeed(s.Mutate)
	f.WaitConverged(s.Replicas, s.Version, converge)
	checkMachines(t, f)

	name := "mpool-test-refuse-machine-delete-" + f.NS
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{
				ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Delete},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{clusterv1.GroupVersion.Group}, APIVersions: []string{"*"}, Resources: []string{"machines"}},
				}}},
			},
			Validations: []admissionregistrationv1.Validation{{Expression: "false", Message: "the test refuses to delete Machines"}},
		},
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        name,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
			MatchResources: &admissionregistrationv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{"kubernetes.io/metadata.name": f.NS},
			}},
		},
	}
	lift := func() {
		for _, o := range []client.Object{binding, policy} {
			if err := env.Client.Delete(f.Ctx, o); client.IgnoreNotFound(err) != nil {
				t.Errorf("deleting %s: %v", o.GetName(), err)
			}
		}
	}
	t.Cleanup(lift)
	for _, o := range []client.Object{policy, binding} {
		if err := env.Client.Create(f.Ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	// The policy is in force once a dry-run delete of a pool Machine is
	// refused (a dry run goes through admission and deletes nothing).
	ms := &clusterv1.MachineList{}
	if err := env.Client.List(f.Ctx, ms, client.InNamespace(f.NS)); err != nil || len(ms.Items) == 0 {
		t.Fatalf("Machines %d (%v)", len(ms.Items), err)
	}
	testenv.Eventually(t, time.Minute, func() error {
		err := env.Client.Delete(f.Ctx, ms.Items[0].DeepCopy(), client.DryRunAll)
		if apierrors.IsInvalid(err) || apierrors.IsForbidden(err) {
			return nil
		}
		return fmt.Errorf("a dry-run delete of Machine %s: %v, want the policy's refusal", ms.Items[0].Name, err)
	})

	before := f.InstanceIDs()
	t.Logf("scale in %d → %d while Machines cannot be deleted", s.Replicas, s.Replicas-1)
	f.Scale(int32(s.Replicas - 1))
	var gone string
	testenv.Eventually(t, converge, func() error {
		now := map[string]bool{}
		for _, id := range f.InstanceIDs() {
			now[id] = true
		}
		for _, id := range before {
			if !now[id] {
				gone = id
				return nil
			}
		}
		return fmt.Errorf("instances %v: none gone yet", f.InstanceIDs())
	})
	// The engine tries to release the gone instance's object on every
	// reconcile and is refused each time: let it try a few times.
	reconciles := testenv.Reconciles(t, f.Provider.Controller())
	testenv.Eventually(t, converge, func() error {
		if n := testenv.Reconciles(t, f.Provider.Controller()) - reconciles; n < 3 {
			return fmt.Errorf("%d reconciles of the pool since instance %s went", n, gone)
		}
		return nil
	})
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(schema.GroupVersionKind{Group: infrav1.GroupVersion.Group, Version: "v1beta1", Kind: f.Provider.MachineKind()})
	objects := &unstructured.UnstructuredList{}
	objects.SetGroupVersionKind(obj.GroupVersionKind().GroupVersion().WithKind(f.Provider.MachineKind() + "List"))
	if err := env.Client.List(f.Ctx, objects, client.InNamespace(f.NS)); err != nil {
		t.Fatal(err)
	}
	if len(objects.Items) != s.Replicas {
		t.Errorf("%d %ss while the Machine of gone instance %s cannot be deleted, want %d: the object that names the Machine went first", len(objects.Items), f.Provider.MachineKind(), gone, s.Replicas)
	}

	t.Log("lifting the policy: the Machine and its object go")
	lift()
	f.WaitConverged(s.Replicas-1, s.Version, converge)
	testenv.Eventually(t, converge, func() error {
		ms := &clusterv1.MachineList{}
		if err := env.Client.List(f.Ctx, ms, client.InNamespace(f.NS)); err != nil {
			return err
		}
		if len(ms.Items) != s.Replicas-1 {
			names := make([]string, 0, len(ms.Items))
			for _, m := range ms.Items {
				names = append(names, m.Name)
			}
			return fmt.Errorf("Machines %v, want %d: one outlived its instance", names, s.Replicas-1)
		}
		return nil
	})
	checkMachines(t, f)
	f.DeletePoolAndWaitGone(converge)
}
