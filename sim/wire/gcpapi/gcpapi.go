// Package gcpapi holds the wire types of the simulated cloud's GCP face
// (package gcpface): the bodies of Google's OAuth 2.0 token endpoint, of a
// service account key file, and of the Compute Engine v1 REST resources a
// machine pool needs (instance templates, zonal and regional instance group
// managers and their managed instances, machine types, operations) and its
// errors, as the unmodified cloud.google.com/go/compute REST clients send and
// read them. It has no logic and no SDK dependency.
package gcpapi

// Kinds of the Compute Engine resources.
const (
	KindOperation            = "compute#operation"
	KindInstanceTemplate     = "compute#instanceTemplate"
	KindInstanceTemplateList = "compute#instanceTemplateList"
	KindInstanceGroupManager = "compute#instanceGroupManager"
	KindMachineType          = "compute#machineType"
	KindMachineTypeList      = "compute#machineTypeList"
)

// Operation statuses.
const (
	OperationPending = "PENDING"
	OperationRunning = "RUNNING"
	OperationDone    = "DONE"
)

// Managed instance current actions and instance statuses.
const (
	ActionNone       = "NONE"
	ActionCreating   = "CREATING"
	ActionDeleting   = "DELETING"
	ActionVerifying  = "VERIFYING"
	StatusProvision  = "PROVISIONING"
	StatusStaging    = "STAGING"
	StatusRunning    = "RUNNING"
	StatusStopping   = "STOPPING"
	StatusTerminated = "TERMINATED"
)

// Error reasons, as Compute Engine and Google's APIs name them.
const (
	ReasonNotFound          = "notFound"
	ReasonAlreadyExists     = "alreadyExists"
	ReasonInvalid           = "invalid"
	ReasonRequired          = "required"
	ReasonResourceInUse     = "resourceInUseByAnotherResource"
	ReasonRateLimitExceeded = "rateLimitExceeded"
	ReasonQuotaExceeded     = "quotaExceeded"
	ReasonBackendError      = "backendError"
	ReasonAuthError         = "authError"
	ReasonForbidden         = "forbidden"
	ReasonResourceNotReady  = "resourceNotReady"
)

// ServiceAccountKey is a service account key file (JSON), as the IAM API
// hands it out and Google's client libraries read it.
type ServiceAccountKey struct {
	Type                    string `json:"type"`
	ProjectID               string `json:"project_id"`
	PrivateKeyID            string `json:"private_key_id"`
	PrivateKey              string `json:"private_key"`
	ClientEmail             string `json:"client_email"`
	ClientID                string `json:"client_id"`
	AuthURI                 string `json:"auth_uri"`
	TokenURI                string `json:"token_uri"`
	AuthProviderX509CertURL string `json:"auth_provider_x509_cert_url,omitempty"`
	ClientX509CertURL       string `json:"client_x509_cert_url,omitempty"`
	UniverseDomain          string `json:"universe_domain,omitempty"`
}

// TokenResponse is the token endpoint's answer to a JWT bearer grant.
type TokenResponse struct {
	AccessToken string `json:"access_token"`
	ExpiresIn   int    `json:"expires_in"`
	TokenType   string `json:"token_type"`
}

// TokenError is the token endpoint's error body (RFC 6749).
type TokenError struct {
	Error            string `json:"error"`
	ErrorDescription string `json:"error_description"`
}

// ErrorResponse is a Google API error body (googleapi.Error's wire form).
type ErrorResponse struct {
	Error ErrorBody `json:"error"`
}

// ErrorBody is the error of an ErrorResponse.
type ErrorBody struct {
	Code    int         `json:"code"`
	Message string      `json:"message"`
	Errors  []ErrorItem `json:"errors,omitempty"`
	Status  string      `json:"status,omitempty"`
}

// ErrorItem is one error of an ErrorBody or an Operation's error.
type ErrorItem struct {
	Message  string `json:"message"`
	Domain   string `json:"domain,omitempty"`
	Reason   string `json:"reason,omitempty"`
	Code     string `json:"code,omitempty"`
	Location string `json:"location,omitempty"`
}

// Operation is a Compute Engine operation (zonal, regional or global).
type Operation struct {
	Kind              string          `json:"kind"`
	ID                string          `json:"id"`
	Name              string          `json:"name"`
	OperationType     string          `json:"operationType"`
	TargetLink        string          `json:"targetLink"`
	TargetID          string          `json:"targetId,omitempty"`
	Status            string          `json:"status"`
	User              string          `json:"user,omitempty"`
	Progress          int             `json:"progress"`
	InsertTime        string          `json:"insertTime"`
	StartTime         string          `json:"startTime,omitempty"`
	EndTime           string          `json:"endTime,omitempty"`
	Error             *OperationError `json:"error,omitempty"`
	HTTPErrorStatus   int             `json:"httpErrorStatusCode,omitempty"`
	HTTPErrorMessage  string          `json:"httpErrorMessage,omitempty"`
	SelfLink          string          `json:"selfLink"`
	Zone              string          `json:"zone,omitempty"`
	Region            string          `json:"region,omitempty"`
	Description       string          `json:"description,omitempty"`
	ClientOperationID string          `json:"clientOperationId,omitempty"`
}

// OperationError is an Operation's error.
type OperationError struct {
	Errors []ErrorItem `json:"errors"`
}

// MetadataItem is one metadata key/value pair.
type MetadataItem struct {
	Key   string  `json:"key"`
	Value *string `json:"value,omitempty"`
}

// Metadata is an instance's metadata.
type Metadata struct {
	Kind        string         `json:"kind,omitempty"`
	Fingerprint string         `json:"fingerprint,omitempty"`
	Items       []MetadataItem `json:"items,omitempty"`
}

// InstanceProperties are the parts of an instance template's properties
// the face reads; the rest of what the client sent is kept as sent.
type InstanceProperties struct {
	MachineType string            `json:"machineType"`
	Labels      map[string]string `json:"labels,omitempty"`
	Metadata    *Metadata         `json:"metadata,omitempty"`
	Disks       []AttachedDisk    `json:"disks,omitempty"`
}

// AttachedDisk is the part of an attached disk the face reads.
type AttachedDisk struct {
	Boot             bool                    `json:"boot,omitempty"`
	InitializeParams *AttachedDiskInitParams `json:"initializeParams,omitempty"`
}

// AttachedDiskInitParams are the part of a new disk's parameters the face
// reads.
type AttachedDiskInitParams struct {
	SourceImage string `json:"sourceImage,omitempty"`
	DiskSizeGB  string `json:"diskSizeGb,omitempty"`
	DiskType    string `json:"diskType,omitempty"`
}

// InstanceTemplate is the part of an instance template the face reads.
type InstanceTemplate struct {
	Kind              string              `json:"kind,omitempty"`
	ID                string              `json:"id,omitempty"`
	Name              string              `json:"name"`
	Description       string              `json:"description,omitempty"`
	SelfLink          string              `json:"selfLink,omitempty"`
	CreationTimestamp string              `json:"creationTimestamp,omitempty"`
	Properties        *InstanceProperties `json:"properties,omitempty"`
}

// InstanceGroupManager is a managed instance group, zonal (Zone) or
// regional (Region, DistributionPolicy).
type InstanceGroupManager struct {
	Kind               string                 `json:"kind,omitempty"`
	ID                 string                 `json:"id,omitempty"`
	Name               string                 `json:"name"`
	Description        string                 `json:"description,omitempty"`
	Zone               string                 `json:"zone,omitempty"`
	Region             string                 `json:"region,omitempty"`
	InstanceTemplate   string                 `json:"instanceTemplate,omitempty"`
	InstanceGroup      string                 `json:"instanceGroup,omitempty"`
	BaseInstanceName   string                 `json:"baseInstanceName,omitempty"`
	TargetSize         *int32                 `json:"targetSize,omitempty"`
	CreationTimestamp  string                 `json:"creationTimestamp,omitempty"`
	SelfLink           string                 `json:"selfLink,omitempty"`
	Fingerprint        string                 `json:"fingerprint,omitempty"`
	CurrentActions     *CurrentActionsSummary `json:"currentActions,omitempty"`
	Status             *IGMStatus             `json:"status,omitempty"`
	UpdatePolicy       *UpdatePolicy          `json:"updatePolicy,omitempty"`
	DistributionPolicy *DistributionPolicy    `json:"distributionPolicy,omitempty"`
	Versions           []InstanceGroupVersion `json:"versions,omitempty"`
}

// CurrentActionsSummary counts a group's managed instances by current action.
type CurrentActionsSummary struct {
	Abandoning             int32 `json:"abandoning"`
	Creating               int32 `json:"creating"`
	CreatingWithoutRetries int32 `json:"creatingWithoutRetries"`
	Deleting               int32 `json:"deleting"`
	None                   int32 `json:"none"`
	Recreating             int32 `json:"recreating"`
	Refreshing             int32 `json:"refreshing"`
	Restarting             int32 `json:"restarting"`
	Resuming               int32 `json:"resuming"`
	Starting               int32 `json:"starting"`
	Stopping               int32 `json:"stopping"`
	Suspending             int32 `json:"suspending"`
	Verifying              int32 `json:"verifying"`
}

// IGMStatus is a group's status.
type IGMStatus struct {
	IsStable      bool                    `json:"isStable"`
	VersionTarget *IGMStatusVersionTarget `json:"versionTarget,omitempty"`
	Stateful      *IGMStatusStateful      `json:"stateful,omitempty"`
}

// IGMStatusVersionTarget says whether every instance runs the target version.
type IGMStatusVersionTarget struct {
	IsReached bool `json:"isReached"`
}

// IGMStatusStateful says whether the group has stateful configuration.
type IGMStatusStateful struct {
	HasStatefulConfig bool `json:"hasStatefulConfig"`
}

// UpdatePolicy is a group's update policy; mpool's groups are OPPORTUNISTIC
// (the group replaces nothing by itself).
type UpdatePolicy struct {
	Type                        string         `json:"type,omitempty"`
	MinimalAction               string         `json:"minimalAction,omitempty"`
	MostDisruptiveAllowedAction string         `json:"mostDisruptiveAllowedAction,omitempty"`
	ReplacementMethod           string         `json:"replacementMethod,omitempty"`
	InstanceRedistributionType  string         `json:"instanceRedistributionType,omitempty"`
	MaxSurge                    map[string]any `json:"maxSurge,omitempty"`
	MaxUnavailable              map[string]any `json:"maxUnavailable,omitempty"`
}

// DistributionPolicy is a regional group's zones.
type DistributionPolicy struct {
	Zones       []ZoneConfig `json:"zones,omitempty"`
	TargetShape string       `json:"targetShape,omitempty"`
}

// ZoneConfig names a zone by URL.
type ZoneConfig struct {
	Zone string `json:"zone"`
}

// InstanceGroupVersion is a group's version (template).
type InstanceGroupVersion struct {
	Name             string `json:"name,omitempty"`
	InstanceTemplate string `json:"instanceTemplate,omitempty"`
}

// SetInstanceTemplateRequest is setInstanceTemplate's body.
type SetInstanceTemplateRequest struct {
	InstanceTemplate string `json:"instanceTemplate"`
}

// DeleteInstancesRequest is deleteInstances's body.
type DeleteInstancesRequest struct {
	Instances                      []string `json:"instances"`
	SkipInstancesOnValidationError bool     `json:"skipInstancesOnValidationError,omitempty"`
}

// ManagedInstance is one instance of a group, as listManagedInstances
// lists it.
type ManagedInstance struct {
	Instance       string                      `json:"instance"`
	ID             string                      `json:"id,omitempty"`
	Name           string                      `json:"name,omitempty"`
	InstanceStatus string                      `json:"instanceStatus,omitempty"`
	CurrentAction  string                      `json:"currentAction"`
	Version        *ManagedInstanceVersion     `json:"version,omitempty"`
	LastAttempt    *ManagedInstanceLastAttempt `json:"lastAttempt,omitempty"`
	InstanceHealth []map[string]any            `json:"instanceHealth,omitempty"`
}

// ManagedInstanceVersion is the template an instance was created from.
type ManagedInstanceVersion struct {
	InstanceTemplate string `json:"instanceTemplate,omitempty"`
	Name             string `json:"name,omitempty"`
}

// ManagedInstanceLastAttempt says why the group's last attempt on an
// instance failed.
type ManagedInstanceLastAttempt struct {
	Errors *OperationError `json:"errors,omitempty"`
}

// ListManagedInstancesResponse is a page of listManagedInstances.
type ListManagedInstancesResponse struct {
	ManagedInstances []ManagedInstance `json:"managedInstances,omitempty"`
	NextPageToken    string            `json:"nextPageToken,omitempty"`
}

// MachineType is a machine type of a zone.
type MachineType struct {
	Kind        string `json:"kind"`
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	GuestCPUs   int32  `json:"guestCpus"`
	MemoryMB    int32  `json:"memoryMb"`
	Zone        string `json:"zone"`
	SelfLink    string `json:"selfLink"`
}

// MachineTypeList is a page of machine types.
type MachineTypeList struct {
	Kind          string        `json:"kind"`
	Items         []MachineType `json:"items"`
	NextPageToken string        `json:"nextPageToken,omitempty"`
	SelfLink      string        `json:"selfLink"`
}

// InstanceTemplateList is a page of instance templates.
type InstanceTemplateList struct {
	Kind          string           `json:"kind"`
	Items         []map[string]any `json:"items"`
	NextPageToken string           `json:"nextPageToken,omitempty"`
	SelfLink      string           `json:"selfLink"`
}
