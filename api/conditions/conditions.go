// Package conditions is the one home of the condition types and reasons
// mpool sets on Cluster API's own kinds (Cluster, MachinePool, Machine,
// KubeadmConfig) beyond upstream's v1beta2 names, so that users and other
// tools can import them as they import Cluster API's. The conditions of
// mpool's infrastructure kinds are in api/infrastructure/v1beta1
// (conditions.go).
package conditions

import bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"

// Condition types mpool reports beyond upstream's v1beta2 names.
const (
	// BootstrapReadyCondition reports whether the bootstrap data is available.
	BootstrapReadyCondition = "BootstrapReady"

	// ControlPlaneReadyCondition reports whether a Cluster's control plane is ready.
	ControlPlaneReadyCondition = "ControlPlaneReady"

	// ReplicasReadyCondition reports whether all of a MachinePool's replicas are ready.
	ReplicasReadyCondition = "ReplicasReady"

	// DrainingSucceededCondition reports whether draining a Machine's Node succeeded.
	DrainingSucceededCondition = "DrainingSucceeded"
)

// Condition reasons mpool reports beyond upstream's v1beta2 names.
const (
	// WaitingForInfrastructureReason: the infrastructure object is not ready yet.
	WaitingForInfrastructureReason = "WaitingForInfrastructure"

	// WaitingForClusterInfrastructureReason: the Cluster's infrastructure is not ready yet.
	WaitingForClusterInfrastructureReason = "WaitingForClusterInfrastructure"

	// WaitingForControlPlaneReason: the Cluster's control plane is not ready yet.
	WaitingForControlPlaneReason = "WaitingForControlPlane"

	// WaitingForReplicasReadyReason: fewer replicas are ready than desired.
	WaitingForReplicasReadyReason = "WaitingForReplicasReady"

	// ObjectNotFoundReason: a referenced object does not exist.
	ObjectNotFoundReason = "ObjectNotFound"

	// DrainingReason: a Node is being drained.
	DrainingReason = "Draining"

	// DrainingFailedReason: draining a Node failed.
	DrainingFailedReason = "DrainingFailed"
)

// Condition types mpool computes on MachinePools (and UpToDate on pool
// Machines) beyond upstream's v1beta2 names.
const (
	// AvailableCondition: every desired replica has been Ready for at least
	// minReadySeconds.
	AvailableCondition = "Available"
	// ScalingUpCondition: the infrastructure pool has fewer instances than
	// desired.
	ScalingUpCondition = "ScalingUp"
	// ScalingDownCondition: the infrastructure pool has more instances than
	// desired.
	ScalingDownCondition = "ScalingDown"
	// UpToDateCondition: every instance runs the pool's latest model (from
	// the infrastructure machines' status.latestModelApplied).
	UpToDateCondition = "UpToDate"
)

// Condition reasons of the conditions above and of ReplicasReady and Ready.
const (
	WorkloadClusterNotConnectedReason = "WorkloadClusterNotConnected"
	AvailableReason                   = "Available"
	NotAvailableReason                = "NotAvailable"
	ScalingUpReason                   = "ScalingUp"
	NotScalingUpReason                = "NotScalingUp"
	ScalingDownReason                 = "ScalingDown"
	NotScalingDownReason              = "NotScalingDown"
	UpToDateReason                    = "UpToDate"
	NotUpToDateReason                 = "NotUpToDate"
	UpToDateUnknownReason             = "UpToDateUnknown"
	NoBootstrapDataReason             = "NoBootstrapDataNeeded"
	FailedReason                      = "Failed"
)

// Conditions and reasons of Clusters.

// WorkloadClusterReachableCondition says whether the Cluster's workload API
// server can be reached through its kubeconfig Secret, and why not.
const WorkloadClusterReachableCondition = "WorkloadClusterReachable"

// Condition reasons of this controller.
const (
	// ReachableReason: the workload API server answered.
	ReachableReason = "Reachable"
	// NoInfrastructureRefReason: the Cluster has no infrastructureRef, so its
	// infrastructure is whatever the kubeconfig reaches.
	NoInfrastructureRefReason = "NoInfrastructureRef"
	// PlacementOnlyReason: the Cluster's infrastructure object is one of
	// mpool's placement kinds (AzureCluster, AWSCluster): it says where the
	// pools go in infrastructure that exists, and mpool, which provisions
	// nothing for it, reports it ready.
	PlacementOnlyReason = "PlacementOnly"
)

// Conditions and reasons of KubeadmConfigs.

// BootstrapTokenAvailableCondition reports whether the data Secret carries a
// valid bootstrap token. Its message names the token's Secret, never the token.
const BootstrapTokenAvailableCondition = "BootstrapTokenAvailable"

// DataSecretUpToDateCondition reports whether the data Secret holds what the
// KubeadmConfig and its inputs render to now. While it is False the Secret
// keeps the data rendered earlier, which stays usable (DataSecretAvailable);
// the reason says what keeps it from being rendered again.
const DataSecretUpToDateCondition = "DataSecretUpToDate"

// Condition reasons of KubeadmConfigs, besides upstream's.
const (
	// DataSecretGenerationFailedReason: rendering or writing the bootstrap
	// data failed, or the pool's version cannot select a kubeadm API.
	DataSecretGenerationFailedReason = "DataSecretGenerationFailed"
	// DataSecretUpToDateReason: the data Secret holds what the config renders to now.
	DataSecretUpToDateReason = "UpToDate"
	// NoTokenToKeepReason: the config wants a token mpool manages, but the
	// data Secret carries none that could be kept, and rendering it again
	// must not create one.
	NoTokenToKeepReason = "NoTokenToKeep"
	// WaitingForClusterReason: the pool's Cluster does not exist.
	WaitingForClusterReason = "WaitingForCluster"
	// WaitingForControlPlaneEndpointReason: the Cluster has no
	// spec.controlPlaneEndpoint yet and the config sets no apiServerEndpoint.
	WaitingForControlPlaneEndpointReason = "WaitingForControlPlaneEndpoint"
	// WaitingForClusterCAReason: the "<cluster>-ca" Secret does not exist.
	WaitingForClusterCAReason = "WaitingForClusterCA"
	// InvalidClusterCAReason: the "<cluster>-ca" Secret holds no usable
	// certificate.
	InvalidClusterCAReason = "InvalidClusterCA"
	// CACertHashesProvidedReason: the config pins the CA itself.
	CACertHashesProvidedReason = "CACertHashesProvided"
	// CertificatesAvailableReason: the cluster CA was read (upstream's
	// KubeadmConfigCertificatesAvailableReason).
	CertificatesAvailableReason = bootstrapv1.KubeadmConfigCertificatesAvailableReason
	// WaitingForSecretReason: a Secret the config's files or users reference
	// does not exist or lacks the key.
	WaitingForSecretReason = "WaitingForSecret"
	// WaitingForWorkloadClusterReason: the workload cluster cannot be reached.
	WaitingForWorkloadClusterReason = "WaitingForWorkloadCluster"
	// UnsupportedFormatReason: the config asks for a format mpool cannot render.
	UnsupportedFormatReason = "UnsupportedFormat"
	// TokenValidReason: the data carries a managed token that is valid.
	TokenValidReason = "TokenValid"
	// TokenProvidedReason: the config sets its own token; mpool does not
	// manage it.
	TokenProvidedReason = "TokenProvided"
	// FileDiscoveryReason: the config discovers the cluster from a file and
	// needs no token.
	FileDiscoveryReason = "FileDiscovery"
	// NotEvaluatedReason: the condition could not be computed this time.
	NotEvaluatedReason = "NotEvaluated"
)
