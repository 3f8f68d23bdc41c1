package deploytest

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"

	"github.com/mpool-dev/mpool/config/crd"
	"github.com/mpool-dev/mpool/config/overlay"
	"github.com/mpool-dev/mpool/internal/admission/flexibleversion"
	"github.com/mpool-dev/mpool/internal/manager"
	"github.com/mpool-dev/mpool/internal/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { os.Exit(testenv.Run(m, &env)) }

func render(t *testing.T) []*unstructured.Unstructured { return renderDir(t, "default") }

// renderDir renders config/<dir> as `kubectl kustomize` would.
func renderDir(t *testing.T, dir string) []*unstructured.Unstructured {
	t.Helper()
	objs, err := overlay.Render("../" + dir)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// applyDefault creates or updates, on the test API server, what
// `kubectl apply -k config/default` would.
func applyDefault(t *testing.T) {
	t.Helper()
	if err := overlay.Apply(context.Background(), env.Client, render(t)); err != nil {
		t.Fatal(err)
	}
}

// TestDefaultRendersLeastPrivilege checks what `kubectl apply -k
// config/default` would create: every CRD, a Deployment with leader election
// and probes, and RBAC rules that name every group, resource and verb.
func TestDefaultRendersLeastPrivilege(t *testing.T) {
	objs := render(t)
	kinds := map[string]int{}
	for _, o := range objs {
		kinds[o.GetKind()]++
		switch o.GetKind() {
		case "CustomResourceDefinition":
			checkCRDConversion(t, o)
		case "Service":
			checkWebhookService(t, o)
		case "ValidatingWebhookConfiguration":
			checkValidatingWebhook(t, o)
		case "ClusterRole", "Role":
			var role rbacv1.ClusterRole
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &role); err != nil {
				t.Fatal(err)
			}
			for _, r := range role.Rules {
				for _, field := range [][]string{r.APIGroups, r.Resources, r.Verbs, r.ResourceNames} {
					for _, v := range field {
						if v == "*" || strings.HasSuffix(v, "/*") {
							t.Errorf("%s %s has a wildcard rule: %+v", o.GetKind(), o.GetName(), r)
						}
					}
				}
			}
		case "Deployment":
			var d appsv1.Deployment
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &d); err != nil {
				t.Fatal(err)
			}
			checkWebhookDeployment(t, &d)
			c := d.Spec.Template.Spec.Containers[0]
			if !strings.Contains(strings.Join(c.Args, " "), "--leader-elect") {
				t.Errorf("manager Deployment does not elect a leader: %v", c.Args)
			}
			if c.LivenessProbe == nil || c.ReadinessProbe == nil {
				t.Errorf("manager Deployment lacks probes")
			}
			if d.Namespace != "mpool-system" {
				t.Errorf("Deployment namespace = %q, want mpool-system", d.Namespace)
			}
		}
	}
	crds, err := crd.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	// config/crd/kustomization.yaml lists every generated CRD.
	if kinds["CustomResourceDefinition"] != len(crds) || kinds["Deployment"] != 1 || kinds["ClusterRole"] != 1 ||
		kinds["Service"] != 1 || kinds["Role"] != 2 || kinds["RoleBinding"] != 2 || kinds["ValidatingWebhookConfiguration"] != 1 {
		t.Errorf("rendered kinds = %v", kinds)
	}
}

// TestDefaultAppliesAndAuthorizesTheManager applies the rendered manifests to
// a real API server and asks it, as the manager's ServiceAccount, whether it
// may do what the controllers do.
func TestDefaultAppliesAndAuthorizesTheManager(t *testing.T) {
	ctx := context.Background()
	applyDefault(t)
	cs := kubernetes.NewForConfigOrDie(env.Config)
	user := "system:serviceaccount:mpool-system:mpool-manager"
	checks := []struct {
		name string
		attr authorizationv1.ResourceAttributes
		want bool
	}{
		{name: "reconcile MachinePools", attr: authorizationv1.ResourceAttributes{Group: "cluster.x-k8s.io", Resource: "machinepools", Verb: "watch"}, want: true},
		{name: "patch MachinePool status", attr: authorizationv1.ResourceAttributes{Group: "cluster.x-k8s.io", Resource: "machinepools", Subresource: "status", Verb: "patch"}, want: true},
		{name: "create pool Machines", attr: authorizationv1.ResourceAttributes{Group: "cluster.x-k8s.io", Resource: "machines", Verb: "create"}, want: true},
		{name: "write bootstrap data Secrets", attr: authorizationv1.ResourceAttributes{Resource: "secrets", Verb: "create"}, want: true},
		{name: "record events", attr: authorizationv1.ResourceAttributes{Group: "events.k8s.io", Resource: "events", Verb: "create"}, want: true},
		{name: "leader election in its namespace", attr: authorizationv1.ResourceAttributes{Namespace: "mpool-system", Group: "coordination.k8s.io", Resource: "leases", Verb: "update"}, want: true},
		{name: "no leases elsewhere", attr: authorizationv1.ResourceAttributes{Namespace: "kube-system", Group: "coordination.k8s.io", Resource: "leases", Verb: "update"}, want: false},
		{name: "read its webhook certificate Secret", attr: authorizationv1.ResourceAttributes{Namespace: "mpool-system", Resource: "secrets", Name: manager.DefaultWebhookSecretName, Verb: "get"}, want: true},
		{name: "create its webhook certificate Secret", attr: authorizationv1.ResourceAttributes{Namespace: "mpool-system", Resource: "secrets", Verb: "create"}, want: true},
		{name: "rotate its webhook certificate Secret", attr: authorizationv1.ResourceAttributes{Namespace: "mpool-system", Resource: "secrets", Name: manager.DefaultWebhookSecretName, Verb: "update"}, want: true},
		{name: "watch CRDs (conversion reads contract labels)", attr: authorizationv1.ResourceAttributes{Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions", Verb: "watch"}, want: true},
		{name: "patch CRDs' caBundle", attr: authorizationv1.ResourceAttributes{Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions", Name: "machinepools.cluster.x-k8s.io", Verb: "patch"}, want: true},
		{name: "patch the validating webhook's caBundle", attr: authorizationv1.ResourceAttributes{Group: "admissionregistration.k8s.io", Resource: "validatingwebhookconfigurations", Name: flexibleversion.Name, Verb: "patch"}, want: true},
		{name: "no deleting validating webhooks", attr: authorizationv1.ResourceAttributes{Group: "admissionregistration.k8s.io", Resource: "validatingwebhookconfigurations", Verb: "delete"}, want: false},
		{name: "no deleting CRDs", attr: authorizationv1.ResourceAttributes{Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions", Verb: "delete"}, want: false},
		{name: "no access to Deployments", attr: authorizationv1.ResourceAttributes{Group: "apps", Resource: "deployments", Verb: "list"}, want: false},
		{name: "cannot escalate RBAC", attr: authorizationv1.ResourceAttributes{Group: "rbac.authorization.k8s.io", Resource: "clusterroles", Verb: "create"}, want: false},
	}
	for _, tc := range checks {
		t.Run(tc.name, func(t *testing.T) {
			attr := tc.attr
			if attr.Namespace == "" {
				attr.Namespace = "default"
			}
			sar, err := cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
				Spec: authorizationv1.SubjectAccessReviewSpec{User: user, Groups: []string{"system:serviceaccounts", "system:serviceaccounts:mpool-system", "system:authenticated"}, ResourceAttributes: &attr},
			}, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if sar.Status.Allowed != tc.want {
				t.Errorf("%s: allowed=%v, want %v (%s)", fmt.Sprint(attr), sar.Status.Allowed, tc.want, sar.Status.Reason)
			}
		})
	}
}
