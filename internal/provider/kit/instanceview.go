package kit

import (
	"cmp"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/mpool-dev/mpool/internal/provider/contract"
)

// InstanceRecord is what a per-instance object records, gathered by its
// provider's ReadInstance from its own fields: the fields every
// per-instance kind has under the same names, and the state in the
// cloud's word with its meaning in mpool's vocabulary.
type InstanceRecord struct {
	// InstanceID and ProviderID are spec.instanceID and spec.providerID.
	InstanceID, ProviderID string
	// CloudState is the state in the cloud's word as the object records it,
	// "" before the engine's first report.
	CloudState string
	// State is what CloudState means (see contract.InstanceState).
	State contract.InstanceState
	// Zone is the instance's availability zone.
	Zone string
	// Ready, LatestModelApplied, Version, NodeRef, FailureReason,
	// FailureMessage and Conditions are the status fields of the same
	// names.
	Ready, LatestModelApplied     bool
	Version                       string
	NodeRef                       *corev1.ObjectReference
	FailureReason, FailureMessage *string
	Conditions                    []metav1.Condition
}

// InstanceView is the contract's view of obj from what it records: Unknown
// before the engine's first report (no CloudState), Deleting once obj is
// being deleted, Failed when it records a failure (clouds that keep a
// failed instance in service say so only there), else r.State; the
// cloud's word is left out where it is mpool's.
func InstanceView(obj metav1.Object, r InstanceRecord) contract.InstanceView {
	reported := r.CloudState != ""
	state := r.State
	switch {
	case obj.GetDeletionTimestamp() != nil:
		state = contract.InstanceDeleting
	case !reported || state == "":
		state = contract.InstanceUnknown
	case r.FailureReason != nil && state != contract.InstanceDeleting:
		state = contract.InstanceFailed
	}
	cloud := r.CloudState
	if cloud == string(r.State) {
		cloud = "" // the cloud's word is mpool's: nothing to add
	}
	return contract.InstanceView{
		InstanceID:     r.InstanceID,
		ProviderID:     r.ProviderID,
		State:          state,
		CloudState:     cloud,
		Zone:           r.Zone,
		Ready:          r.Ready,
		Reported:       reported,
		UpToDate:       r.LatestModelApplied,
		Version:        r.Version,
		NodeRef:        r.NodeRef,
		FailureReason:  ptr.Deref(r.FailureReason, ""),
		FailureMessage: ptr.Deref(r.FailureMessage, ""),
		Conditions:     r.Conditions,
	}
}

// StateWords are the words a provider's per-instance kind records the
// engine's states in (WriteInstanceStatus): the cloud's own vocabulary,
// one word per state a report can carry. Empty Booting is Pending's word
// and empty Failed is Running's (a cloud that keeps a failed instance in
// service says so only in failureReason). W is the field's type.
type StateWords[W ~string] struct {
	Pending, Booting, Running, Failed, Deleting W
	// Also are the cloud's other words for mpool's states (words the
	// engine does not write but the cloud has), by the state they mean.
	Also map[W]contract.InstanceState
	// Other is what any other word means to the provider; "" for none
	// (the view says Unknown).
	Other contract.InstanceState
}

// Word is the cloud's word for s: Running's for Running and Unknown.
func (w StateWords[W]) Word(s contract.InstanceState) W {
	switch s {
	case contract.InstancePending:
		return w.Pending
	case contract.InstanceBooting:
		return cmp.Or(w.Booting, w.Pending)
	case contract.InstanceDeleting:
		return w.Deleting
	case contract.InstanceFailed:
		return cmp.Or(w.Failed, w.Running)
	default:
		return w.Running
	}
}

// State is what the cloud's word means, the reverse of Word: the state
// whose word it is, else the state Also gives it, else Other. No word
// ("", before the engine's first report) is no state: the view says
// Unknown.
func (w StateWords[W]) State(word W) contract.InstanceState {
	if word == "" {
		return ""
	}
	for _, ws := range []struct {
		word  W
		state contract.InstanceState
	}{{w.Pending, contract.InstancePending}, {w.Booting, contract.InstanceBooting}, {w.Running, contract.InstanceRunning},
		{w.Failed, contract.InstanceFailed}, {w.Deleting, contract.InstanceDeleting}} {
		if ws.word == word {
			return ws.state
		}
	}
	if s, ok := w.Also[word]; ok {
		return s
	}
	return w.Other
}
