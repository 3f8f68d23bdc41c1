package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// ClusterPhase is a coarse summary of where a Cluster is in its lifecycle.
type ClusterPhase string

// Cluster phases, as Cluster API spells them.
const (
	// ClusterPhasePending is the first phase of a new Cluster.
	ClusterPhasePending = ClusterPhase("Pending")
	// ClusterPhaseProvisioning: the infrastructure is being created.
	ClusterPhaseProvisioning = ClusterPhase("Provisioning")
	// ClusterPhaseProvisioned: the infrastructure and control plane endpoint exist.
	ClusterPhaseProvisioned = ClusterPhase("Provisioned")
	// ClusterPhaseDeleting: the Cluster is being deleted.
	ClusterPhaseDeleting = ClusterPhase("Deleting")
	// ClusterPhaseFailed: a terminal failure needs user intervention.
	ClusterPhaseFailed = ClusterPhase("Failed")
	// ClusterPhaseUnknown: the phase cannot be determined.
	ClusterPhaseUnknown = ClusterPhase("Unknown")
)

// ClusterSpec is the desired state of a Cluster. mpool reads clusterName references and
// the kubeconfig Secret; the other fields are accepted and kept so that Cluster API
// manifests apply unchanged.
type ClusterSpec struct {
	// Paused pauses reconciliation of the Cluster and of the objects that belong to it.
	// +optional
	Paused bool `json:"paused,omitempty"`

	// ClusterNetwork is the cluster's network configuration.
	// +optional
	ClusterNetwork *ClusterNetwork `json:"clusterNetwork,omitempty"`

	// ControlPlaneEndpoint is the endpoint of the workload cluster's API server.
	// +optional
	ControlPlaneEndpoint APIEndpoint `json:"controlPlaneEndpoint,omitempty"`

	// ControlPlaneRef is a reference to the control plane provider object.
	// +optional
	ControlPlaneRef *corev1.ObjectReference `json:"controlPlaneRef,omitempty"`

	// InfrastructureRef is a reference to the provider-specific cluster infrastructure object.
	// +optional
	InfrastructureRef *corev1.ObjectReference `json:"infrastructureRef,omitempty"`

	// Topology describes a managed topology built from a ClusterClass. It is accepted and
	// preserved; mpool does not act on it.
	// +optional
	Topology *Topology `json:"topology,omitempty"`

	// AvailabilityGates are additional conditions the Cluster's Available condition
	// depends on.
	// +optional
	// +listType=map
	// +listMapKey=conditionType
	// +kubebuilder:validation:MaxItems=32
	AvailabilityGates []ClusterAvailabilityGate `json:"availabilityGates,omitempty"`
}

// ClusterNetwork is the network configuration of a cluster.
type ClusterNetwork struct {
	// APIServerPort is the port the API server binds to. Defaults to 6443.
	// +optional
	APIServerPort *int32 `json:"apiServerPort,omitempty"`

	// Services is the network range of Service VIPs.
	// +optional
	Services *NetworkRanges `json:"services,omitempty"`

	// Pods is the network range of Pod IPs.
	// +optional
	Pods *NetworkRanges `json:"pods,omitempty"`

	// ServiceDomain is the domain name of Services, for example cluster.local.
	// +optional
	ServiceDomain string `json:"serviceDomain,omitempty"`
}

// NetworkRanges is a list of CIDR blocks.
type NetworkRanges struct {
	// CIDRBlocks are the CIDR blocks of the range.
	CIDRBlocks []string `json:"cidrBlocks"`
}

// APIEndpoint is the address of an API server.
type APIEndpoint struct {
	// Host is the hostname or IP the API server is served on.
	// +optional
	Host string `json:"host"`

	// Port is the port the API server is served on.
	// +optional
	Port int32 `json:"port"`
}

// IsZero reports whether the endpoint is unset.
func (v APIEndpoint) IsZero() bool { return v.Host == "" && v.Port == 0 }

// Topology is a Cluster's managed topology. Only the top-level fields are typed; the
// nested sections are preserved as written.
type Topology struct {
	// Class is the name of the ClusterClass the topology is built from.
	// +required
	Class string `json:"class"`

	// ClassNamespace is the namespace of the ClusterClass.
	// +optional
	ClassNamespace string `json:"classNamespace,omitempty"`

	// Version is the Kubernetes version of the cluster.
	// +required
	Version string `json:"version"`

	// RolloutAfter performs a rollout of the entire cluster after the given time.
	// +optional
	RolloutAfter *metav1.Time `json:"rolloutAfter,omitempty"`

	// ControlPlane describes the cluster's control plane.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	ControlPlane *runtime.RawExtension `json:"controlPlane,omitempty"`

	// Workers describes the cluster's worker machine deployments and machine pools.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	Workers *runtime.RawExtension `json:"workers,omitempty"`

	// Variables are values for the ClusterClass's variables.
	// +optional
	// +listType=map
	// +listMapKey=name
	Variables []ClusterVariable `json:"variables,omitempty"`
}

// ClusterVariable is a value for a ClusterClass variable.
type ClusterVariable struct {
	// Name of the variable.
	// +required
	Name string `json:"name"`

	// DefinitionFrom is the patch that defined the variable (deprecated in Cluster API).
	// +optional
	DefinitionFrom string `json:"definitionFrom,omitempty"`

	// Value of the variable, any JSON.
	// +required
	Value apiextensionsv1.JSON `json:"value"`
}

// ClusterAvailabilityGate is an additional condition a Cluster's Available condition
// depends on.
type ClusterAvailabilityGate struct {
	// ConditionType is the type of a condition in the Cluster's status.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=316
	ConditionType string `json:"conditionType"`

	// Polarity of the condition: Positive (default) or Negative.
	// +optional
	// +kubebuilder:validation:Enum=Positive;Negative
	Polarity string `json:"polarity,omitempty"`
}

// FailureDomainSpec describes one failure domain.
type FailureDomainSpec struct {
	// ControlPlane says whether the failure domain is suitable for control plane machines.
	// +optional
	ControlPlane bool `json:"controlPlane,omitempty"`

	// Attributes are free-form attributes of the failure domain.
	// +optional
	Attributes map[string]string `json:"attributes,omitempty"`
}

// FailureDomains maps failure domain names to their description.
type FailureDomains map[string]FailureDomainSpec

// ClusterStatus is the observed state of a Cluster.
type ClusterStatus struct {
	// FailureDomains are the failure domains the infrastructure provider reports.
	// +optional
	FailureDomains FailureDomains `json:"failureDomains,omitempty"`

	// FailureReason is set on a terminal problem, as a succinct machine-readable value.
	// +optional
	FailureReason *string `json:"failureReason,omitempty"`

	// FailureMessage is set on a terminal problem, as a human-readable message.
	// +optional
	FailureMessage *string `json:"failureMessage,omitempty"`

	// Phase is a coarse summary of the Cluster's lifecycle.
	// +optional
	Phase string `json:"phase,omitempty"`

	// InfrastructureReady is true when the cluster infrastructure is ready.
	// +optional
	InfrastructureReady bool `json:"infrastructureReady"`

	// ControlPlaneReady is true when the control plane is ready.
	// +optional
	ControlPlaneReady bool `json:"controlPlaneReady"`

	// Conditions are the observations of the Cluster's current state.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// ObservedGeneration is the latest generation the controller observed.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=clusters,shortName=cl,scope=Namespaced,categories=cluster-api
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="ClusterClass",type="string",JSONPath=".spec.topology.class",description="ClusterClass of this Cluster, empty if not managed by a ClusterClass"
// +kubebuilder:printcolumn:name="Phase",type="string",JSONPath=".status.phase",description="Cluster phase"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time since creation"
// +kubebuilder:printcolumn:name="Version",type="string",JSONPath=".spec.topology.version",description="Kubernetes version of the Cluster"

// Cluster is a Kubernetes cluster managed with Cluster API.
type Cluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	Spec ClusterSpec `json:"spec,omitempty"`
	// Status is the observed state.
	Status ClusterStatus `json:"status,omitempty"`
}

// GetConditions returns the Cluster's conditions.
func (c *Cluster) GetConditions() []metav1.Condition { return c.Status.Conditions }

// SetConditions replaces the Cluster's conditions.
func (c *Cluster) SetConditions(conds []metav1.Condition) { c.Status.Conditions = conds }

// +kubebuilder:object:root=true

// ClusterList is a list of Clusters.
type ClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the Clusters.
	Items []Cluster `json:"items"`
}
