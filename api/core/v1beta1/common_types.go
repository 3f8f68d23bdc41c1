package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Labels and annotations shared with Cluster API.
const (
	// ClusterNameLabel is the label set on objects that belong to a Cluster; its value is
	// the Cluster's name.
	ClusterNameLabel = "cluster.x-k8s.io/cluster-name"

	// MachinePoolNameLabel is the label set on Machines (and infra machines) that belong
	// to a MachinePool; its value is the MachinePool's name.
	MachinePoolNameLabel = "cluster.x-k8s.io/pool-name"

	// DeleteMachineAnnotation marks a Machine (or infra machine) to be deleted first when
	// its pool scales in or rolls.
	DeleteMachineAnnotation = "cluster.x-k8s.io/delete-machine"

	// ReplicasManagedByAnnotation on a MachinePool says that an external actor (for
	// example the cluster autoscaler or the cloud's own autoscaling) owns the replica
	// count; mpool then reports replicas instead of enforcing them.
	ReplicasManagedByAnnotation = "cluster.x-k8s.io/replicas-managed-by"

	// PausedAnnotation on an object (or its Cluster) pauses its reconciliation.
	PausedAnnotation = "cluster.x-k8s.io/paused"

	// AutoscalerMinSizeAnnotation is the cluster autoscaler's minimum size of a node group.
	AutoscalerMinSizeAnnotation = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size"

	// AutoscalerMaxSizeAnnotation is the cluster autoscaler's maximum size of a node group.
	AutoscalerMaxSizeAnnotation = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size"

	// ClusterNameAnnotation is set on workload-cluster Nodes to the owning Cluster's name.
	ClusterNameAnnotation = "cluster.x-k8s.io/cluster-name"

	// NodeUninitializedTaintKey is the key of the taint a Node of a pool
	// registers with (NoSchedule) until the MachinePool controller has
	// matched it to its pool and removes it.
	NodeUninitializedTaintKey = "node.cluster.x-k8s.io/uninitialized"

	// ClusterNamespaceAnnotation is set on workload-cluster Nodes to the owning Cluster's
	// namespace.
	ClusterNamespaceAnnotation = "cluster.x-k8s.io/cluster-namespace"

	// MachineAnnotation is set on workload-cluster Nodes to the name of their Machine.
	MachineAnnotation = "cluster.x-k8s.io/machine"

	// OwnerKindAnnotation is set on workload-cluster Nodes to the kind of the object that
	// owns their Machine (for pool Machines: MachinePool).
	OwnerKindAnnotation = "cluster.x-k8s.io/owner-kind"

	// OwnerNameAnnotation is set on workload-cluster Nodes to the name of the object that
	// owns their Machine.
	OwnerNameAnnotation = "cluster.x-k8s.io/owner-name"
)

// Finalizers.
const (
	// ClusterFinalizer is the finalizer the Cluster controller adds to Clusters.
	ClusterFinalizer = "cluster.cluster.x-k8s.io"

	// MachineFinalizer is the finalizer the Machine controller adds to Machines.
	MachineFinalizer = "machine.cluster.x-k8s.io"

	// MachinePoolFinalizer is the finalizer the MachinePool controller adds to MachinePools.
	MachinePoolFinalizer = "machinepool.cluster.x-k8s.io"
)

// Condition types shared by the core objects.
const (
	// ReadyCondition summarises the other conditions of an object.
	ReadyCondition = "Ready"

	// BootstrapReadyCondition reports whether the bootstrap data is available.
	BootstrapReadyCondition = "BootstrapReady"

	// InfrastructureReadyCondition reports whether the infrastructure object is ready.
	InfrastructureReadyCondition = "InfrastructureReady"

	// ControlPlaneReadyCondition reports whether a Cluster's control plane is ready.
	ControlPlaneReadyCondition = "ControlPlaneReady"

	// ReplicasReadyCondition reports whether all of a MachinePool's replicas are ready.
	ReplicasReadyCondition = "ReplicasReady"

	// MachineNodeHealthyCondition reports the health of a Machine's Node.
	MachineNodeHealthyCondition = "NodeHealthy"

	// DrainingSucceededCondition reports whether draining a Machine's Node succeeded.
	DrainingSucceededCondition = "DrainingSucceeded"

	// PausedCondition reports whether reconciliation of an object is paused.
	PausedCondition = "Paused"
)

// Condition reasons shared by the core objects.
const (
	// WaitingForBootstrapDataReason: the bootstrap provider has not produced data yet.
	WaitingForBootstrapDataReason = "WaitingForBootstrapData"

	// WaitingForInfrastructureReason: the infrastructure object is not ready yet.
	WaitingForInfrastructureReason = "WaitingForInfrastructure"

	// WaitingForClusterInfrastructureReason: the Cluster's infrastructure is not ready yet.
	WaitingForClusterInfrastructureReason = "WaitingForClusterInfrastructure"

	// WaitingForControlPlaneReason: the Cluster's control plane is not ready yet.
	WaitingForControlPlaneReason = "WaitingForControlPlane"

	// WaitingForReplicasReadyReason: fewer replicas are ready than desired.
	WaitingForReplicasReadyReason = "WaitingForReplicasReady"

	// ReadyReason: the condition is true.
	ReadyReason = "Ready"

	// ObjectNotFoundReason: a referenced object does not exist.
	ObjectNotFoundReason = "ObjectNotFound"

	// DeletingReason: the object is being deleted.
	DeletingReason = "Deleting"

	// DrainingReason: a Node is being drained.
	DrainingReason = "Draining"

	// DrainingFailedReason: draining a Node failed.
	DrainingFailedReason = "DrainingFailed"

	// PausedReason: reconciliation is paused.
	PausedReason = "Paused"

	// NotPausedReason: reconciliation is not paused.
	NotPausedReason = "NotPaused"

	// InternalErrorReason: the controller could not compute the condition.
	InternalErrorReason = "InternalError"
)

// ObjectMeta is the metadata a template stamps onto the objects it creates: labels and
// annotations only.
type ObjectMeta struct {
	// Labels to set on the objects created from the template.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`

	// Annotations to set on the objects created from the template.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// MachineTemplateSpec describes the Machines a pool creates.
type MachineTemplateSpec struct {
	// Metadata stamped onto every Machine of the pool.
	// +optional
	ObjectMeta ObjectMeta `json:"metadata,omitempty"`

	// Spec of every Machine of the pool.
	// +optional
	Spec MachineSpec `json:"spec,omitempty"`
}

// MachineSpec is the desired state of a Machine (and of each instance of a MachinePool).
type MachineSpec struct {
	// ClusterName is the name of the Cluster this object belongs to.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +required
	ClusterName string `json:"clusterName"`

	// Bootstrap is a reference to a bootstrap provider object (or the name of a Secret
	// that already holds the bootstrap data).
	// +required
	Bootstrap Bootstrap `json:"bootstrap"`

	// InfrastructureRef is a reference to the provider-specific infrastructure object.
	// +required
	// +kubebuilder:validation:XValidation:rule="has(self.kind) && self.kind != ''",message="infrastructureRef.kind must be set",fieldPath=".kind"
	// +kubebuilder:validation:XValidation:rule="has(self.name) && self.name != ''",message="infrastructureRef.name must be set",fieldPath=".name"
	InfrastructureRef corev1.ObjectReference `json:"infrastructureRef"`

	// Version is the Kubernetes version of the Node's control plane components, for
	// example v1.31.2.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:Pattern=`^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`
	Version *string `json:"version,omitempty"`

	// ProviderID is the identification ID of the machine provided by the provider. It
	// matches the providerID of the Node in the workload cluster.
	// +optional
	// +kubebuilder:validation:MinLength=1
	ProviderID *string `json:"providerID,omitempty"`

	// FailureDomain is the failure domain the machine is created in.
	// +optional
	FailureDomain *string `json:"failureDomain,omitempty"`

	// ReadinessGates are additional conditions the Machine controller takes into account
	// when computing the Ready condition.
	// +optional
	// +listType=map
	// +listMapKey=conditionType
	// +kubebuilder:validation:MaxItems=32
	ReadinessGates []MachineReadinessGate `json:"readinessGates,omitempty"`

	// NodeDrainTimeout is the total time the controller spends draining a node. Zero
	// (the default) means wait forever.
	// +optional
	NodeDrainTimeout *metav1.Duration `json:"nodeDrainTimeout,omitempty"`

	// NodeVolumeDetachTimeout is the total time spent waiting for all volumes to be
	// detached. Zero means wait forever.
	// +optional
	NodeVolumeDetachTimeout *metav1.Duration `json:"nodeVolumeDetachTimeout,omitempty"`

	// NodeDeletionTimeout is how long the controller retries deleting the Node once the
	// machine is gone. Defaults to 10s; zero means retry forever.
	// +optional
	NodeDeletionTimeout *metav1.Duration `json:"nodeDeletionTimeout,omitempty"`
}

// MachineReadinessGate is an additional condition the Machine's Ready condition depends on.
type MachineReadinessGate struct {
	// ConditionType is the type of a condition in the Machine's status.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=316
	ConditionType string `json:"conditionType"`

	// Polarity of the condition: Positive (default) when True means ready, Negative when
	// False means ready.
	// +optional
	// +kubebuilder:validation:Enum=Positive;Negative
	Polarity string `json:"polarity,omitempty"`
}

// Bootstrap says where a machine's bootstrap data comes from. Exactly one of ConfigRef
// and DataSecretName is normally set; ConfigRef's provider eventually fills
// DataSecretName.
// +kubebuilder:validation:XValidation:rule="has(self.configRef) || has(self.dataSecretName)",message="expected either bootstrap.configRef or bootstrap.dataSecretName to be populated"
type Bootstrap struct {
	// ConfigRef is a reference to a bootstrap provider object, for example a KubeadmConfig.
	// +optional
	// +kubebuilder:validation:XValidation:rule="has(self.kind) && self.kind != ''",message="bootstrap.configRef.kind must be set",fieldPath=".kind"
	// +kubebuilder:validation:XValidation:rule="has(self.name) && self.name != ''",message="bootstrap.configRef.name must be set",fieldPath=".name"
	ConfigRef *corev1.ObjectReference `json:"configRef,omitempty"`

	// DataSecretName is the name of the Secret that stores the bootstrap data. An empty
	// string means no bootstrap data is needed.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	DataSecretName *string `json:"dataSecretName,omitempty"`
}

// ClusterSecretType is the type Cluster API gives the Secrets it keeps for a
// Cluster: bootstrap data, <cluster>-kubeconfig, <cluster>-ca.
const ClusterSecretType corev1.SecretType = "cluster.x-k8s.io/secret"
