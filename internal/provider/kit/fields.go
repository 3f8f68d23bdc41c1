package kit

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mpool-dev/mpool/internal/provider/contract"
)

// InstanceFields are the fields of one per-instance object that every
// per-instance kind has under the same names: spec.instanceID and
// spec.providerID; status.ready, latestModelApplied, version, nodeRef,
// failureReason, failureMessage and conditions, bound to one object
// (Objects.Instance), so that what an Adapter's WriteInstanceSpec and
// WriteInstanceStatus write there and what its ReadInstance reads back are
// mapped in one place; it maps the rest (the state in the cloud's word,
// the zone) itself.
type InstanceFields struct {
	// Object is the per-instance object the fields are of.
	Object metav1.Object
	// InstanceID and ProviderID are spec.instanceID and spec.providerID.
	InstanceID, ProviderID *string
	// Ready, LatestModelApplied, Version, NodeRef, FailureReason,
	// FailureMessage and Conditions are the status fields of those names.
	Ready, LatestModelApplied     *bool
	Version                       *string
	NodeRef                       **corev1.ObjectReference
	FailureReason, FailureMessage **string
	Conditions                    *[]metav1.Condition
}

// WriteSpec sets the instance's ID and providerID: an Adapter's
// WriteInstanceSpec.
func (f InstanceFields) WriteSpec(instanceID, providerID string) {
	*f.InstanceID, *f.ProviderID = instanceID, providerID
}

// WriteStatus writes r's readiness, model, Node version and reference and
// failure into the status: the part of an Adapter's WriteInstanceStatus
// every kind shares. It assigns the fields and never modifies what they
// point to.
func (f InstanceFields) WriteStatus(r contract.InstanceReport) {
	*f.Ready = r.Ready
	*f.LatestModelApplied = r.LatestModelApplied
	*f.Version = r.Version
	*f.NodeRef = r.NodeRef
	*f.FailureReason, *f.FailureMessage = r.FailureReason, r.FailureMessage
}

// View is the contract's view of the object (see InstanceView): what the
// fields record, with the state as the kind records it (cloudState, in
// the cloud's word, and what it means, state) and the instance's zone.
func (f InstanceFields) View(cloudState string, state contract.InstanceState, zone string) contract.InstanceView {
	return InstanceView(f.Object, InstanceRecord{
		InstanceID: *f.InstanceID, ProviderID: *f.ProviderID,
		CloudState: cloudState, State: state, Zone: zone,
		Ready: *f.Ready, LatestModelApplied: *f.LatestModelApplied, Version: *f.Version, NodeRef: *f.NodeRef,
		FailureReason: *f.FailureReason, FailureMessage: *f.FailureMessage, Conditions: *f.Conditions,
	})
}

// PoolFields are the fields of one infra pool that Cluster API's infra
// machine pool contract names, which every pool kind has under the same
// names: spec.providerIDList; status.ready, replicas,
// infrastructureMachineKind, failureReason, failureMessage and
// observedGeneration, bound to one pool (Objects.Pool).
type PoolFields struct {
	// ProviderIDList is spec.providerIDList.
	ProviderIDList *[]string
	// Ready, Replicas, InfrastructureMachineKind, FailureReason,
	// FailureMessage and ObservedGeneration are the status fields of those
	// names.
	Ready                         *bool
	Replicas                      *int32
	InfrastructureMachineKind     *string
	FailureReason, FailureMessage **string
	ObservedGeneration            *int64
}

// Write writes the contract's part of the engine's report r: what it
// always means (the machine kind, the failure, the generation), and, when
// the group was observed, the providerIDs, readiness and replicas (which
// otherwise keep their values). It returns r.Observed, for the provider's
// own fields of an observed group.
func (f PoolFields) Write(r contract.PoolReport) (observed bool) {
	*f.InfrastructureMachineKind = r.InfrastructureMachineKind
	*f.FailureReason, *f.FailureMessage = r.FailureReason, r.FailureMessage
	*f.ObservedGeneration = r.ObservedGeneration
	if r.Observed {
		*f.ProviderIDList = r.ProviderIDList
		*f.Ready = r.Ready
		*f.Replicas = r.Replicas
	}
	return r.Observed
}
