package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta1"
)

// AWSClusterKind is the kind of the AWS cluster infrastructure object.
const AWSClusterKind = "AWSCluster"

// AWSClusterStaticIdentityKind is the kind of the AWS credentials object an
// AWSCluster's identityRef names.
const AWSClusterStaticIdentityKind = "AWSClusterStaticIdentity"

// The keys of an AWSClusterStaticIdentity's Secret, as CAPA reads them.
const (
	AWSAccessKeyIDKey     = "AccessKeyID"
	AWSSecretAccessKeyKey = "SecretAccessKey"
	AWSSessionTokenKey    = "SessionToken"
)

// AWSClusterSpec is the desired state of an AWSCluster: where in AWS a cluster's
// machines live. It is the subset of Cluster API Provider AWS's AWSClusterSpec that a
// machine pool needs, with CAPA's field names, so that CAPA-shaped manifests apply. The
// parts of CAPA's spec that describe infrastructure mpool does not manage (load
// balancers, bastion, S3 bucket, image lookup formats) are accepted and kept as written,
// unvalidated and unread.
type AWSClusterSpec struct {
	// Region is the AWS region of the cluster, e.g. us-east-1.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:Pattern=`^[a-z]{2}(-[a-z]+)+-[0-9]+$`
	Region string `json:"region"`

	// NetworkSpec is the cluster's VPC and subnets.
	// +optional
	NetworkSpec AWSNetworkSpec `json:"network,omitempty"`

	// SSHKeyName is the EC2 key pair of the cluster's instances, unless a pool's launch
	// template names another.
	// +optional
	SSHKeyName *string `json:"sshKeyName,omitempty"`

	// ControlPlaneEndpoint is the endpoint of the workload cluster's API server. mpool
	// does not manage control planes and keeps whatever is set.
	// +optional
	ControlPlaneEndpoint clusterv1.APIEndpoint `json:"controlPlaneEndpoint,omitempty"`

	// AdditionalTags are AWS tags set on every resource the provider creates for the
	// cluster, in addition to its own (the owned-cluster tag).
	// +optional
	AdditionalTags Tags `json:"additionalTags,omitempty"`

	// IdentityRef names the credentials the provider uses for this cluster:
	// an AWSClusterStaticIdentity. Unset, the manager's own credentials (the SDK's
	// default chain: environment, shared config) are used.
	// +optional
	IdentityRef *AWSIdentityReference `json:"identityRef,omitempty"`

	// ImageLookupFormat, ImageLookupOrg and ImageLookupBaseOS tune how CAPA looks AMIs
	// up by Kubernetes version; mpool reads ImageLookupOrg and ImageLookupBaseOS.
	// +optional
	ImageLookupFormat string `json:"imageLookupFormat,omitempty"`
	// +optional
	ImageLookupOrg string `json:"imageLookupOrg,omitempty"`
	// +optional
	ImageLookupBaseOS string `json:"imageLookupBaseOS,omitempty"`

	// Bastion, ControlPlaneLoadBalancer and S3Bucket configure infrastructure mpool does
	// not manage; they are kept as written so that CAPA manifests apply.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	Bastion *runtime.RawExtension `json:"bastion,omitempty"`
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	ControlPlaneLoadBalancer *runtime.RawExtension `json:"controlPlaneLoadBalancer,omitempty"`
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	S3Bucket *runtime.RawExtension `json:"s3Bucket,omitempty"`
}

// AWSIdentityReference names the credentials of an AWSCluster.
type AWSIdentityReference struct {
	// Name of the identity.
	// +required
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
	// Kind of the identity. mpool reads AWSClusterStaticIdentity; CAPA's
	// AWSClusterControllerIdentity means the manager's own credentials.
	// +required
	// +kubebuilder:validation:Enum=AWSClusterControllerIdentity;AWSClusterRoleIdentity;AWSClusterStaticIdentity
	Kind string `json:"kind"`
}

// AWSNetworkSpec is an AWS cluster's network.
type AWSNetworkSpec struct {
	// VPC is the cluster's VPC.
	// +optional
	VPC AWSVPCSpec `json:"vpc,omitempty"`
	// Subnets are the VPC's subnets. A pool's instances go in the subnets it names, else
	// in the private subnets of its availability zones.
	// +optional
	// +kubebuilder:validation:MaxItems=256
	Subnets []AWSSubnetSpec `json:"subnets,omitempty"`
}

// AWSVPCSpec is a VPC.
type AWSVPCSpec struct {
	// ID of an existing VPC (vpc-...).
	// +optional
	ID string `json:"id,omitempty"`
	// CidrBlock of the VPC.
	// +optional
	CidrBlock string `json:"cidrBlock,omitempty"`
}

// AWSSubnetSpec is a subnet of the cluster's VPC.
type AWSSubnetSpec struct {
	// ID of the subnet (subnet-...).
	// +optional
	ID string `json:"id,omitempty"`
	// CidrBlock of the subnet.
	// +optional
	CidrBlock string `json:"cidrBlock,omitempty"`
	// AvailabilityZone of the subnet, e.g. us-east-1a.
	// +optional
	AvailabilityZone string `json:"availabilityZone,omitempty"`
	// IsPublic says whether the subnet routes to an internet gateway.
	// +optional
	IsPublic bool `json:"isPublic,omitempty"`
}

// AWSClusterStatus is the observed state of an AWSCluster.
type AWSClusterStatus struct {
	// Ready is true when the cluster's infrastructure is usable. mpool does not manage
	// it; a pool needs only the spec.
	// +optional
	Ready bool `json:"ready"`
	// Conditions are the observations of the cluster's current state.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=awsclusters,shortName=awsc,scope=Namespaced,categories=cluster-api
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Region",type="string",JSONPath=".spec.region",description="AWS region"
// +kubebuilder:printcolumn:name="VPC",type="string",JSONPath=".spec.network.vpc.id",description="VPC"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time since creation"

// AWSCluster is where in AWS a cluster's machines live: region, VPC and subnets, and the
// credentials to reach them.
type AWSCluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	Spec AWSClusterSpec `json:"spec,omitempty"`
	// Status is the observed state.
	Status AWSClusterStatus `json:"status,omitempty"`
}

// GetConditions returns the AWSCluster's conditions.
func (c *AWSCluster) GetConditions() []metav1.Condition { return c.Status.Conditions }

// SetConditions replaces the AWSCluster's conditions.
func (c *AWSCluster) SetConditions(conds []metav1.Condition) { c.Status.Conditions = conds }

// +kubebuilder:object:root=true

// AWSClusterList is a list of AWSClusters.
type AWSClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the AWSClusters.
	Items []AWSCluster `json:"items"`
}

// AWSClusterStaticIdentitySpec is a static access key, as CAPA defines it.
type AWSClusterStaticIdentitySpec struct {
	// SecretRef is the name of the Secret, in the manager's namespace, that holds the
	// access key: keys AccessKeyID, SecretAccessKey and optionally SessionToken.
	// +required
	// +kubebuilder:validation:MinLength=1
	SecretRef string `json:"secretRef"`

	// AllowedNamespaces are the namespaces whose AWSClusters may use this identity, as
	// CAPA reads it: unset, none; empty ({}), every namespace; otherwise a namespace in
	// list or matching selector.
	// +optional
	AllowedNamespaces *AllowedNamespaces `json:"allowedNamespaces,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=awsclusterstaticidentities,shortName=awssi,scope=Cluster,categories=cluster-api
// +kubebuilder:storageversion

// AWSClusterStaticIdentity is an AWS access key the provider uses for the AWSClusters
// that name it. Cluster-scoped, as in CAPA; its Secret lives in the manager's
// namespace.
type AWSClusterStaticIdentity struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	Spec AWSClusterStaticIdentitySpec `json:"spec,omitempty"`
}

// +kubebuilder:object:root=true

// AWSClusterStaticIdentityList is a list of AWSClusterStaticIdentities.
type AWSClusterStaticIdentityList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the identities.
	Items []AWSClusterStaticIdentity `json:"items"`
}

// AWSMachinePoolMachineSpec is the desired state of one instance of an Auto Scaling
// Group.
type AWSMachinePoolMachineSpec struct {
	// ProviderID is the instance's providerID (aws:///<az>/<instance-id>); it matches its
	// Node's spec.providerID.
	// +required
	// +kubebuilder:validation:MinLength=1
	ProviderID string `json:"providerID"`

	// InstanceID is the EC2 instance ID (i-...).
	// +optional
	InstanceID string `json:"instanceID,omitempty"`
}

// AWSMachinePoolMachineStatus is the observed state of one instance of an Auto Scaling
// Group.
type AWSMachinePoolMachineStatus struct {
	// NodeRef is a reference to the instance's Node.
	// +optional
	NodeRef *corev1.ObjectReference `json:"nodeRef,omitempty"`
	// Version is the Kubernetes version the instance runs.
	// +optional
	Version string `json:"version,omitempty"`
	// LifecycleState is the instance's Auto Scaling lifecycle state (Pending, InService,
	// Terminating, ...).
	// +optional
	LifecycleState string `json:"lifecycleState,omitempty"`
	// AvailabilityZone of the instance.
	// +optional
	AvailabilityZone string `json:"availabilityZone,omitempty"`
	// LaunchTemplateVersion the instance was launched from.
	// +optional
	LaunchTemplateVersion string `json:"launchTemplateVersion,omitempty"`
	// LatestModelApplied is true when the instance runs the pool's current launch
	// template version.
	// +optional
	LatestModelApplied bool `json:"latestModelApplied"`
	// Ready is true when the instance is running and its Node is Ready.
	// +optional
	Ready bool `json:"ready"`
	// FailureReason is set on a terminal problem, as a succinct machine-readable value.
	// +optional
	FailureReason *string `json:"failureReason,omitempty"`
	// FailureMessage is set on a terminal problem, as a human-readable message.
	// +optional
	FailureMessage *string `json:"failureMessage,omitempty"`
	// Conditions are the observations of the instance's current state.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=awsmachinepoolmachines,shortName=awsmpm,scope=Namespaced,categories=cluster-api
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Version",type="string",JSONPath=".status.version",description="Kubernetes version"
// +kubebuilder:printcolumn:name="Ready",type="boolean",JSONPath=".status.ready",description="Instance is ready"
// +kubebuilder:printcolumn:name="State",type="string",JSONPath=".status.lifecycleState",description="Auto Scaling lifecycle state"
// +kubebuilder:printcolumn:name="LatestModel",type="boolean",JSONPath=".status.latestModelApplied",description="Instance runs the current launch template version"
// +kubebuilder:printcolumn:name="ProviderID",type="string",priority=1,JSONPath=".spec.providerID",description="Provider ID"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time since creation"

// AWSMachinePoolMachine is one instance of an AWSMachinePool's Auto Scaling Group.
// Deleting it drains and terminates that instance. CAPA represents machine pool
// instances with AWSMachine objects, whose spec repeats a whole machine's template; a
// per-instance kind like CAPZ's AzureMachinePoolMachine says only what an instance of a
// pool has of its own.
type AWSMachinePoolMachine struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	Spec AWSMachinePoolMachineSpec `json:"spec,omitempty"`
	// Status is the observed state.
	Status AWSMachinePoolMachineStatus `json:"status,omitempty"`
}

// GetConditions returns the instance's conditions.
func (m *AWSMachinePoolMachine) GetConditions() []metav1.Condition { return m.Status.Conditions }

// SetConditions replaces the instance's conditions.
func (m *AWSMachinePoolMachine) SetConditions(c []metav1.Condition) { m.Status.Conditions = c }

// +kubebuilder:object:root=true

// AWSMachinePoolMachineList is a list of AWSMachinePoolMachines.
type AWSMachinePoolMachineList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the instances.
	Items []AWSMachinePoolMachine `json:"items"`
}

func init() {
	SchemeBuilder.Register(&AWSCluster{}, &AWSClusterList{}, &AWSClusterStaticIdentity{}, &AWSClusterStaticIdentityList{},
		&AWSMachinePoolMachine{}, &AWSMachinePoolMachineList{})
}
