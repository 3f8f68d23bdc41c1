package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta1"
)

// AzureClusterKind is the kind of the Azure cluster infrastructure object.
const AzureClusterKind = "AzureCluster"

// AzureClusterIdentityKind is the kind of the Azure credentials object an AzureCluster's
// identityRef names.
const AzureClusterIdentityKind = "AzureClusterIdentity"

// SubnetRole is the role of a subnet in an Azure cluster's virtual network, as CAPZ names
// it.
// +kubebuilder:validation:Enum=node;control-plane;bastion;cluster
type SubnetRole string

const (
	// SubnetNode is a subnet of worker VMs: the one an AzureMachinePool's VMs join when its
	// template names no subnet.
	SubnetNode SubnetRole = "node"
	// SubnetControlPlane is the subnet of control plane VMs.
	SubnetControlPlane SubnetRole = "control-plane"
	// SubnetBastion is the subnet of the Azure Bastion host.
	SubnetBastion SubnetRole = "bastion"
	// SubnetCluster is a subnet shared by control plane and worker VMs.
	SubnetCluster SubnetRole = "cluster"
)

// Azure cloud environments (AzureCluster spec.azureEnvironment), as CAPZ and the Azure
// SDK name them.
const (
	// AzurePublicCloud is global Azure (the default).
	AzurePublicCloud = "AzurePublicCloud"
	// AzureChinaCloud is Azure operated by 21Vianet.
	AzureChinaCloud = "AzureChinaCloud"
	// AzureUSGovernmentCloud is Azure Government.
	AzureUSGovernmentCloud = "AzureUSGovernmentCloud"
	// AzureGermanCloud is the retired Azure Germany cloud.
	AzureGermanCloud = "AzureGermanCloud"
	// AzureStackCloud is Azure Stack Hub.
	AzureStackCloud = "AzureStackCloud"
)

// AzureClusterSpec is the desired state of an AzureCluster: where in Azure a cluster's
// machines live. It is the subset of Cluster API Provider Azure's AzureClusterSpec that a
// machine pool needs, with CAPZ's field names, so that CAPZ-shaped manifests apply. The
// parts of CAPZ's spec that describe infrastructure mpool does not manage (load
// balancers, bastion, NAT gateways, security groups, route tables, peerings, private
// endpoints, cloud-provider overrides) are accepted and kept as written, unvalidated and
// unread.
type AzureClusterSpec struct {
	// SubscriptionID is the Azure subscription of the cluster's resources, a GUID such as
	// 11111111-1111-1111-1111-111111111111. When empty, the provider takes it from the
	// AZURE_SUBSCRIPTION_ID environment variable, as CAPZ does.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self.matches('^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$')",message="subscriptionID must be an Azure subscription GUID such as 11111111-1111-1111-1111-111111111111"
	SubscriptionID string `json:"subscriptionID,omitempty"`

	// ResourceGroup is the Azure resource group of the cluster's resources (the scale
	// sets of its pools among them). When empty, CAPZ uses the cluster's name. Azure
	// allows 1 to 90 letters, digits, underscores, hyphens, periods and parentheses, not
	// ending in a period.
	// +optional
	// +kubebuilder:validation:MaxLength=90
	// +kubebuilder:validation:XValidation:rule="self.matches(r'^[-\\w.()\\p{L}\\p{N}]*[-\\w()\\p{L}\\p{N}]$')",message="resourceGroup must be 1 to 90 letters, digits, underscores, hyphens, periods or parentheses, not ending in a period"
	ResourceGroup string `json:"resourceGroup,omitempty"`

	// Location is the Azure region of the cluster, its programmatic name: lowercase, no
	// spaces, such as eastus or westus2 (not "East US").
	// +required
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z][a-z0-9]*$')",message="location must be an Azure region name in lowercase letters and digits without spaces, such as eastus (not \"East US\")"
	Location string `json:"location"`

	// ExtendedLocation is an Azure Edge Zone. mpool does not read it; it is kept as
	// written so that CAPZ manifests apply.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	ExtendedLocation *runtime.RawExtension `json:"extendedLocation,omitempty"`

	// NetworkSpec is the cluster's Azure network: its virtual network and subnets.
	// +optional
	NetworkSpec NetworkSpec `json:"networkSpec,omitempty"`

	// IdentityRef names the AzureClusterIdentity whose credentials the provider uses for
	// this cluster's resources. When unset, the provider uses the standard AZURE_*
	// environment variables (AZURE_TENANT_ID, AZURE_CLIENT_ID, AZURE_CLIENT_SECRET).
	// When namespace is empty, the identity is looked up in the AzureCluster's namespace.
	// +optional
	// +kubebuilder:validation:XValidation:rule="has(self.kind) && self.kind == 'AzureClusterIdentity'",message="identityRef.kind must be AzureClusterIdentity",fieldPath=".kind"
	// +kubebuilder:validation:XValidation:rule="has(self.name) && self.name != ''",message="identityRef.name must name an AzureClusterIdentity",fieldPath=".name"
	IdentityRef *corev1.ObjectReference `json:"identityRef,omitempty"`

	// AdditionalTags are Azure tags set on every resource the provider creates for the
	// cluster, in addition to its own (the owned-cluster tag).
	// +optional
	AdditionalTags Tags `json:"additionalTags,omitempty"`

	// AzureEnvironment is the Azure cloud: AzurePublicCloud (the default when empty),
	// AzureChinaCloud, AzureUSGovernmentCloud, AzureGermanCloud or AzureStackCloud. The
	// provider's ARM and Entra ID endpoint flags override the environment's endpoints.
	// +optional
	// +kubebuilder:validation:Enum=AzurePublicCloud;AzureChinaCloud;AzureUSGovernmentCloud;AzureGermanCloud;AzureStackCloud
	AzureEnvironment string `json:"azureEnvironment,omitempty"`

	// ControlPlaneEndpoint is the endpoint of the workload cluster's API server. CAPZ's
	// controller fills it from the API server load balancer; mpool does not manage
	// control planes and keeps whatever is set.
	// +optional
	ControlPlaneEndpoint clusterv1.APIEndpoint `json:"controlPlaneEndpoint,omitempty"`

	// FailureDomains restricts the cluster's failure domains (availability zones) to
	// these. mpool's pools take their zones from MachinePool spec.failureDomains.
	// +optional
	FailureDomains clusterv1.FailureDomains `json:"failureDomains,omitempty"`

	// BastionSpec configures an Azure Bastion host. mpool does not read it; it is kept as
	// written so that CAPZ manifests apply.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	BastionSpec *runtime.RawExtension `json:"bastionSpec,omitempty"`

	// CloudProviderConfigOverrides overrides parts of the Azure cloud provider's
	// configuration. mpool does not read it; it is kept as written so that CAPZ manifests
	// apply.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	CloudProviderConfigOverrides *runtime.RawExtension `json:"cloudProviderConfigOverrides,omitempty"`
}

// NetworkSpec is an Azure cluster's network.
// +kubebuilder:validation:XValidation:rule="!has(self.subnets) || self.subnets.all(s, self.subnets.exists_one(t, t.name == s.name))",message="networkSpec.subnets names must be unique",fieldPath=".subnets"
type NetworkSpec struct {
	// Vnet is the cluster's virtual network.
	// +optional
	Vnet VnetSpec `json:"vnet,omitempty"`

	// Subnets are the subnets of the virtual network. An AzureMachinePool's VMs join the
	// subnet its template names, or else the first subnet whose role is node (or cluster).
	// +optional
	// +kubebuilder:validation:MaxItems=64
	Subnets []SubnetSpec `json:"subnets,omitempty"`

	// APIServerLB is the API server load balancer. mpool does not read it; it is kept as
	// written so that CAPZ manifests apply.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	APIServerLB *runtime.RawExtension `json:"apiServerLB,omitempty"`

	// NodeOutboundLB is the worker nodes' outbound load balancer. mpool does not read it;
	// it is kept as written so that CAPZ manifests apply.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	NodeOutboundLB *runtime.RawExtension `json:"nodeOutboundLB,omitempty"`

	// ControlPlaneOutboundLB is the control plane's outbound load balancer. mpool does not
	// read it; it is kept as written so that CAPZ manifests apply.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	ControlPlaneOutboundLB *runtime.RawExtension `json:"controlPlaneOutboundLB,omitempty"`

	// PrivateDNSZoneName is the private DNS zone of a private cluster. mpool does not
	// read it.
	// +optional
	PrivateDNSZoneName string `json:"privateDNSZoneName,omitempty"`

	// PrivateDNSZoneResourceGroup is the resource group of the private DNS zone. mpool
	// does not read it.
	// +optional
	PrivateDNSZoneResourceGroup string `json:"privateDNSZoneResourceGroup,omitempty"`
}

// VnetSpec is an Azure virtual network.
type VnetSpec struct {
	// ResourceGroup is the resource group of the virtual network when it differs from the
	// cluster's (a pre-existing virtual network).
	// +optional
	// +kubebuilder:validation:MaxLength=90
	// +kubebuilder:validation:XValidation:rule="self.matches(r'^[-\\w.()\\p{L}\\p{N}]*[-\\w()\\p{L}\\p{N}]$')",message="networkSpec.vnet.resourceGroup must be 1 to 90 letters, digits, underscores, hyphens, periods or parentheses, not ending in a period"
	ResourceGroup string `json:"resourceGroup,omitempty"`

	// ID is the Azure resource ID of the virtual network, set by CAPZ's controller.
	// +optional
	ID string `json:"id,omitempty"`

	// Name of the virtual network: 2 to 64 letters, digits, underscores, periods or
	// hyphens, starting with a letter or digit and ending with a letter, digit or
	// underscore. CAPZ defaults it to "<cluster>-vnet".
	// +optional
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-zA-Z0-9][-a-zA-Z0-9_.]*[a-zA-Z0-9_]$')",message="networkSpec.vnet.name must be 2 to 64 letters, digits, underscores, periods or hyphens, starting with a letter or digit and ending with a letter, digit or underscore"
	Name string `json:"name,omitempty"`

	// CIDRBlocks are the address spaces of the virtual network, such as 10.0.0.0/8.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=43
	// +kubebuilder:validation:XValidation:rule="self.all(c, isCIDR(c))",message="networkSpec.vnet.cidrBlocks entries must be CIDR blocks such as 10.0.0.0/8"
	CIDRBlocks []string `json:"cidrBlocks,omitempty"`

	// Tags are Azure tags of the virtual network.
	// +optional
	Tags Tags `json:"tags,omitempty"`

	// Peerings are peerings with other virtual networks. mpool does not read them; they
	// are kept as written so that CAPZ manifests apply.
	// +optional
	// +kubebuilder:validation:MaxItems=500
	Peerings []runtime.RawExtension `json:"peerings,omitempty"`
}

// SubnetSpec is a subnet of an Azure cluster's virtual network.
type SubnetSpec struct {
	// Name of the subnet: 1 to 80 letters, digits, underscores, periods or hyphens,
	// starting with a letter or digit and ending with a letter, digit or underscore.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=80
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-zA-Z0-9]([-a-zA-Z0-9_.]*[a-zA-Z0-9_])?$')",message="subnet name must be 1 to 80 letters, digits, underscores, periods or hyphens, starting with a letter or digit and ending with a letter, digit or underscore"
	Name string `json:"name"`

	// Role of the subnet: node, control-plane, bastion or cluster.
	// +required
	Role SubnetRole `json:"role"`

	// CIDRBlocks are the address ranges of the subnet, inside the virtual network's.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=43
	// +kubebuilder:validation:XValidation:rule="self.all(c, isCIDR(c))",message="subnet cidrBlocks entries must be CIDR blocks such as 10.1.0.0/16"
	CIDRBlocks []string `json:"cidrBlocks,omitempty"`

	// ID is the Azure resource ID of the subnet, set by CAPZ's controller.
	// +optional
	ID string `json:"id,omitempty"`

	// SecurityGroup is the subnet's network security group. mpool does not read it; it
	// is kept as written so that CAPZ manifests apply.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	SecurityGroup *runtime.RawExtension `json:"securityGroup,omitempty"`

	// RouteTable is the subnet's route table. mpool does not read it; it is kept as
	// written so that CAPZ manifests apply.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	RouteTable *runtime.RawExtension `json:"routeTable,omitempty"`

	// NatGateway is the subnet's NAT gateway. mpool does not read it; it is kept as
	// written so that CAPZ manifests apply.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	NatGateway *runtime.RawExtension `json:"natGateway,omitempty"`

	// ServiceEndpoints are the subnet's service endpoints. mpool does not read them; they
	// are kept as written so that CAPZ manifests apply.
	// +optional
	// +kubebuilder:validation:MaxItems=100
	ServiceEndpoints []runtime.RawExtension `json:"serviceEndpoints,omitempty"`

	// PrivateEndpoints are the subnet's private endpoints. mpool does not read them; they
	// are kept as written so that CAPZ manifests apply.
	// +optional
	// +kubebuilder:validation:MaxItems=100
	PrivateEndpoints []runtime.RawExtension `json:"privateEndpoints,omitempty"`
}

// AzureClusterStatus is the observed state of an AzureCluster.
type AzureClusterStatus struct {
	// Ready is true when the cluster's Azure infrastructure is usable.
	// +optional
	Ready bool `json:"ready"`

	// FailureDomains are the availability zones of the cluster's location that Cluster
	// API spreads machines across.
	// +optional
	FailureDomains clusterv1.FailureDomains `json:"failureDomains,omitempty"`

	// Conditions are the observations of the cluster infrastructure's current state.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// LongRunningOperationStates are the Azure operations in progress.
	// +optional
	LongRunningOperationStates []Future `json:"longRunningOperationStates,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=azureclusters,scope=Namespaced,categories=cluster-api
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".metadata.labels['cluster\\.x-k8s\\.io/cluster-name']",description="Cluster"
// +kubebuilder:printcolumn:name="Ready",type="boolean",JSONPath=".status.ready",description="Cluster infrastructure is ready"
// +kubebuilder:printcolumn:name="Location",type="string",JSONPath=".spec.location",description="Azure region"
// +kubebuilder:printcolumn:name="ResourceGroup",type="string",priority=1,JSONPath=".spec.resourceGroup",description="Azure resource group"
// +kubebuilder:printcolumn:name="SubscriptionID",type="string",priority=1,JSONPath=".spec.subscriptionID",description="Azure subscription"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time since creation"

// AzureCluster is the Azure infrastructure of a Cluster (its spec.infrastructureRef):
// the subscription, resource group, region, network and credentials its AzureMachinePools
// use.
type AzureCluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	// +required
	Spec AzureClusterSpec `json:"spec"`
	// Status is the observed state.
	// +optional
	Status AzureClusterStatus `json:"status,omitempty"`
}

// GetConditions returns the AzureCluster's conditions.
func (c *AzureCluster) GetConditions() []metav1.Condition { return c.Status.Conditions }

// SetConditions replaces the AzureCluster's conditions.
func (c *AzureCluster) SetConditions(conds []metav1.Condition) { c.Status.Conditions = conds }

// NodeSubnet returns the subnet an AzureMachinePool's VMs join when the pool names none:
// the first subnet whose role is node, else the first whose role is cluster; nil when
// there is neither.
func (c *AzureCluster) NodeSubnet() *SubnetSpec {
	for _, role := range []SubnetRole{SubnetNode, SubnetCluster} {
		for i := range c.Spec.NetworkSpec.Subnets {
			if c.Spec.NetworkSpec.Subnets[i].Role == role {
				return &c.Spec.NetworkSpec.Subnets[i]
			}
		}
	}
	return nil
}

// +kubebuilder:object:root=true

// AzureClusterList is a list of AzureClusters.
type AzureClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the AzureClusters.
	Items []AzureCluster `json:"items"`
}

func init() {
	SchemeBuilder.Register(&AzureCluster{}, &AzureClusterList{})
}
