package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Format is the output format of the bootstrap data.
// +kubebuilder:validation:Enum=cloud-config;ignition
type Format string

const (
	// CloudConfig renders the bootstrap data as cloud-init cloud-config.
	CloudConfig Format = "cloud-config"
	// Ignition renders the bootstrap data as an Ignition config.
	Ignition Format = "ignition"
)

// Encoding is how a file's content is encoded.
// +kubebuilder:validation:Enum=base64;gzip;gzip+base64
type Encoding string

const (
	// Base64 means the content is base64 encoded.
	Base64 Encoding = "base64"
	// Gzip means the content is gzip compressed.
	Gzip Encoding = "gzip"
	// GzipBase64 means the content is gzip compressed, then base64 encoded.
	GzipBase64 Encoding = "gzip+base64"
)

// Condition types and reasons of a KubeadmConfig.
const (
	// DataSecretAvailableCondition reports whether the bootstrap data Secret exists.
	DataSecretAvailableCondition = "DataSecretAvailable"
	// CertificatesAvailableCondition reports whether the cluster certificates are available.
	CertificatesAvailableCondition = "CertificatesAvailable"
	// WaitingForClusterInfrastructureReason: the Cluster's infrastructure is not ready.
	WaitingForClusterInfrastructureReason = "WaitingForClusterInfrastructure"
	// WaitingForControlPlaneAvailableReason: the control plane is not initialised yet.
	WaitingForControlPlaneAvailableReason = "WaitingForControlPlaneAvailable"
	// DataSecretGenerationFailedReason: rendering or writing the bootstrap data failed.
	DataSecretGenerationFailedReason = "DataSecretGenerationFailed"
	// DataSecretAvailableReason: the bootstrap data Secret exists.
	DataSecretAvailableReason = "DataSecretAvailable"
)

// KubeadmConfigSpec is the configuration kubeadm and cloud-init (or Ignition) apply to a
// node. A MachinePool shares one KubeadmConfig among all its instances.
type KubeadmConfigSpec struct {
	// ClusterConfiguration is kubeadm's ClusterConfiguration (control plane only). It is
	// accepted and preserved as written.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	ClusterConfiguration *runtime.RawExtension `json:"clusterConfiguration,omitempty"`

	// InitConfiguration is kubeadm's InitConfiguration (first control plane node only).
	// It is accepted and preserved as written.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	InitConfiguration *runtime.RawExtension `json:"initConfiguration,omitempty"`

	// JoinConfiguration is kubeadm's JoinConfiguration, used by every pool instance.
	// +optional
	JoinConfiguration *JoinConfiguration `json:"joinConfiguration,omitempty"`

	// Files are written to the node before kubeadm runs.
	// +optional
	// +kubebuilder:validation:MaxItems=200
	Files []File `json:"files,omitempty"`

	// DiskSetup partitions disks and creates file systems.
	// +optional
	DiskSetup *DiskSetup `json:"diskSetup,omitempty"`

	// Mounts are mount points, in cloud-init's format (device, mount point, options...).
	// +optional
	Mounts []MountPoints `json:"mounts,omitempty"`

	// BootCommands run very early in boot (cloud-init bootcmd).
	// +optional
	BootCommands []string `json:"bootCommands,omitempty"`

	// PreKubeadmCommands run before kubeadm.
	// +optional
	PreKubeadmCommands []string `json:"preKubeadmCommands,omitempty"`

	// PostKubeadmCommands run after kubeadm.
	// +optional
	PostKubeadmCommands []string `json:"postKubeadmCommands,omitempty"`

	// Users are created on the node.
	// +optional
	Users []User `json:"users,omitempty"`

	// NTP configures time synchronisation.
	// +optional
	NTP *NTP `json:"ntp,omitempty"`

	// Format is the output format of the bootstrap data: cloud-config (default) or ignition.
	// +optional
	// +kubebuilder:default=cloud-config
	Format Format `json:"format,omitempty"`

	// Verbosity is kubeadm's log verbosity (--v).
	// +optional
	// +kubebuilder:validation:Minimum=0
	Verbosity *int32 `json:"verbosity,omitempty"`

	// UseExperimentalRetryJoin retries kubeadm join on failure.
	// +optional
	UseExperimentalRetryJoin bool `json:"useExperimentalRetryJoin,omitempty"`

	// Ignition holds Ignition-specific options, used when format is ignition.
	// +optional
	Ignition *IgnitionSpec `json:"ignition,omitempty"`
}

// JoinConfiguration is kubeadm's JoinConfiguration (kubeadm.k8s.io/v1beta3 shape).
type JoinConfiguration struct {
	metav1.TypeMeta `json:",inline"`

	// NodeRegistration is how the node registers with the cluster.
	// +optional
	NodeRegistration NodeRegistrationOptions `json:"nodeRegistration,omitempty"`

	// CACertPath is the path of the cluster CA certificate on the node.
	// +optional
	CACertPath string `json:"caCertPath,omitempty"`

	// Discovery is how the node finds and trusts the cluster.
	// +optional
	Discovery Discovery `json:"discovery,omitempty"`

	// ControlPlane, when set, joins the node as a control plane node.
	// +optional
	ControlPlane *JoinControlPlane `json:"controlPlane,omitempty"`

	// SkipPhases are kubeadm join phases to skip.
	// +optional
	SkipPhases []string `json:"skipPhases,omitempty"`

	// Patches are kustomize-style patches applied to the kubeadm-generated manifests.
	// +optional
	Patches *Patches `json:"patches,omitempty"`
}

// NodeRegistrationOptions is how a node registers with the cluster.
type NodeRegistrationOptions struct {
	// Name is the Node's name. Defaults to the hostname.
	// +optional
	Name string `json:"name,omitempty"`

	// CRISocket is the CRI socket kubeadm uses.
	// +optional
	CRISocket string `json:"criSocket,omitempty"`

	// Taints are registered on the Node.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:XValidation:rule="self.all(t, t.effect in ['NoSchedule', 'PreferNoSchedule', 'NoExecute'])",message="taint effect must be one of NoSchedule, PreferNoSchedule, NoExecute"
	Taints []corev1.Taint `json:"taints,omitempty"`

	// KubeletExtraArgs are extra flags for the kubelet.
	// +optional
	KubeletExtraArgs map[string]string `json:"kubeletExtraArgs,omitempty"`

	// IgnorePreflightErrors are preflight errors to ignore.
	// +optional
	IgnorePreflightErrors []string `json:"ignorePreflightErrors,omitempty"`

	// ImagePullPolicy is the pull policy for kubeadm's images.
	// +optional
	// +kubebuilder:validation:Enum=Always;IfNotPresent;Never
	ImagePullPolicy string `json:"imagePullPolicy,omitempty"`

	// ImagePullSerial pulls images one at a time.
	// +optional
	ImagePullSerial *bool `json:"imagePullSerial,omitempty"`
}

// Discovery is how a joining node finds and trusts the cluster.
// +kubebuilder:validation:XValidation:rule="!(has(self.bootstrapToken) && has(self.file))",message="discovery.bootstrapToken and discovery.file are mutually exclusive"
type Discovery struct {
	// BootstrapToken discovers the cluster with a bootstrap token.
	// +optional
	BootstrapToken *BootstrapTokenDiscovery `json:"bootstrapToken,omitempty"`

	// File discovers the cluster from a kubeconfig file.
	// +optional
	File *FileDiscovery `json:"file,omitempty"`

	// TLSBootstrapToken is the token used for the TLS bootstrap. mpool fills it with a
	// fresh bootstrap token when unset.
	// +optional
	TLSBootstrapToken string `json:"tlsBootstrapToken,omitempty"`

	// Timeout bounds the discovery.
	// +optional
	Timeout *metav1.Duration `json:"timeout,omitempty"`
}

// BootstrapTokenDiscovery discovers the cluster with a bootstrap token.
type BootstrapTokenDiscovery struct {
	// Token is the bootstrap token used to fetch the cluster info.
	// +optional
	Token string `json:"token,omitempty"`

	// APIServerEndpoint is the API server address to discover from.
	// +optional
	APIServerEndpoint string `json:"apiServerEndpoint,omitempty"`

	// CACertHashes pin the cluster CA's public key ("sha256:<hex>").
	// +optional
	CACertHashes []string `json:"caCertHashes,omitempty"`

	// UnsafeSkipCAVerification skips CA pinning.
	// +optional
	UnsafeSkipCAVerification bool `json:"unsafeSkipCAVerification,omitempty"`
}

// FileDiscovery discovers the cluster from a kubeconfig file.
type FileDiscovery struct {
	// KubeConfigPath is the path of the kubeconfig file on the node.
	// +required
	KubeConfigPath string `json:"kubeConfigPath"`

	// KubeConfig, when set, is generated by the bootstrap provider and written to
	// kubeConfigPath. It is accepted and preserved as written.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	KubeConfig *runtime.RawExtension `json:"kubeConfig,omitempty"`
}

// JoinControlPlane joins a node as a control plane node.
type JoinControlPlane struct {
	// LocalAPIEndpoint is the API server endpoint on this node.
	// +optional
	LocalAPIEndpoint APIEndpoint `json:"localAPIEndpoint,omitempty"`
}

// APIEndpoint is an API server's advertised address and port.
type APIEndpoint struct {
	// AdvertiseAddress is the IP address the API server advertises.
	// +optional
	AdvertiseAddress string `json:"advertiseAddress,omitempty"`

	// BindPort is the port the API server binds to.
	// +optional
	BindPort int32 `json:"bindPort,omitempty"`
}

// Patches are kustomize-style patches for kubeadm's manifests.
type Patches struct {
	// Directory holds the patch files.
	// +optional
	Directory string `json:"directory,omitempty"`
}

// File is a file written to the node.
// +kubebuilder:validation:XValidation:rule="!(has(self.content) && has(self.contentFrom))",message="only one of content and contentFrom may be set",fieldPath=".contentFrom"
type File struct {
	// Path is the file's absolute path on the node.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Path string `json:"path"`

	// Owner is the file's owner and group, for example root:root.
	// +optional
	Owner string `json:"owner,omitempty"`

	// Permissions is the file's mode, for example "0640".
	// +optional
	Permissions string `json:"permissions,omitempty"`

	// Encoding is how Content is encoded: base64, gzip or gzip+base64.
	// +optional
	Encoding Encoding `json:"encoding,omitempty"`

	// Append appends Content to an existing file instead of replacing it.
	// +optional
	Append bool `json:"append,omitempty"`

	// Content is the file's content.
	// +optional
	Content string `json:"content,omitempty"`

	// ContentFrom reads the file's content from a Secret.
	// +optional
	ContentFrom *FileSource `json:"contentFrom,omitempty"`
}

// FileSource is where a file's content comes from.
type FileSource struct {
	// Secret holds the content.
	// +required
	Secret SecretFileSource `json:"secret"`
}

// SecretFileSource is a key of a Secret in the KubeadmConfig's namespace.
type SecretFileSource struct {
	// Name of the Secret.
	// +required
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`

	// Key in the Secret's data.
	// +required
	// +kubebuilder:validation:MinLength=1
	Key string `json:"key"`
}

// PasswdSource is where a user's password hash comes from.
type PasswdSource struct {
	// Secret holds the password hash.
	// +required
	Secret SecretPasswdSource `json:"secret"`
}

// SecretPasswdSource is a key of a Secret in the KubeadmConfig's namespace.
type SecretPasswdSource struct {
	// Name of the Secret.
	// +required
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`

	// Key in the Secret's data.
	// +required
	// +kubebuilder:validation:MinLength=1
	Key string `json:"key"`
}

// User is a user created on the node.
// +kubebuilder:validation:XValidation:rule="!(has(self.passwd) && has(self.passwdFrom))",message="only one of passwd and passwdFrom may be set",fieldPath=".passwdFrom"
type User struct {
	// Name of the user.
	// +required
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`

	// Gecos is the user's comment field.
	// +optional
	Gecos *string `json:"gecos,omitempty"`

	// Groups are extra groups of the user, comma separated.
	// +optional
	Groups *string `json:"groups,omitempty"`

	// HomeDir is the user's home directory.
	// +optional
	HomeDir *string `json:"homeDir,omitempty"`

	// Inactive marks the user inactive.
	// +optional
	Inactive *bool `json:"inactive,omitempty"`

	// Shell is the user's login shell.
	// +optional
	Shell *string `json:"shell,omitempty"`

	// Passwd is a hashed password for the user.
	// +optional
	Passwd *string `json:"passwd,omitempty"`

	// PasswdFrom reads the hashed password from a Secret.
	// +optional
	PasswdFrom *PasswdSource `json:"passwdFrom,omitempty"`

	// PrimaryGroup is the user's primary group.
	// +optional
	PrimaryGroup *string `json:"primaryGroup,omitempty"`

	// LockPassword disables password login.
	// +optional
	LockPassword *bool `json:"lockPassword,omitempty"`

	// Sudo is a sudoers rule for the user.
	// +optional
	Sudo *string `json:"sudo,omitempty"`

	// SSHAuthorizedKeys are the user's authorised SSH public keys.
	// +optional
	SSHAuthorizedKeys []string `json:"sshAuthorizedKeys,omitempty"`
}

// NTP configures time synchronisation.
type NTP struct {
	// Servers are the NTP servers.
	// +optional
	Servers []string `json:"servers,omitempty"`

	// Enabled turns NTP on or off.
	// +optional
	Enabled *bool `json:"enabled,omitempty"`
}

// DiskSetup partitions disks and creates file systems.
type DiskSetup struct {
	// Partitions to create.
	// +optional
	Partitions []Partition `json:"partitions,omitempty"`

	// Filesystems to create.
	// +optional
	Filesystems []Filesystem `json:"filesystems,omitempty"`
}

// Partition is a disk partition layout.
type Partition struct {
	// Device is the disk to partition.
	// +required
	Device string `json:"device"`

	// Layout true creates a single partition over the whole disk.
	// +required
	Layout bool `json:"layout"`

	// Overwrite allows overwriting an existing partition table.
	// +optional
	Overwrite *bool `json:"overwrite,omitempty"`

	// TableType is the partition table type: mbr or gpt.
	// +optional
	// +kubebuilder:validation:Enum=mbr;gpt
	TableType *string `json:"tableType,omitempty"`
}

// Filesystem is a file system to create.
type Filesystem struct {
	// Device is the device to format.
	// +required
	Device string `json:"device"`

	// Filesystem is the file system type, for example ext4.
	// +required
	Filesystem string `json:"filesystem"`

	// Label of the file system.
	// +optional
	Label string `json:"label,omitempty"`

	// Partition is the partition to use: auto, any, none or a number.
	// +optional
	Partition *string `json:"partition,omitempty"`

	// Overwrite allows overwriting an existing file system.
	// +optional
	Overwrite *bool `json:"overwrite,omitempty"`

	// ReplaceFS replaces an existing file system of this type.
	// +optional
	ReplaceFS *string `json:"replaceFS,omitempty"`

	// ExtraOpts are extra options for mkfs.
	// +optional
	ExtraOpts []string `json:"extraOpts,omitempty"`
}

// MountPoints is one cloud-init mount entry.
type MountPoints []string

// IgnitionSpec holds Ignition-specific options.
type IgnitionSpec struct {
	// ContainerLinuxConfig is extra Container Linux configuration.
	// +optional
	ContainerLinuxConfig *ContainerLinuxConfig `json:"containerLinuxConfig,omitempty"`
}

// ContainerLinuxConfig is extra Container Linux (Butane) configuration.
type ContainerLinuxConfig struct {
	// AdditionalConfig is merged into the generated config.
	// +optional
	AdditionalConfig string `json:"additionalConfig,omitempty"`

	// Strict fails on warnings in the additional config.
	// +optional
	Strict bool `json:"strict,omitempty"`
}

// KubeadmConfigStatus is the observed state of a KubeadmConfig.
type KubeadmConfigStatus struct {
	// Ready is true when the bootstrap data Secret exists.
	// +optional
	Ready bool `json:"ready"`

	// DataSecretName is the name of the Secret holding the bootstrap data.
	// +optional
	DataSecretName *string `json:"dataSecretName,omitempty"`

	// FailureReason is set on a terminal problem, as a succinct machine-readable value.
	// +optional
	FailureReason string `json:"failureReason,omitempty"`

	// FailureMessage is set on a terminal problem, as a human-readable message.
	// +optional
	FailureMessage string `json:"failureMessage,omitempty"`

	// ObservedGeneration is the latest generation the controller observed.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions are the observations of the config's current state.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=kubeadmconfigs,scope=Namespaced,categories=cluster-api
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".metadata.labels['cluster\\.x-k8s\\.io/cluster-name']",description="Cluster"
// +kubebuilder:printcolumn:name="Ready",type="boolean",JSONPath=".status.ready",description="Bootstrap data is ready"
// +kubebuilder:printcolumn:name="DataSecret",type="string",JSONPath=".status.dataSecretName",description="Secret holding the bootstrap data"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time since creation"

// KubeadmConfig is the kubeadm bootstrap configuration of a Machine or MachinePool.
type KubeadmConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	Spec KubeadmConfigSpec `json:"spec,omitempty"`
	// Status is the observed state.
	Status KubeadmConfigStatus `json:"status,omitempty"`
}

// GetConditions returns the config's conditions.
func (c *KubeadmConfig) GetConditions() []metav1.Condition { return c.Status.Conditions }

// SetConditions replaces the config's conditions.
func (c *KubeadmConfig) SetConditions(conds []metav1.Condition) { c.Status.Conditions = conds }

// +kubebuilder:object:root=true

// KubeadmConfigList is a list of KubeadmConfigs.
type KubeadmConfigList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the KubeadmConfigs.
	Items []KubeadmConfig `json:"items"`
}
