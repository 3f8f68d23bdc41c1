package contract

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/mpool-dev/mpool/internal/rollout"
	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// Pool is an infra machine pool object (LocalMachinePool, AzureMachinePool,
// ...): the engine reads it through its Adapter and reports into it. Like
// InstanceObject it is a pointer to a struct with Spec and Status fields,
// as Kubernetes API types are.
type Pool interface {
	client.Object
	GetConditions() []metav1.Condition
	SetConditions([]metav1.Condition)
}

// InstanceObject is a per-instance infra machine (LocalMachinePoolMachine,
// AzureMachinePoolMachine, ...), one per instance of the pool's group,
// controller-owned by the pool.
type InstanceObject interface {
	client.Object
	GetConditions() []metav1.Condition
	SetConditions([]metav1.Condition)
}

// Kinds describes a provider's Kubernetes kinds and what they need of the
// engine. It is a constant of the provider.
type Kinds struct {
	// Provider names the cloud in metrics, events and logs: "local",
	// "azure", "aws", "eks".
	Provider string
	// Pool is the infra pool's kind, e.g. LocalMachinePool.
	Pool string
	// Instance is the kind of the per-instance objects, e.g.
	// LocalMachinePoolMachine; reported in status.infrastructureMachineKind.
	Instance string
	// PoolFinalizer keeps a pool until its group is gone.
	PoolFinalizer string
	// InstanceFinalizer keeps a per-instance object until its instance is
	// gone.
	InstanceFinalizer string
	// InfraCluster is the kind of the Cluster's infrastructure object
	// (spec.infrastructureRef) that places the pool's groups (AzureCluster:
	// subscription, resource group, location, identity), "" when the
	// provider needs none.
	InfraCluster string
	// SelfBootstrapping is true when the cloud bootstraps its own instances
	// (an EKS managed node group: EKS writes its nodes' user data and joins
	// them itself), so that the MachinePool names no bootstrap data
	// (spec.template.spec.bootstrap.dataSecretName: ""). The engine then
	// does not wait for bootstrap data before it creates or scales the
	// group, and the model carries none.
	SelfBootstrapping bool
}

// Adapter maps one kind of infra pool onto the engine. It knows the kind's Go
// types and field layout; the engine knows everything else (observing,
// planning, draining, deleting, reporting). Implementations are stateless
// and do no I/O.
type Adapter interface {
	// Kinds describes the provider's kinds; the same value every call.
	Kinds() Kinds

	// NewPool returns an empty pool object.
	NewPool() Pool
	// NewInstance returns an empty per-instance object.
	NewInstance() InstanceObject
	// NewInstanceList returns an empty list of per-instance objects.
	NewInstanceList() client.ObjectList
	// NewInfraCluster returns an empty infrastructure cluster object of
	// Kinds().InfraCluster, nil when the provider needs none.
	NewInfraCluster() client.Object

	// GroupRef places the pool's scale group: its name — predictable
	// (derived from the pool's namespace and name, see GroupName), so that
	// a crash half-way through creating the group cannot leak it, and valid
	// for the cloud — and its scope, location and credentials, from the
	// Cluster's infrastructure object (nil for adapters that need none).
	// The engine calls it until the pool records the answer (see
	// GroupRefAnnotation); an error is reported, not retried.
	GroupRef(pool Pool, infraCluster client.Object) (scalegroup.Ref, error)
	// Desired maps the pool, its owner MachinePool and its Cluster's
	// infrastructure object onto the instance model and the rollout
	// strategy. An error means the spec cannot be mapped (it is reported,
	// not retried). Its Strategy and SkipModelReconciliation are
	// ReadPool's Rollout, with the MachinePool's minReadySeconds applied.
	Desired(pool Pool, owner Owner) (Desired, error)
	// WritePool writes the engine's report into the pool: spec.providerIDList
	// and the status fields of the infra machine pool contract. The engine
	// has set its conditions (ScaleGroupReady, ...) on the pool before.
	WritePool(pool Pool, r PoolReport)
	// WriteInstanceSpec sets a new per-instance object's spec.
	WriteInstanceSpec(obj InstanceObject, instanceID, providerID string)
	// WriteInstanceStatus writes the engine's report into a per-instance
	// object's status (conditions are set by the engine). It assigns the
	// status fields and never modifies what they point to: the engine calls
	// it on shallow copies of cached objects.
	WriteInstanceStatus(obj InstanceObject, r InstanceReport)

	Reader
}

// Reader reads a provider's objects as provider-neutral views. It is the
// only code that knows the kinds' field layout; what WritePool and
// WriteInstanceStatus wrote, ReadPool and ReadInstance read back.
type Reader interface {
	// ReadPool reads what a pool says in provider-neutral terms: how it
	// rolls, the Kubernetes version it records. An error means the spec
	// cannot be mapped (the engine reports the same error from Desired).
	ReadPool(pool Pool) (PoolView, error)
	// ReadInstance reads a per-instance object. It never fails: what the
	// object does not say is left empty (State is InstanceUnknown before
	// the engine's first report).
	ReadInstance(obj InstanceObject) InstanceView
}

// Owner is what the engine read from the pool's owner MachinePool.
type Owner struct {
	// MachinePool is the owner (read-only).
	MachinePool *clusterv1.MachinePool
	// Version is spec.template.spec.version, "" when unset.
	Version string
	// InfraCluster is the Cluster's infrastructure object, of the adapter's
	// Kinds().InfraCluster (read-only); nil for adapters that need none.
	InfraCluster client.Object
	// BootstrapData is the content of the bootstrap data Secret (key
	// "value"), nil when it is not available yet. It holds a bootstrap
	// token: never log it.
	BootstrapData []byte
}

// ClusterName is the name of the owner MachinePool's Cluster, "" when it
// is not known.
func (o Owner) ClusterName() string {
	if o.MachinePool == nil {
		return ""
	}
	return o.MachinePool.Spec.ClusterName
}

// Desired is what an adapter makes of a pool.
type Desired struct {
	// Model is what new instances are created from, CustomData included;
	// the provider's own fields go in Model.Provider (hashed) and
	// Model.InPlace (applied in place, not hashed).
	Model scalegroup.Model
	// Strategy is the pool's rolling update strategy. The MachinePool's
	// minReadySeconds, when set, replaces the adapter's MinReadySeconds.
	Strategy rollout.Strategy
	// SkipModelReconciliation, when not empty, keeps this pool's
	// out-of-date instances and says why (AWS: "spec.refreshPreferences.disable
	// is true"): as with the SkipMachinePoolModelReconciliation gate, new
	// instances get the current model and existing ones stay until the pool
	// is scaled in or they are deleted.
	SkipModelReconciliation string
	// ReplicaRange, when set, is the cloud group's own [min, max] size
	// (EKS's scaling.minSize and maxSize). For a pool whose replicas an
	// external actor manages, the replicas are held inside it: the cloud
	// clamps its desired size into the range when the range changes (CAPA
	// #5746), and the engine must not keep asking for the old size.
	ReplicaRange *[2]int32
}

// InstanceReport is the engine's view of one instance.
type InstanceReport struct {
	// InstanceID is the instance's ID within its group.
	InstanceID string
	// ProviderID is the Node providerID of the instance.
	ProviderID string
	// Zone is where the instance runs.
	Zone string
	// State is the instance's lifecycle state.
	State InstanceState
	// Ready is true when the instance runs and its Node is Ready.
	Ready bool
	// LatestModelApplied is true when the instance runs the pool's current
	// model.
	LatestModelApplied bool
	// ModelHash is the hash of the model the instance was created from.
	ModelHash string
	// Version is the kubelet version of the instance's Node.
	Version string
	// NodeRef references the instance's Node, nil before it joins.
	NodeRef *corev1.ObjectReference
	// FailureReason and FailureMessage are set when the instance failed.
	FailureReason  *string
	FailureMessage *string
	// Message is the cloud's note on the instance: why it failed, or why it
	// has not joined the cluster.
	Message string
	// Template is what the cloud launched the instance from (AWS: its
	// launch template and version), nil when it does not say.
	Template *scalegroup.TemplateRef
	// JoinTimedOut is set when the instance has had no Node for the
	// engine's join timeout since its creation: it is being replaced.
	JoinTimedOut bool
}

// PoolReport is the engine's view of a pool, in the infra machine pool
// contract's terms.
type PoolReport struct {
	// Observed is false when the group could not be read: then only
	// ModelHash, InfrastructureMachineKind, FailureReason, FailureMessage and
	// ObservedGeneration are meant, and the other fields keep their values.
	Observed bool
	// ProviderIDList holds the providerID of every instance the group has
	// (not being deleted by the cloud), sorted.
	ProviderIDList []string
	// Ready is true when the group exists and no long-running change is in
	// progress.
	Ready bool
	// Replicas is the number of live instances (neither failed nor being
	// removed).
	Replicas int32
	// ModelHash is the hash of the pool's current instance model.
	ModelHash string
	// Instances describe the instances, ordered by ID: all of them up to
	// the engine's limit, beyond that those that need attention first.
	Instances []InstanceReport
	// Operation is the cloud's long-running change of the group in
	// progress, nil when it is at rest (or was not observed).
	Operation *scalegroup.Operation
	// Template is the cloud object the group launches new instances from
	// (AWS: its launch template and version), nil when the cloud has none
	// (or it was not observed).
	Template *scalegroup.TemplateRef
	// InfrastructureMachineKind is the adapter's Kinds().Instance.
	InfrastructureMachineKind string
	// FailureReason and FailureMessage are set on a problem retrying cannot
	// fix (an invalid spec).
	FailureReason  *string
	FailureMessage *string
	// ObservedGeneration is the pool generation this report is for.
	ObservedGeneration int64
}
