// Package eksface is the simulated cloud's EKS face (EKSFace): Amazon EKS's
// REST-JSON API with Signature Version 4 (service "eks"), as the unmodified
// AWS SDK for Go v2 and the AWS CLI speak it. It is served over plain HTTP
// on a listener of its own (ListenerFace) and under /eks/. It is built on
// the AWS face (package awsface) and uses only its exported API: the AWS
// face's access keys, accounts, regions and clock skew authenticate its
// requests, and a node group's instances are an Auto Scaling group of the
// AWS face.
//
// Operations: CreateCluster, DescribeCluster, ListClusters;
// CreateNodegroup, DescribeNodegroup, ListNodegroups, DeleteNodegroup,
// UpdateNodegroupConfig, UpdateNodegroupVersion, DescribeUpdate,
// ListUpdates; TagResource, UntagResource, ListTagsForResource (clusters
// and node groups). Any other path is 404 NotFoundException.
//
// Clusters are ACTIVE once created (EKSCreateCluster registers one from
// Go; `mpool up` registers EKSDefaultClusterName). A cluster's version is
// 1.x (default EKSDefaultVersion); its endpoint and CA are those of the
// node agent's first workload API server.
//
// Node groups (nodegroups.go) take EKS's defaults (scaling 1..2, amiType
// AL2023_x86_64_STANDARD, t3.medium, ON_DEMAND, a 20 GiB disk without a
// launch template, the cluster's version and the latest release of it,
// <version>.0-EKSReleaseDate) and EKS's checks: a version no newer than
// the cluster's, a release of that version, subnets of the AWS face's
// default VPC, taint effects, and the quotas
// EKSFace.MaxNodegroupsPerCluster and MaxNodesPerNodegroup (EKS's 30 and
// 450; ResourceLimitExceededException beyond). A launch template is named
// by ID or name (version "1" by default); one the AWS face has is resolved
// to its ID and name and watched, another keeps a derived ID. Its contents
// are not read: the AMI is the release's.
//
// updateConfig is maxUnavailable (default 1) or maxUnavailablePercentage
// (of the desired size, at least one node), each 1 to 100.
// UpdateNodegroupConfig changes scaling, labels, taints and updateConfig
// (a ConfigUpdate; the new labels and taints are applied to the existing
// Nodes); UpdateNodegroupVersion (a VersionUpdate) moves the version one
// minor at a time up to the cluster's, the release version, or the launch
// template's version (never the template), with force. An update is
// refused (ResourceInUseException) while another runs or the node group is
// neither ACTIVE nor DEGRADED.
//
// A node group's Auto Scaling group is eks-<nodegroup>-<uuid>
// (resources.autoScalingGroups), so the AWS face's
// DescribeAutoScalingGroups, DescribeScalingActivities and
// DescribeInstances show it, and it keeps its desired capacity as AWS's
// does: an instance terminated in it without a decrement
// (TerminateInstanceInAutoScalingGroup with ShouldDecrementDesiredCapacity
// false) or failing its EC2 health check is replaced from the node group's
// release, the node group's desired size unchanged. Its instances launch from the node group's
// release (AMI, instance type, Spot for SPOT), tagged eks:cluster-name,
// eks:nodegroup-name, kubernetes.io/cluster/<cluster>, mpool.dev/eks-release
// (EKSTagRelease) and the node group's tags. EKS bootstraps them: the face
// creates a bootstrap token in the workload cluster's kube-system and
// writes their kubeadm join itself, with EKS's node labels
// (eks.amazonaws.com/nodegroup, capacityType, nodegroup-image, the launch
// template's) and the node group's labels and taints. Without a workload
// API server they boot and never join.
//
// A background loop (rollout.go), every EKSFace.Interval while a node
// group is CREATING, UPDATING, DELETING or DEGRADED, does what EKS does: a
// new node group is ACTIVE once its desired nodes joined, CREATE_FAILED
// with NodeCreationFailure past EKSFace.NodeCreationTimeout; a version
// update surges new nodes and cordons, drains (eviction API,
// PodDisruptionBudgets respected) and terminates old ones, at most
// maxUnavailable at a time, failing with PodEvictionFailure when a drain
// stays blocked past EKSFace.PodEvictionTimeout unless forced (a failed
// update restores the previous release); a scale-down drains the nodes it
// removes, picked as the Auto Scaling group would (core.PickScaleIn); a
// deleted node group's group, Nodes, bootstrap token and updates go. The
// face's data is persisted: a restarted cloud resumes its updates.
//
// Health (health.go): node groups report EKS's health issues from real
// causes in the simulation, AsgInstanceLaunchFailures (the AWS face's vCPU
// quota holds launches back; also recorded as the Auto Scaling group's
// failed scaling activity), AutoScalingGroupNotFound (the group deleted
// behind EKS's back; one recreated with its name is taken over again),
// Ec2LaunchTemplateNotFound (its launch template deleted) and
// NodeCreationFailure (instances that do not join). An ACTIVE node group
// with issues is DEGRADED, and ACTIVE again once they are gone; an update
// fails with NodeCreationFailure when its group vanishes, its nodes do not
// join, or launches stay held back for the node creation timeout.
//
// Errors are EKS's, with X-Amzn-ErrorType: ResourceNotFoundException,
// ResourceInUseException, InvalidParameterException,
// ResourceLimitExceededException, MissingAuthenticationTokenException,
// UnrecognizedClientException and InvalidSignatureException (403);
// ThrottlingException (429) from EKSFace.Budget, a token bucket per account
// and region (off by default; EKSDefaultBudget is `mpool cloud
// --eks-throttle`'s); injected faults as ThrottlingException,
// ServiceUnavailableException or ServerException.
//
// Node auto repair (repair.go): nodeRepairConfig on CreateNodegroup,
// UpdateNodegroupConfig and DescribeNodegroup; with it enabled, a node not
// Ready (its instance has the core fault KubeletStopped or NodeNotReady)
// for EKSFace.NodeRepairWait (EKS's 30 minutes) is replaced, the desired
// size unchanged, within EKS's default or the configured unhealthy
// threshold and parallel limit.
//
// Not simulated: launch template contents, node repair overrides, Fargate, add-ons,
// access entries, changes to clusters (no update or deletion).
package eksface
