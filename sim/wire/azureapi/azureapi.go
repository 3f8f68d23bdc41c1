// Package azureapi holds the wire types of the simulated cloud's Azure face
// (package azureface): the bodies of Microsoft Entra ID's
// token and discovery endpoints and of Azure Resource Manager's
// Microsoft.Compute resources, errors and long-running operations, as the
// unmodified Azure SDK for Go sends and reads them. It has no logic and no
// SDK dependency.
package azureapi

import "time"

// Well-known names of the simulated Azure.
const (
	// ResourceProvider is the namespace of the compute resources.
	ResourceProvider = "Microsoft.Compute"
	// TypeVirtualMachineScaleSets is a scale set's resource type.
	TypeVirtualMachineScaleSets = "Microsoft.Compute/virtualMachineScaleSets"
	// TypeVirtualMachineScaleSetVMs is a Uniform scale set VM's resource type.
	TypeVirtualMachineScaleSetVMs = "Microsoft.Compute/virtualMachineScaleSets/virtualMachines"
	// TypeVirtualMachines is a (Flexible mode) VM's resource type.
	TypeVirtualMachines = "Microsoft.Compute/virtualMachines"

	// OrchestrationUniform and OrchestrationFlexible are the scale set
	// orchestration modes.
	OrchestrationUniform  = "Uniform"
	OrchestrationFlexible = "Flexible"

	// Provisioning states.
	ProvisioningCreating  = "Creating"
	ProvisioningUpdating  = "Updating"
	ProvisioningSucceeded = "Succeeded"
	ProvisioningFailed    = "Failed"
	ProvisioningDeleting  = "Deleting"

	// Operation statuses (the Azure-AsyncOperation body).
	StatusInProgress = "InProgress"
	StatusSucceeded  = "Succeeded"
	StatusFailed     = "Failed"

	// ARM error codes the face answers.
	CodeInvalidAuthenticationToken = "InvalidAuthenticationToken"
	CodeAuthenticationFailed       = "AuthenticationFailed"
	CodeExpiredAuthenticationToken = "ExpiredAuthenticationToken"
	CodeResourceNotFound           = "ResourceNotFound"
	CodeNotFound                   = "NotFound"
	CodeSkuNotAvailable            = "SkuNotAvailable"
	CodeInvalidParameter           = "InvalidParameter"
	CodeInvalidRequestContent      = "InvalidRequestContent"
	CodeOperationNotAllowed        = "OperationNotAllowed"
	CodeConflict                   = "Conflict"
	CodeTooManyRequests            = "TooManyRequests"
	CodeInternalServerError        = "InternalServerError"
	CodeMissingAPIVersion          = "MissingApiVersionParameter"
	CodeInvalidResourceName        = "InvalidResourceName"
	CodePropertyChangeNotAllowed   = "PropertyChangeNotAllowed"

	// Entra ID (OAuth 2.0) error codes.
	EntraInvalidClient  = "invalid_client"
	EntraInvalidRequest = "invalid_request"
	EntraUnauthorized   = "unauthorized_client"
	EntraInvalidScope   = "invalid_scope"
	EntraUnsupported    = "unsupported_grant_type"
)

// ErrorResponse is ARM's error body.
type ErrorResponse struct {
	Error ErrorBody `json:"error"`
}

// ErrorBody is ARM's error detail.
type ErrorBody struct {
	Code    string      `json:"code"`
	Message string      `json:"message"`
	Target  string      `json:"target,omitempty"`
	Details []ErrorBody `json:"details,omitempty"`
}

// TokenResponse is Entra ID's answer to a client-credentials token request.
type TokenResponse struct {
	TokenType    string `json:"token_type"`
	ExpiresIn    int    `json:"expires_in"`
	ExtExpiresIn int    `json:"ext_expires_in"`
	AccessToken  string `json:"access_token"`
}

// TokenError is Entra ID's error body.
type TokenError struct {
	Error            string `json:"error"`
	ErrorDescription string `json:"error_description"`
	ErrorCodes       []int  `json:"error_codes,omitempty"`
	Timestamp        string `json:"timestamp,omitempty"`
	TraceID          string `json:"trace_id,omitempty"`
	CorrelationID    string `json:"correlation_id,omitempty"`
	ErrorURI         string `json:"error_uri,omitempty"`
}

// OpenIDConfiguration is the part of a tenant's OpenID configuration
// (/{tenant}/v2.0/.well-known/openid-configuration) MSAL reads.
type OpenIDConfiguration struct {
	TokenEndpoint                     string   `json:"token_endpoint"`
	TokenEndpointAuthMethodsSupported []string `json:"token_endpoint_auth_methods_supported"`
	JWKSURI                           string   `json:"jwks_uri"`
	ResponseModesSupported            []string `json:"response_modes_supported"`
	SubjectTypesSupported             []string `json:"subject_types_supported"`
	IDTokenSigningAlgValuesSupported  []string `json:"id_token_signing_alg_values_supported"`
	ResponseTypesSupported            []string `json:"response_types_supported"`
	ScopesSupported                   []string `json:"scopes_supported"`
	Issuer                            string   `json:"issuer"`
	AuthorizationEndpoint             string   `json:"authorization_endpoint"`
	DeviceAuthorizationEndpoint       string   `json:"device_authorization_endpoint"`
	EndSessionEndpoint                string   `json:"end_session_endpoint"`
	TenantRegionScope                 *string  `json:"tenant_region_scope"`
	CloudInstanceName                 string   `json:"cloud_instance_name"`
}

// InstanceDiscovery is the answer of /common/discovery/instance.
type InstanceDiscovery struct {
	TenantDiscoveryEndpoint string                      `json:"tenant_discovery_endpoint"`
	APIVersion              string                      `json:"api-version"`
	Metadata                []InstanceDiscoveryMetadata `json:"metadata"`
}

// InstanceDiscoveryMetadata lists aliases of an authority host.
type InstanceDiscoveryMetadata struct {
	PreferredNetwork string   `json:"preferred_network"`
	PreferredCache   string   `json:"preferred_cache"`
	Aliases          []string `json:"aliases"`
}

// OperationStatus is the body of an Azure-AsyncOperation status URL.
type OperationStatus struct {
	Name      string     `json:"name"`
	Status    string     `json:"status"`
	StartTime time.Time  `json:"startTime"`
	EndTime   *time.Time `json:"endTime,omitempty"`
	Error     *ErrorBody `json:"error,omitempty"`
}

// DeleteInstancesRequest is the body of a scale set's delete action.
type DeleteInstancesRequest struct {
	InstanceIDs []string `json:"instanceIds"`
}

// Sku is a resource's SKU.
type Sku struct {
	Name     string `json:"name,omitempty"`
	Tier     string `json:"tier,omitempty"`
	Capacity *int64 `json:"capacity,omitempty"`
}

// ImageReference is a VM model's image.
type ImageReference struct {
	ID                      string `json:"id,omitempty"`
	Publisher               string `json:"publisher,omitempty"`
	Offer                   string `json:"offer,omitempty"`
	Sku                     string `json:"sku,omitempty"`
	Version                 string `json:"version,omitempty"`
	SharedGalleryImageID    string `json:"sharedGalleryImageId,omitempty"`
	CommunityGalleryImageID string `json:"communityGalleryImageId,omitempty"`
	ExactVersion            string `json:"exactVersion,omitempty"`
}

// ScaleSetView is the part of a virtualMachineScaleSets resource the face
// reads; the rest of the resource is kept as sent.
type ScaleSetView struct {
	Location   string             `json:"location"`
	Tags       map[string]*string `json:"tags,omitempty"`
	Zones      []string           `json:"zones,omitempty"`
	Sku        *Sku               `json:"sku,omitempty"`
	Properties *struct {
		OrchestrationMode      string                  `json:"orchestrationMode,omitempty"`
		AutomaticRepairsPolicy *AutomaticRepairsPolicy `json:"automaticRepairsPolicy,omitempty"`
		VirtualMachineProfile  *struct {
			NetworkProfile *struct {
				HealthProbe *struct {
					ID string `json:"id,omitempty"`
				} `json:"healthProbe,omitempty"`
			} `json:"networkProfile,omitempty"`
			ExtensionProfile *struct {
				Extensions []ExtensionView `json:"extensions,omitempty"`
			} `json:"extensionProfile,omitempty"`
			StorageProfile *struct {
				ImageReference *ImageReference `json:"imageReference,omitempty"`
			} `json:"storageProfile,omitempty"`
			OSProfile *struct {
				ComputerNamePrefix string  `json:"computerNamePrefix,omitempty"`
				AdminUsername      string  `json:"adminUsername,omitempty"`
				CustomData         *string `json:"customData,omitempty"`
			} `json:"osProfile,omitempty"`
		} `json:"virtualMachineProfile,omitempty"`
	} `json:"properties,omitempty"`
}

// ExtensionView is the part of a VM extension the face reads.
type ExtensionView struct {
	Name       string `json:"name,omitempty"`
	Properties *struct {
		Publisher string `json:"publisher,omitempty"`
		Type      string `json:"type,omitempty"`
	} `json:"properties,omitempty"`
}

// AutomaticRepairsPolicy is a scale set's properties.automaticRepairsPolicy:
// repair the VMs its application health monitoring (the Application Health
// extension or a load balancer probe) reports unhealthy, after
// GracePeriod (ISO 8601, PT10M to PT90M, default PT10M), by RepairAction
// (Replace, the default, Restart or Reimage).
type AutomaticRepairsPolicy struct {
	Enabled      *bool  `json:"enabled,omitempty"`
	GracePeriod  string `json:"gracePeriod,omitempty"`
	RepairAction string `json:"repairAction,omitempty"`
}

// Automatic repair actions.
const (
	RepairReplace = "Replace"
	RepairRestart = "Restart"
	RepairReimage = "Reimage"
)

// Application Health extension types (publisher
// Microsoft.ManagedServices).
const (
	ExtensionApplicationHealthLinux   = "ApplicationHealthLinux"
	ExtensionApplicationHealthWindows = "ApplicationHealthWindows"
)

// ResourceSkuList is the answer of GET .../providers/Microsoft.Compute/skus.
type ResourceSkuList struct {
	Value    []ResourceSku `json:"value"`
	NextLink string        `json:"nextLink,omitempty"`
}

// ResourceSku is one SKU the simulated region offers.
type ResourceSku struct {
	ResourceType string                    `json:"resourceType"`
	Name         string                    `json:"name"`
	Tier         string                    `json:"tier"`
	Size         string                    `json:"size"`
	Family       string                    `json:"family"`
	Locations    []string                  `json:"locations"`
	LocationInfo []ResourceSkuLocationInfo `json:"locationInfo"`
	Capabilities []ResourceSkuCapability   `json:"capabilities"`
	Restrictions []any                     `json:"restrictions"`
}

// ResourceSkuLocationInfo says in which zones of a location a SKU is
// offered.
type ResourceSkuLocationInfo struct {
	Location string   `json:"location"`
	Zones    []string `json:"zones"`
}

// ResourceSkuCapability is a name/value capability (vCPUs, MemoryGB, ...).
type ResourceSkuCapability struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}
