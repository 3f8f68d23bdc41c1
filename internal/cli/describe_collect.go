package cli

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/mpool-dev/mpool/api/conditions"
	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/capi"
	"github.com/mpool-dev/mpool/internal/preview"
	"github.com/mpool-dev/mpool/internal/provider/contract"
)

// rolloutPausedAnnotation set to "true" on a MachinePool pauses its rollout:
// the infra-pool engine creates and deletes nothing. It is the engine's
// preview.RolloutPausedAnnotation; the CLI does not import the engine.
const rolloutPausedAnnotation = "mpool.dev/rollout-paused"

// Condition types and reasons of the infra-pool engine the CLI interprets.
const (
	rolloutProgressingCondition = infrav1.RolloutProgressingCondition
	convergedReason             = infrav1.ConvergedReason
)

// poolState is everything the read commands know about one MachinePool.
type poolState struct {
	pool      *clusterv1.MachinePool
	bootstrap *BootstrapView
	infra     *infraState
	instances []InstanceView
	notes     []string
}

// infraState is what was read of the infrastructure pool.
type infraState struct {
	view               InfraPoolView
	generation         int64
	observedGeneration int64
	// adapter is the provider that serves the pool's kind: the reader of
	// its pool and instances; nil when no provider of mpool serves it.
	adapter contract.Adapter
	// rollout is how the pool rolls, as its provider reads it; nil when it
	// could not be read.
	rollout    *contract.RolloutView
	conditions []metav1.Condition
}

// infraPoolObject is the part of any infrastructure machine pool kind the
// CLI reads: the Cluster API infra machine pool contract, v1beta1 (status.ready,
// status.failureReason) or v1beta2 (status.initialization.provisioned,
// status.deprecated.v1beta1.failureReason). What is the provider's own
// (how it rolls, its instances' states) only its contract.Reader reads.
type infraPoolObject struct {
	metav1.ObjectMeta `json:"metadata"`
	Status            struct {
		Ready          bool `json:"ready"`
		Initialization struct {
			Provisioned *bool `json:"provisioned"`
		} `json:"initialization"`
		Replicas                  int32              `json:"replicas"`
		InfrastructureMachineKind string             `json:"infrastructureMachineKind"`
		ObservedGeneration        int64              `json:"observedGeneration"`
		FailureReason             *string            `json:"failureReason"`
		FailureMessage            *string            `json:"failureMessage"`
		Deprecated                *deprecatedFailure `json:"deprecated"`
		Conditions                []metav1.Condition `json:"conditions"`
	} `json:"status"`
}

// deprecatedFailure is status.deprecated of an object of a v1beta2
// contract, where the v1beta1 failureReason and failureMessage moved.
type deprecatedFailure struct {
	V1Beta1 *struct {
		FailureReason  *string `json:"failureReason"`
		FailureMessage *string `json:"failureMessage"`
	} `json:"v1beta1"`
}

// instanceObject is the part of a per-instance infra machine of a kind no
// provider of mpool serves that the CLI reads: the Cluster API infra
// machine contract's spec.providerID and status.ready.
type instanceObject struct {
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		ProviderID string `json:"providerID"`
	} `json:"spec"`
	Status struct {
		Ready      bool               `json:"ready"`
		Conditions []metav1.Condition `json:"conditions"`
	} `json:"status"`
}

// bootstrapObject is the part of any bootstrap config kind the CLI reads:
// the Cluster API bootstrap contract, v1beta1 (status.ready) or v1beta2
// (status.initialization.dataSecretCreated).
type bootstrapObject struct {
	Status struct {
		Ready          bool `json:"ready"`
		Initialization struct {
			DataSecretCreated *bool `json:"dataSecretCreated"`
		} `json:"initialization"`
		DataSecretName *string            `json:"dataSecretName"`
		Conditions     []metav1.Condition `json:"conditions"`
	} `json:"status"`
}

// collectOptions say what collectPool reads beyond the management cluster.
type collectOptions struct {
	// nodes reads the instances' Nodes from the workload cluster.
	nodes bool
}

// collectPool reads the MachinePool ns/name, its bootstrap config, its
// infrastructure pool, the per-instance objects and pool Machines, and
// (with o.nodes) their Nodes. What cannot be read beyond the MachinePool
// itself is reported in notes rather than failing.
func collectPool(ctx context.Context, c client.Client, ns, name string, o collectOptions) (*poolState, error) {
	mp := &clusterv1.MachinePool{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, mp); err != nil {
		return nil, notFound(err, "machinepool", ns, name)
	}
	return collectPoolFrom(ctx, c, mp, o)
}

func collectPoolFrom(ctx context.Context, c client.Client, mp *clusterv1.MachinePool, o collectOptions) (*poolState, error) {
	s := &poolState{pool: mp}
	if err := s.readBootstrap(ctx, c); err != nil {
		return nil, err
	}
	if err := s.readInfra(ctx, c); err != nil {
		return nil, err
	}
	if err := s.readInstances(ctx, c); err != nil {
		return nil, err
	}
	if o.nodes {
		s.readNodes(ctx, c)
	}
	return s, nil
}

func (s *poolState) readBootstrap(ctx context.Context, c client.Client) error {
	b := s.pool.Spec.Template.Spec.Bootstrap
	if !b.ConfigRef.IsDefined() {
		if b.DataSecretName != nil {
			s.bootstrap = &BootstrapView{Found: true, Ready: true, DataSecretName: *b.DataSecretName}
		}
		return nil
	}
	ref := b.ConfigRef
	s.bootstrap = &BootstrapView{Kind: ref.Kind, Name: ref.Name}
	u, _, err := getRef(ctx, c, ref, s.pool.Namespace)
	if done, err := s.absent(err, ref); done {
		return err
	}
	var obj bootstrapObject
	if err := decode(u, &obj); err != nil {
		return fmt.Errorf("decoding %s %s/%s: %w", ref.Kind, s.pool.Namespace, ref.Name, err)
	}
	s.bootstrap.Found = true
	s.bootstrap.Ready = ptr.Deref(obj.Status.Initialization.DataSecretCreated, false) || obj.Status.Ready
	s.bootstrap.DataSecretName = ptr.Deref(obj.Status.DataSecretName, "")
	s.bootstrap.Conditions = attention(obj.Status.Conditions)
	return nil
}

func (s *poolState) readInfra(ctx context.Context, c client.Client) error {
	ref := s.pool.Spec.Template.Spec.InfrastructureRef
	s.infra = &infraState{view: InfraPoolView{Kind: ref.Kind, Name: ref.Name, Instances: []InstanceView{}}}
	u, gvk, err := getRef(ctx, c, ref, s.pool.Namespace)
	if !gvk.Empty() {
		s.infra.view.APIVersion = gvk.GroupVersion().String()
	}
	if done, err := s.absent(err, ref); done {
		return err
	}
	var obj infraPoolObject
	if err := decode(u, &obj); err != nil {
		return fmt.Errorf("decoding %s %s/%s: %w", ref.Kind, s.pool.Namespace, ref.Name, err)
	}
	st := obj.Status
	v := &s.infra.view
	v.Found, v.Replicas, v.InstanceKind = true, st.Replicas, st.InfrastructureMachineKind
	v.Ready = ptr.Deref(st.Initialization.Provisioned, false) || st.Ready
	v.FailureReason, v.FailureMessage = ptr.Deref(st.FailureReason, ""), ptr.Deref(st.FailureMessage, "")
	if d := st.Deprecated; d != nil && d.V1Beta1 != nil {
		v.FailureReason = cmp.Or(v.FailureReason, ptr.Deref(d.V1Beta1.FailureReason, ""))
		v.FailureMessage = cmp.Or(v.FailureMessage, ptr.Deref(d.V1Beta1.FailureMessage, ""))
	}
	v.Conditions = attention(st.Conditions)
	s.infra.generation, s.infra.observedGeneration = obj.Generation, st.ObservedGeneration
	s.infra.conditions = st.Conditions
	s.readRollout(u, ref)
	return nil
}

// readRollout reads how the pool u rolls through its provider's reader; a
// pool no provider of mpool serves, or one at a version its provider's
// types are not of, has none (a note says why).
func (s *poolState) readRollout(u *unstructured.Unstructured, ref clusterv1.ContractVersionedObjectReference) {
	a := adapterOf(ref)
	s.infra.adapter = a
	if a == nil {
		return
	}
	pool := a.NewPool()
	if u.GetAPIVersion() != infrav1.GroupVersion.String() {
		s.notes = append(s.notes, fmt.Sprintf("%s %s is read at %s, not mpool's %s: how it rolls is not known", ref.Kind, ref.Name, u.GetAPIVersion(), infrav1.GroupVersion))
		return
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, pool); err != nil {
		s.notes = append(s.notes, fmt.Sprintf("%s %s not read as mpool's %s: %v", ref.Kind, ref.Name, a.Kinds().Provider, err))
		return
	}
	view, err := a.ReadPool(pool)
	if err != nil {
		s.notes = append(s.notes, fmt.Sprintf("%s %s: %v", ref.Kind, ref.Name, err))
		return
	}
	s.infra.rollout = &view.Rollout
	s.infra.view.Rollout = view.Rollout.Source
}

// absent handles the error of reading the object ref names (see getRef):
// done is true when there is nothing more to read, with an error only for a
// failure that is not the object's (or its kind's) absence.
func (s *poolState) absent(err error, ref clusterv1.ContractVersionedObjectReference) (done bool, _ error) {
	switch {
	case err == nil:
		return false, nil
	case apierrors.IsNotFound(err):
		return true, nil
	case meta.IsNoMatchError(err):
		s.notes = append(s.notes, fmt.Sprintf("The API server does not serve %s %s", ref.APIGroup, ref.Kind))
		return true, nil
	default:
		return true, fmt.Errorf("reading %s %s/%s: %w", ref.Kind, s.pool.Namespace, ref.Name, err)
	}
}

// readInstances lists the per-instance objects and pool Machines.
func (s *poolState) readInstances(ctx context.Context, c client.Client) error {
	inPool := client.MatchingLabels{clusterv1.MachinePoolNameLabel: capi.LabelValue(s.pool.Name)}
	machines := &clusterv1.MachineList{}
	if err := c.List(ctx, machines, client.InNamespace(s.pool.Namespace), inPool); err != nil {
		return fmt.Errorf("listing the Machines of machinepool %s/%s: %w", s.pool.Namespace, s.pool.Name, err)
	}
	kind := s.infra.view.InstanceKind
	switch a := s.infra.adapter; {
	case a != nil && s.infra.view.Found:
		kind = a.Kinds().Instance
		list := a.NewInstanceList()
		if err := c.List(ctx, list, client.InNamespace(s.pool.Namespace), inPool); err != nil {
			return fmt.Errorf("listing the %ss of machinepool %s/%s: %w", kind, s.pool.Namespace, s.pool.Name, err)
		}
		if err := meta.EachListItem(list, func(o runtime.Object) error {
			obj := o.(contract.InstanceObject)
			s.instances = append(s.instances, instanceFromView(obj, a.ReadInstance(obj)))
			return nil
		}); err != nil {
			return fmt.Errorf("reading the %ss of machinepool %s/%s: %w", kind, s.pool.Namespace, s.pool.Name, err)
		}
	case kind != "":
		if err := s.readForeignInstances(ctx, c, kind, inPool); err != nil {
			return err
		}
	}
	byRef, byProviderID := map[string]*clusterv1.Machine{}, map[string]*clusterv1.Machine{}
	for i := range machines.Items {
		m := &machines.Items[i]
		if m.Spec.InfrastructureRef.Kind == kind {
			byRef[m.Spec.InfrastructureRef.Name] = m
		}
		if id := m.Spec.ProviderID; id != "" {
			byProviderID[id] = m
		}
	}
	for i := range s.instances {
		in := &s.instances[i]
		m := byRef[in.Name]
		if m == nil && in.ProviderID != "" {
			m = byProviderID[in.ProviderID]
		}
		if m == nil {
			continue
		}
		in.Machine = m.Name
		in.Health, in.Remediation = machineHealth(m)
		for _, t := range []string{clusterv1.MachineHealthCheckSucceededCondition, clusterv1.MachineOwnerRemediatedCondition} {
			if c := meta.FindStatusCondition(m.Status.Conditions, t); c != nil && c.Status != metav1.ConditionTrue {
				in.Conditions = append(in.Conditions, ConditionView{Type: c.Type, Status: string(c.Status), Reason: c.Reason, Message: oneLine(c.Message)})
			}
		}
		if in.Zone == "" {
			in.Zone = cmp.Or(m.Spec.FailureDomain, m.Status.FailureDomain)
		}
		if in.Node == nil && m.Status.NodeRef.IsDefined() {
			in.Node = &NodeView{Name: m.Status.NodeRef.Name}
		}
	}
	slices.SortFunc(s.instances, func(a, b InstanceView) int { return cmp.Compare(a.Name, b.Name) })
	s.infra.view.Instances = s.instances
	if s.instances == nil {
		s.infra.view.Instances = []InstanceView{}
	}
	return nil
}

// readForeignInstances lists the per-instance objects of a pool whose kind
// no provider of mpool serves: only the infra machine contract's fields
// are known.
func (s *poolState) readForeignInstances(ctx context.Context, c client.Client, kind string, inPool client.MatchingLabels) error {
	gv, err := schema.ParseGroupVersion(s.infra.view.APIVersion)
	if err != nil {
		return fmt.Errorf("parsing apiVersion of %s %s: %w", s.infra.view.Kind, s.infra.view.Name, err)
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(gv.WithKind(kind + "List"))
	if err := c.List(ctx, list, client.InNamespace(s.pool.Namespace), inPool); err != nil {
		if !meta.IsNoMatchError(err) {
			return fmt.Errorf("listing the %ss of machinepool %s/%s: %w", kind, s.pool.Namespace, s.pool.Name, err)
		}
		s.notes = append(s.notes, fmt.Sprintf("The API server does not serve %s %s", s.infra.view.APIVersion, kind))
	}
	for i := range list.Items {
		var obj instanceObject
		if err := decode(&list.Items[i], &obj); err != nil {
			return fmt.Errorf("decoding %s %s: %w", kind, list.Items[i].GetName(), err)
		}
		in := InstanceView{
			Name:              obj.Name,
			ProviderID:        obj.Spec.ProviderID,
			Ready:             obj.Status.Ready,
			Deleting:          obj.DeletionTimestamp != nil,
			Created:           ptr.To(obj.CreationTimestamp),
			MarkedForDeletion: obj.Annotations[clusterv1.DeleteMachineAnnotation] != "",
			Conditions:        attention(obj.Status.Conditions),
		}
		s.instances = append(s.instances, in)
	}
	return nil
}

// readNodes fills in the instances' Nodes from the workload cluster; a
// workload cluster that cannot be read is a note, not an error.
func (s *poolState) readNodes(ctx context.Context, c client.Client) {
	wanted := false
	for _, in := range s.instances {
		wanted = wanted || in.Node != nil || in.ProviderID != ""
	}
	if !wanted {
		return
	}
	cluster := types.NamespacedName{Namespace: s.pool.Namespace, Name: s.pool.Spec.ClusterName}
	nodes, err := workloadNodes(ctx, c, cluster)
	if err != nil {
		s.notes = append(s.notes, fmt.Sprintf("Nodes of cluster %s not read: %v", cluster, err))
		return
	}
	byProviderID := nodesByProviderID(nodes)
	for i := range s.instances {
		in := &s.instances[i]
		var node *corev1.Node
		switch {
		case in.Node != nil:
			node = nodes[in.Node.Name]
		case in.ProviderID != "":
			node = byProviderID[in.ProviderID]
			if node == nil {
				continue
			}
			in.Node = &NodeView{Name: node.Name}
		default:
			continue
		}
		if node == nil {
			in.Node.Status = "NotFound"
			continue
		}
		in.Node.Status = "Unknown"
		for _, cond := range node.Status.Conditions {
			if cond.Type != corev1.NodeReady {
				continue
			}
			switch cond.Status {
			case corev1.ConditionTrue:
				in.Node.Status = "Ready"
			case corev1.ConditionFalse:
				in.Node.Status = "NotReady"
			}
			if !cond.LastTransitionTime.IsZero() {
				in.Node.Since = ptr.To(cond.LastTransitionTime)
			}
		}
	}
}

// instanceFromView describes a per-instance object as its provider's
// reader read it.
func instanceFromView(obj contract.InstanceObject, v contract.InstanceView) InstanceView {
	in := InstanceView{
		Name:              obj.GetName(),
		InstanceID:        v.InstanceID,
		ProviderID:        v.ProviderID,
		State:             string(v.State),
		CloudState:        v.CloudState,
		Zone:              v.Zone,
		Ready:             v.Ready,
		Version:           v.Version,
		Deleting:          v.State == contract.InstanceDeleting,
		Created:           ptr.To(obj.GetCreationTimestamp()),
		MarkedForDeletion: obj.GetAnnotations()[clusterv1.DeleteMachineAnnotation] != "",
		Quarantined:       preview.HasAnnotation(obj.GetAnnotations(), preview.QuarantinedAnnotation),
		Conditions:        attention(v.Conditions),
	}
	if v.Reported {
		in.UpToDate = ptr.To(v.UpToDate)
	}
	if v.NodeRef != nil && v.NodeRef.Name != "" {
		in.Node = &NodeView{Name: v.NodeRef.Name}
	}
	return in
}

// live says whether an instance counts as a replica: neither failed nor
// being deleted.
func live(in InstanceView) bool { return !in.Deleting && in.State != string(contract.InstanceFailed) }

// negativePolarity lists the condition types for which True is the
// abnormal state.
var negativePolarity = map[string]bool{
	clusterv1.PausedCondition:       true,
	conditions.ScalingUpCondition:   true,
	conditions.ScalingDownCondition: true,
	clusterv1.DeletingCondition:     true,
	infrav1.RemediatingCondition:    true,
}

// needsAttention says whether a condition is worth showing (see
// ConditionView).
func needsAttention(c metav1.Condition) bool {
	switch {
	case c.Type == rolloutProgressingCondition:
		return c.Status != metav1.ConditionFalse || c.Reason != convergedReason
	case negativePolarity[c.Type]:
		return c.Status != metav1.ConditionFalse
	default:
		return c.Status != metav1.ConditionTrue
	}
}

// attention returns the conditions that need attention, in their order.
func attention(conds []metav1.Condition) []ConditionView {
	var out []ConditionView
	for _, c := range conds {
		if needsAttention(c) {
			out = append(out, ConditionView{Type: c.Type, Status: string(c.Status), Reason: c.Reason, Message: c.Message})
		}
	}
	return out
}

// refGVK returns the GroupVersionKind at which the controllers read the
// object ref names: the newest version its CustomResourceDefinition's
// contract labels name (capi.RefGVK). A user who may not read
// CustomResourceDefinitions gets the API server's preferred version of the
// kind instead. A kind the API server does not serve is a NoMatch error
// (meta.IsNoMatchError).
func refGVK(ctx context.Context, c client.Client, ref clusterv1.ContractVersionedObjectReference) (schema.GroupVersionKind, error) {
	gvk, err := capi.RefGVK(ctx, c, ref)
	if err == nil || !apierrors.IsForbidden(err) {
		return gvk, err
	}
	mapping, merr := c.RESTMapper().RESTMapping(ref.GroupKind())
	if merr != nil {
		return schema.GroupVersionKind{}, err
	}
	return mapping.GroupVersionKind, nil
}

// getRef reads the object ref names in namespace ns, unstructured, at the
// version refGVK resolves, which it also returns (empty when it could not
// be resolved).
func getRef(ctx context.Context, c client.Client, ref clusterv1.ContractVersionedObjectReference, ns string) (*unstructured.Unstructured, schema.GroupVersionKind, error) {
	gvk, err := refGVK(ctx, c, ref)
	if err != nil {
		return nil, gvk, err
	}
	u, err := getUnstructured(ctx, c, gvk.GroupVersion().String(), gvk.Kind, ns, ref.Name)
	return u, gvk, err
}

// getUnstructured reads the object apiVersion, kind ns/name.
func getUnstructured(ctx context.Context, c client.Client, apiVersion, kind, ns, name string) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, u)
	return u, err
}

// decode converts an unstructured object into one of the partial views
// above through JSON, which tolerates the fields they leave out.
func decode(u *unstructured.Unstructured, out any) error {
	b, err := json.Marshal(u.Object)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}

// desiredReplicas is spec.replicas; the controller defaults an unset one to 1.
func desiredReplicas(mp *clusterv1.MachinePool) int32 { return ptr.Deref(mp.Spec.Replicas, 1) }

// rolloutPaused says whether the MachinePool's rollout is paused.
func rolloutPaused(mp *clusterv1.MachinePool) bool {
	return mp.Annotations[rolloutPausedAnnotation] == "true"
}

// machineHealth reads a pool Machine's health (HealthCheckSucceeded) and
// remediation (OwnerRemediated) as InstanceView reports them.
func machineHealth(m *clusterv1.Machine) (health, remediation string) {
	switch c := meta.FindStatusCondition(m.Status.Conditions, clusterv1.MachineHealthCheckSucceededCondition); {
	case c == nil:
	case c.Status == metav1.ConditionTrue:
		health = "Healthy"
	case c.Status == metav1.ConditionFalse:
		health = "Unhealthy"
	default:
		health = "Unknown"
	}
	if c := meta.FindStatusCondition(m.Status.Conditions, clusterv1.MachineOwnerRemediatedCondition); c != nil && c.Status == metav1.ConditionFalse {
		switch c.Reason {
		case clusterv1.MachineSetMachineRemediationMachineDeletingReason:
			remediation = "Remediating"
		case clusterv1.MachineSetMachineRemediationDeferredReason:
			remediation = "Deferred"
		default:
			remediation = "Waiting"
		}
	}
	return health, remediation
}

// oneLine joins the lines of a condition message written as a list (as
// upstream's MachineHealthCheck writes "Health check failed:\n  * ...").
func oneLine(msg string) string {
	var parts []string
	for _, l := range strings.Split(msg, "\n") {
		if l = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "* ")); l != "" {
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, " ")
}
