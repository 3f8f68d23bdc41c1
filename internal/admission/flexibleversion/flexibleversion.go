// Package flexibleversion is the validating admission webhook that refuses a
// Flexible AzureMachinePool under a MachinePool below Kubernetes v1.26, as
// CAPZ's AzureMachinePool webhook does (Flexible orchestration needs v1.26).
// The two objects live apart, so no CRD rule sees both; the webhook reads
// the other one, whichever of the two is created second:
//
//   - a MachinePool whose infrastructureRef names an AzureMachinePool: one
//     read of that AzureMachinePool;
//   - a Flexible AzureMachinePool: one list of the namespace's MachinePools,
//     for the one whose infrastructureRef names it.
//
// It replaced two ValidatingAdmissionPolicies that took the other kind as a
// parameter: the API server evaluates such a policy once per object of the
// parameter kind in the namespace, its matchConditions included, so every
// MachinePool and AzureMachinePool creation cost O(pools of the namespace)
// CEL evaluations, and 1,000 pools in one namespace a third of the API
// server's CPU (BENCHMARKS.md, "Many pools"). The webhook's matchConditions
// are evaluated once per request: only Azure pools call it.
//
// Only creations are judged. What an update could still do (lower a Flexible
// pool's MachinePool below v1.26, make an AzureMachinePool Flexible) is
// refused by the Azure provider, the source of truth: it provisions nothing
// for such a pool and says why in the AzureMachinePool's ScaleSetRunning
// condition (reason InvalidSpec), as it does for two creations in the same
// instant that each miss the other and when the webhook is unreachable
// (failurePolicy Ignore: a manager that is down must not stop every
// MachinePool creation).
package flexibleversion

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/kubeenv"
	mpoolscheme "github.com/mpool-dev/mpool/internal/scheme"
)

const (
	// Name is the ValidatingWebhookConfiguration's name.
	Name = "mpool-azure-flexible-version"
	// Path is where the webhook is served.
	Path = "/validate-azure-flexible-version"
)

// Handler returns the webhook's handler, reading the other object through r
// (the manager's cached client; an uncached one in an embedded control
// plane).
func Handler(r client.Reader) http.Handler {
	return &admission.Webhook{Handler: &validator{r: r}}
}

// ForConfig returns the handler for the API server cfg reaches, reading
// through an uncached client of cfg: what an embedded control plane serves.
func ForConfig(cfg *rest.Config) (http.Handler, error) {
	c, err := mpoolscheme.NewClient(cfg)
	if err != nil {
		return nil, err
	}
	return Handler(c), nil
}

// WebhookConfiguration returns the ValidatingWebhookConfiguration that sends
// the two creations to the webhook at cc: failurePolicy Ignore, no side
// effects, and matchConditions that pass only Azure pools, so no other
// creation calls it. config/manager's manifest is this object with the
// manager's Service (checked by config/deploytest).
func WebhookConfiguration(cc admissionregistrationv1.WebhookClientConfig) *admissionregistrationv1.ValidatingWebhookConfiguration {
	hook := func(name, group, resource string, conditions ...admissionregistrationv1.MatchCondition) admissionregistrationv1.ValidatingWebhook {
		return admissionregistrationv1.ValidatingWebhook{
			Name:         name,
			ClientConfig: *cc.DeepCopy(),
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule: admissionregistrationv1.Rule{
					APIGroups: []string{group}, APIVersions: []string{"*"}, Resources: []string{resource},
					Scope: ptr.To(admissionregistrationv1.NamespacedScope),
				},
			}},
			FailurePolicy:           ptr.To(admissionregistrationv1.Ignore),
			MatchPolicy:             ptr.To(admissionregistrationv1.Equivalent),
			SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
			TimeoutSeconds:          ptr.To[int32](5),
			AdmissionReviewVersions: []string{"v1"},
			NamespaceSelector:       &metav1.LabelSelector{},
			ObjectSelector:          &metav1.LabelSelector{},
			MatchConditions:         conditions,
		}
	}
	return &admissionregistrationv1.ValidatingWebhookConfiguration{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingWebhookConfiguration"},
		ObjectMeta: metav1.ObjectMeta{Name: Name},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{
			hook("machinepools.azure-flexible-version.mpool.dev", clusterv1.GroupVersion.Group, "machinepools",
				admissionregistrationv1.MatchCondition{Name: "azure-pool-with-version", Expression: "has(object.spec.template.spec.infrastructureRef) && " +
					"object.spec.template.spec.infrastructureRef.kind == 'AzureMachinePool' && has(object.spec.template.spec.version)"}),
			hook("azuremachinepools.azure-flexible-version.mpool.dev", infrav1.GroupVersion.Group, "azuremachinepools",
				admissionregistrationv1.MatchCondition{Name: "flexible", Expression: "has(object.spec.orchestrationMode) && object.spec.orchestrationMode == 'Flexible'"}),
		},
	}
}

type validator struct{ r client.Reader }

// Handle judges one creation. A read that fails answers an error, which the
// API server turns into an admission (failurePolicy Ignore).
func (v *validator) Handle(ctx context.Context, req admission.Request) admission.Response {
	if req.Operation != admissionv1.Create {
		return admission.Allowed("")
	}
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(req.Object.Raw); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	var msg string
	var err error
	switch req.Kind.Kind {
	case "MachinePool":
		msg, err = v.machinePool(ctx, req.Namespace, obj)
	case "AzureMachinePool":
		msg, err = v.azureMachinePool(ctx, req.Namespace, obj)
	}
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, err)
	}
	if msg == "" {
		return admission.Allowed("")
	}
	return admission.Response{AdmissionResponse: admissionv1.AdmissionResponse{
		Allowed: false,
		Result:  &metav1.Status{Status: metav1.StatusFailure, Code: http.StatusUnprocessableEntity, Reason: metav1.StatusReasonInvalid, Message: msg},
	}}
}

// machinePool refuses a MachinePool below v1.26 over a Flexible
// AzureMachinePool.
func (v *validator) machinePool(ctx context.Context, ns string, mp *unstructured.Unstructured) (string, error) {
	ref := poolRef(mp.Object)
	if ref.kind != "AzureMachinePool" || ref.version == "" || atLeast126(ref.version) {
		return "", nil
	}
	amp := &infrav1.AzureMachinePool{}
	if err := v.r.Get(ctx, client.ObjectKey{Namespace: ns, Name: ref.name}, amp); err != nil {
		if apierrors.IsNotFound(err) {
			return "", nil
		}
		return "", fmt.Errorf("reading AzureMachinePool %s/%s: %w", ns, ref.name, err)
	}
	if !flexible(amp) {
		return "", nil
	}
	return MachinePoolMessage(ref.version, amp.Name), nil
}

// azureMachinePool refuses a Flexible AzureMachinePool whose MachinePool
// runs below v1.26.
func (v *validator) azureMachinePool(ctx context.Context, ns string, obj *unstructured.Unstructured) (string, error) {
	if mode, _, _ := unstructured.NestedString(obj.Object, "spec", "orchestrationMode"); mode != string(infrav1.FlexibleOrchestrationMode) {
		return "", nil
	}
	mps := &clusterv1.MachinePoolList{}
	if err := v.r.List(ctx, mps, client.InNamespace(ns)); err != nil {
		return "", fmt.Errorf("listing the MachinePools of namespace %s: %w", ns, err)
	}
	for i := range mps.Items {
		mp := &mps.Items[i]
		ref := mp.Spec.Template.Spec.InfrastructureRef
		version := mp.Spec.Template.Spec.Version
		if ref.Kind == "AzureMachinePool" && ref.Name == obj.GetName() && version != "" && !atLeast126(version) {
			return AzureMachinePoolMessage(mp.Name, version), nil
		}
	}
	return "", nil
}

// MachinePoolMessage is the refusal of a MachinePool at version over the
// Flexible AzureMachinePool amp.
func MachinePoolMessage(version, amp string) string {
	return "spec.template.spec.version " + version + " is below v1.26, which AzureMachinePool " + amp +
		" needs for orchestrationMode Flexible: use Kubernetes v1.26 or later, or orchestrationMode Uniform"
}

// AzureMachinePoolMessage is the refusal of a Flexible AzureMachinePool under
// MachinePool mp at version.
func AzureMachinePoolMessage(mp, version string) string {
	return "spec.orchestrationMode Flexible needs Kubernetes v1.26 or later, and MachinePool " + mp + " runs " + version +
		": raise its spec.template.spec.version to v1.26 or later, or use orchestrationMode Uniform"
}

type infraRef struct{ kind, name, version string }

// poolRef reads a MachinePool's infrastructureRef and version at any served
// version (both keep them at the same paths).
func poolRef(mp map[string]any) infraRef {
	var r infraRef
	r.kind, _, _ = unstructured.NestedString(mp, "spec", "template", "spec", "infrastructureRef", "kind")
	r.name, _, _ = unstructured.NestedString(mp, "spec", "template", "spec", "infrastructureRef", "name")
	r.version, _, _ = unstructured.NestedString(mp, "spec", "template", "spec", "version")
	return r
}

func flexible(amp *infrav1.AzureMachinePool) bool {
	return amp.Spec.OrchestrationMode == infrav1.FlexibleOrchestrationMode
}

// atLeast126 reports whether a Kubernetes version (v1.31.2, v1.27.0-rc.1) is
// v1.26 or later. A version it cannot read is let through: the MachinePool's
// own validation judges its form.
func atLeast126(version string) bool {
	parts := strings.SplitN(strings.TrimPrefix(version, "v"), ".", 3)
	if len(parts) < 2 {
		return true
	}
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil {
		return true
	}
	return major > 1 || (major == 1 && minor >= 26)
}

// Embedded is the webhook as an embedded control plane serves it (`mpool up`
// and the tests): on its loopback server, reading through an uncached
// client, registered with the control plane's URL and CA.
var Embedded = &kubeenv.ValidatingWebhook{Path: Path, Handler: ForConfig, Configuration: WebhookConfiguration}
