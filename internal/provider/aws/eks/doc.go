// Package eks is the EKS part of the AWS provider: AWSManagedMachinePools
// backed by EKS managed node groups, through aws-sdk-go-v2's eks client
// (ec2's, to read the node group's instances, and autoscaling's, to replace
// one). It lives under
// internal/provider/aws so that it reaches AWS with that provider's
// credentials (AWSClusterStaticIdentity, the manager's own) and error
// mapping, which hack/layers would not let a sibling provider import.
//
// EKS runs its node groups' rollouts itself — it surges new nodes and
// cordons, drains and terminates old ones within the node group's
// updateConfig — so the ScaleGroup declares
// scalegroup.Capabilities{CloudRollouts: true}: the engine applies the
// desired node group with the replicas as its desired size, one change at a
// time, and observes. Apply writes only what differs, one EKS update at a
// time: CreateNodegroup; UpdateNodegroupConfig (scaling, labels, taints,
// updateConfig, applied in place); UpdateNodegroupVersion (Kubernetes
// version, one minor at a time as EKS requires, and AMI release version),
// preceded by TagResource of the model hash. A node group at rest costs one
// DescribeNodegroup and one DescribeInstances per Get, and no write.
//
// # Replacing an unhealthy node
//
// EKS has no call that removes a chosen node, so DeleteInstances is
// refused; but a node group runs its nodes in an Auto Scaling group of the
// account (resources.autoScalingGroups), which replaces an instance
// terminated there without a decrement. The ScaleGroup is a
// scalegroup.Replacer (Capabilities.ReplaceInstances): ReplaceInstances
// terminates with TerminateInstanceInAutoScalingGroup,
// ShouldDecrementDesiredCapacity false, through the Auto Scaling client
// at Options.EC2Endpoint. The engine remediates an unhealthy node that way,
// after cordoning and draining it.
//
// # Carrying the model hash
//
// The node group's tags carry the engine's model hash (mpool.dev/model-hash)
// and the release it stands for (mpool.dev/model-target:
// "<version>/<release version, or empty for EKS's latest>"); the simulated
// EKS tags each instance with the release it launched it from
// (mpool.dev/eks-release). Every other field of the model is one EKS cannot
// change on a node group (refused, naming the field), so the release is the
// model: the group's ModelHash is the tagged hash once the node group runs
// its target release, and an instance's is that hash when its own release
// meets the target. A version update that EKS refused or failed leaves the
// group out of date, so the engine applies it again, and instances of an
// older release are reported stale until EKS replaces them.
//
// # Launch templates
//
// A pool with spec.awsLaunchTemplate gets a launch template of its own in
// EC2 (Template: named awsLaunchTemplate.name, else
// "<AWSManagedControlPlane>-<pool>" as CAPA names it, tagged
// mpool.dev/eks-nodegroup), created before the node group and passed to it
// as {id, version}. Each version's description holds the hash of the
// Template it was written from, so a changed template is one new version
// (CreateLaunchTemplateVersion), found again after a restart, and one
// UpdateNodegroupVersion with the launch template, before any Kubernetes
// version or release update (one at a time, as CAPA does). The model target
// then carries the template version too ("<version>/<release>/<id>:<n>"),
// as does each instance's release tag. Delete deletes the template with the
// node group, as CAPA does.
//
// # Forced updates
//
// EKS fails an update whose drain a PodDisruptionBudget blocks
// (PodEvictionFailure) unless it is forced. mpool does not ask for a
// failed update again for Options.RetryFailedUpdateAfter; with the pool's
// annotation mpool.dev/eks-force-update: "true" (Settings.ForceUpdate) every
// UpdateNodegroupVersion is forced, and one EKS failed with
// PodEvictionFailure is asked for again at once.
//
// # Endpoints
//
// EKS and EC2 are separate endpoints: Options.Endpoint is EKS's (the
// manager's --eks-endpoint; "" leaves the SDK its resolution, which honours
// AWS_ENDPOINT_URL_EKS and AWS_ENDPOINT_URL) and Options.EC2Endpoint EC2's
// (the AWS provider's --aws-endpoint). The simulated cloud serves them on
// two listeners; `mpool up` passes both.
package eks
