package v1beta1

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// IdentityType is the kind of Azure credentials an AzureClusterIdentity holds, as CAPZ
// names them.
// +kubebuilder:validation:Enum=ServicePrincipal;ServicePrincipalCertificate;ManualServicePrincipal;UserAssignedMSI;WorkloadIdentity;UserAssignedIdentityCredential
type IdentityType string

const (
	// ServicePrincipal authenticates as a Microsoft Entra ID application with a client
	// secret (the OAuth client-credentials flow). clientSecret names the Secret holding
	// the password.
	ServicePrincipal IdentityType = "ServicePrincipal"
	// ServicePrincipalCertificate authenticates as an application with a certificate:
	// the file at certPath, or else the Secret clientSecret names.
	ServicePrincipalCertificate IdentityType = "ServicePrincipalCertificate"
	// ManualServicePrincipal is a ServicePrincipal whose Secret clusterctl move does not
	// move (the user recreates it in the target cluster).
	ManualServicePrincipal IdentityType = "ManualServicePrincipal"
	// UserAssignedMSI authenticates as a user-assigned managed identity of the VM the
	// manager runs on.
	UserAssignedMSI IdentityType = "UserAssignedMSI"
	// WorkloadIdentity authenticates with a federated service account token.
	WorkloadIdentity IdentityType = "WorkloadIdentity"
	// UserAssignedIdentityCredential authenticates with a user-assigned identity
	// credential file (userAssignedIdentityCredentialsPath).
	UserAssignedIdentityCredential IdentityType = "UserAssignedIdentityCredential"
)

// AzureClusterIdentityClientSecretKey is the key of the password (or certificate) in the
// Secret an AzureClusterIdentity's clientSecret names, as CAPZ reads it.
const AzureClusterIdentityClientSecretKey = "clientSecret"

// AzureClusterIdentitySpec is the Azure credentials a cluster's provider uses.
// +kubebuilder:validation:XValidation:rule="!(self.type in ['ServicePrincipal', 'ManualServicePrincipal'] || (self.type == 'ServicePrincipalCertificate' && (!has(self.certPath) || size(self.certPath) == 0))) || (has(self.clientSecret) && has(self.clientSecret.name) && size(self.clientSecret.name) > 0)",message="clientSecret.name must name the Secret holding the service principal's secret (key clientSecret) when type is ServicePrincipal or ManualServicePrincipal, or ServicePrincipalCertificate without certPath",fieldPath=".clientSecret"
// +kubebuilder:validation:XValidation:rule="self.type != 'UserAssignedIdentityCredential' || (has(self.userAssignedIdentityCredentialsPath) && size(self.userAssignedIdentityCredentialsPath) > 0)",message="userAssignedIdentityCredentialsPath must be set when type is UserAssignedIdentityCredential",fieldPath=".userAssignedIdentityCredentialsPath"
type AzureClusterIdentitySpec struct {
	// Type of the credentials: ServicePrincipal, ServicePrincipalCertificate,
	// ManualServicePrincipal, UserAssignedMSI, WorkloadIdentity or
	// UserAssignedIdentityCredential.
	// +required
	Type IdentityType `json:"type"`

	// ResourceID is the Azure resource ID of a user-assigned managed identity. Only for
	// type UserAssignedMSI; deprecated in CAPZ.
	// +optional
	ResourceID string `json:"resourceID,omitempty"`

	// ClientID is the application (client) ID of the service principal or managed
	// identity, a GUID.
	// +required
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self.matches('^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$')",message="clientID must be the application (client) ID, a GUID such as 33333333-3333-3333-3333-333333333333"
	ClientID string `json:"clientID"`

	// ClientSecret names the Secret holding the service principal's password (or
	// certificate) under the key "clientSecret". Required for ServicePrincipal and
	// ManualServicePrincipal, and for ServicePrincipalCertificate without certPath. When its namespace is
	// empty, the Secret is looked up in the AzureClusterIdentity's namespace.
	// +optional
	ClientSecret corev1.SecretReference `json:"clientSecret,omitempty"`

	// TenantID is the Microsoft Entra ID tenant of the service principal, a GUID.
	// +required
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self.matches('^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$')",message="tenantID must be the Microsoft Entra ID tenant ID, a GUID such as 22222222-2222-2222-2222-222222222222"
	TenantID string `json:"tenantID"`

	// CertPath is the path of the certificate file of a ServicePrincipalCertificate
	// identity. When set, it takes precedence over clientSecret, which may then be
	// left out.
	// +optional
	CertPath string `json:"certPath,omitempty"`

	// UserAssignedIdentityCredentialsPath is the path of the user-assigned identity
	// credentials file. Required for type UserAssignedIdentityCredential.
	// +optional
	UserAssignedIdentityCredentialsPath string `json:"userAssignedIdentityCredentialsPath,omitempty"`

	// UserAssignedIdentityCredentialsCloudType is the cloud of the user-assigned
	// identity credentials: public (default), china or usgovernment.
	// +optional
	// +kubebuilder:validation:Enum=public;china;usgovernment
	UserAssignedIdentityCredentialsCloudType string `json:"userAssignedIdentityCredentialsCloudType,omitempty"`

	// AllowedNamespaces are the namespaces whose AzureClusters may use this identity,
	// as CAPZ reads it: unset (the default), none; empty ({}), every namespace;
	// otherwise a namespace in list or matching selector (an empty selector matches
	// none).
	// +optional
	AllowedNamespaces *AllowedNamespaces `json:"allowedNamespaces,omitempty"`
}

// AllowedNamespaces selects the namespaces whose AzureClusters may use an
// AzureClusterIdentity: those in list, and those matching selector.
type AllowedNamespaces struct {
	// NamespaceList names the allowed namespaces.
	// +optional
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self.all(n, n.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$'))",message="allowedNamespaces.list entries must be namespace names (lowercase letters, digits and hyphens)"
	NamespaceList []string `json:"list,omitempty"`

	// Selector is a label selector of the allowed namespaces.
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
}

// AzureClusterIdentityStatus is the observed state of an AzureClusterIdentity.
type AzureClusterIdentityStatus struct {
	// Conditions are the observations of the identity's current state (for example
	// whether its credentials were accepted).
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=azureclusteridentities,scope=Namespaced,categories=cluster-api
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Type",type="string",JSONPath=".spec.type",description="Kind of credentials"
// +kubebuilder:printcolumn:name="ClientID",type="string",priority=1,JSONPath=".spec.clientID",description="Application (client) ID"
// +kubebuilder:printcolumn:name="TenantID",type="string",priority=1,JSONPath=".spec.tenantID",description="Entra ID tenant"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time since creation"

// AzureClusterIdentity is the Azure credentials an AzureCluster's identityRef names.
type AzureClusterIdentity struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	// +required
	Spec AzureClusterIdentitySpec `json:"spec"`
	// Status is the observed state.
	// +optional
	Status AzureClusterIdentityStatus `json:"status,omitempty"`
}

// GetConditions returns the AzureClusterIdentity's conditions.
func (i *AzureClusterIdentity) GetConditions() []metav1.Condition { return i.Status.Conditions }

// SetConditions replaces the AzureClusterIdentity's conditions.
func (i *AzureClusterIdentity) SetConditions(conds []metav1.Condition) {
	i.Status.Conditions = conds
}

// +kubebuilder:object:root=true

// AzureClusterIdentityList is a list of AzureClusterIdentities.
type AzureClusterIdentityList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the AzureClusterIdentities.
	Items []AzureClusterIdentity `json:"items"`
}

func init() {
	SchemeBuilder.Register(&AzureClusterIdentity{}, &AzureClusterIdentityList{})
}

// Allows reports whether an identity with these allowed namespaces may be used from
// namespace, as CAPZ and CAPA read the field: unset (nil) allows none; empty ({}) allows
// every namespace; otherwise a namespace in list, or whose labels match selector (an
// empty selector matches none). labelsOf returns the namespace's labels; it is called only
// when the selector must be evaluated. An invalid selector is an error.
func (a *AllowedNamespaces) Allows(namespace string, labelsOf func() (map[string]string, error)) (bool, error) {
	switch {
	case a == nil:
		return false, nil
	case len(a.NamespaceList) == 0 && a.Selector == nil:
		return true, nil
	}
	for _, n := range a.NamespaceList {
		if n == namespace {
			return true, nil
		}
	}
	if a.Selector == nil || (len(a.Selector.MatchLabels) == 0 && len(a.Selector.MatchExpressions) == 0) {
		return false, nil
	}
	sel, err := metav1.LabelSelectorAsSelector(a.Selector)
	if err != nil {
		return false, fmt.Errorf("spec.allowedNamespaces.selector: %w", err)
	}
	l, err := labelsOf()
	if err != nil {
		return false, err
	}
	return sel.Matches(labels.Set(l)), nil
}
