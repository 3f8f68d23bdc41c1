package kubeadmconfig

// Event reasons the controller records on KubeadmConfigs. Event notes name
// token Secrets at most, never a token.
const (
	// ReasonDataSecretCreated: the bootstrap data Secret was rendered.
	ReasonDataSecretCreated = "DataSecretCreated"
	// ReasonDataSecretRerendered: the data Secret no longer carried the token
	// it was annotated with and was rendered again.
	ReasonDataSecretRerendered = "DataSecretRerendered"
	// ReasonDataSecretUpdated: the data Secret was rendered again because the
	// KubeadmConfig or an input it renders from changed; the token it
	// carried was kept. The note says whether the content changed (the pool
	// rolls) or only a token the user sets.
	ReasonDataSecretUpdated = "DataSecretUpdated"
	// ReasonUnsupportedFormat: the config asks for a format mpool cannot render.
	ReasonUnsupportedFormat = "UnsupportedFormat"
	// ReasonBootstrapTokenRotated: the data Secret switched to a new token.
	ReasonBootstrapTokenRotated = "BootstrapTokenRotated"
	// ReasonBootstrapTokenReplaced: the token Secret had disappeared from the
	// workload cluster and a new token took its place.
	ReasonBootstrapTokenReplaced = "BootstrapTokenReplaced"
	// ReasonBootstrapTokenCleanupSkipped: the config was deleted without
	// deleting its tokens because the workload cluster is gone or unreachable.
	ReasonBootstrapTokenCleanupSkipped = "BootstrapTokenCleanupSkipped"
)

// Event actions (events.k8s.io/v1 "action").
const (
	actionCreate = "Create"
	actionRotate = "Rotate"
	actionDelete = "Delete"
	actionRender = "Render"
)
