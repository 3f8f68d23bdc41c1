// Package aws is the AWS provider: AWSMachinePools driven onto EC2 Auto
// Scaling Groups and launch templates, through aws-sdk-go-v2 (autoscaling,
// ec2). It is an Adapter (adapter.go: AWSMachinePool and
// AWSMachinePoolMachine onto the infrapool engine) plus a ScaleGroup
// (asg.go: scalegroup.ScaleGroup on Auto Scaling and EC2), and the
// resolution of credentials per AWSClusterStaticIdentity (credentials.go).
// No AWS SDK type leaves this package.
//
// # Placing an Auto Scaling Group
//
// A pool's ASG lives in the AWSCluster's region (scalegroup.Ref.Scope),
// reached with the AWSCluster's identityRef: an AWSClusterStaticIdentity
// (Ref.Credentials "AWSClusterStaticIdentity/<name>"; its access key is in
// a Secret of the manager's namespace), or the manager's own credentials
// (the SDK's default chain, or keys given as flags) for none or
// AWSClusterControllerIdentity. AWSClusterRoleIdentity is refused for now.
// The ASG's name, and its launch template's, is derived from the pool's
// namespace and name, at most 128 characters (a launch template's limit).
//
// Without awsLaunchTemplate.ami.id the AMI is looked up at Apply, as CAPA
// does, by the MachinePool's Kubernetes version: the newest available
// image of the instance type's architecture named by imageLookupFormat
// (default capa-ami-{{.BaseOS}}-?{{.K8sVersion}}-*, base OS ubuntu-24.04)
// and owned by imageLookupOrg (default: CAPA's current account and its
// former one). The lookup is part of the model, not its result: a newer
// image published later rolls nothing.
//
// # Carrying the model hash
//
// Each model is one launch-template version. The ASG carries two tags of
// mpool's own: mpool.dev/model-hash, the current model's hash, and
// mpool.dev/model-since-version, the first launch-template version of that
// model. DescribeAutoScalingGroups reports each instance's launch-template
// version, so Get needs no other call: an instance launched from that
// version or a later one runs the current model (its ModelHash is the
// ASG's hash); an older one reports "lt-version-<n>", a hash no model has,
// and is stale. Each version's description says the same ("mpool
// model=<hash> since=<n> user-data=<hash>"), so that a manager stopped
// between creating a version and updating the ASG (CAPA's FIXME window)
// finds and reuses it instead of creating another. The tags are written
// before the ASG is updated: instances launched meanwhile from the older
// version still read as stale, never the other way round. Each version
// also tags its instances with its model hash (and the Kubernetes
// version), for people and tools looking at EC2; mpool reads versions.
//
// # Tags
//
// The ASG carries the pool's tags (the AWSCluster's and the pool's
// additionalTags, CAPA's cluster and role tags, Name), propagated to
// instances at launch, and mpool's own, not propagated. Tags change no
// instance. Which keys came from additionalTags is recorded on the ASG
// (mpool.dev/additional-tags, continued in -2, -3, ... past 256
// characters): a recorded key the pool no longer has is deleted from the
// ASG (DeleteTags, before the record is rewritten, so a restart in between
// still finds it), which stops its propagation; instances already running
// keep their tags, as on AWS. Tags nobody recorded (another tool's) and
// mpool's, CAPA's, the cloud provider's and AWS's own are never deleted.
//
// # The launch template in status
//
// Get reports the ASG's launch template and version (the AWSMachinePool's
// status.launchTemplateID and launchTemplateVersion) and each instance's
// (its AWSMachinePoolMachine's status.launchTemplateVersion) through
// scalegroup.TemplateRef.
//
// # Bootstrap data
//
// The user data holds a bootstrap token that rotates. A rotation on a
// group at rest costs no write. When the capacity grows and the user data
// differs from that of the ASG's version (the tag mpool.dev/user-data
// holds "<version>:<hash of the user data>", never the data), Apply first
// creates one version like the ASG's but for its user data, with the same
// model hash: instances of the model's earlier versions stay up to date.
// A model change always creates its version with the current user data.
//
// # Capacity and bounds
//
// The engine picks every victim, drains it, and terminates it with a
// decrement of the desired capacity (TerminateInstanceInAutoScalingGroup);
// the ASG is never asked to pick. Since the engine surges above the
// replicas and removes instances before replacing them, the ASG's bounds
// are the pool's widened to the capacity it asks for: MaxSize =
// max(maxSize, capacity), MinSize = min(minSize, capacity). Replicas
// outside the pool's [minSize, maxSize] are refused by the Adapter, with a
// condition saying what to change.
//
// # Cost of a reconcile
//
// Get is one DescribeAutoScalingGroups (plus its pages), never a call per
// instance; Auto Scaling does not report launch times, so an instance's
// CreatedAt is when this process first saw it. A group short of its
// capacity and launching nothing costs one more read, of its latest
// scaling activity, whose failure (a vCPU quota, say) becomes
// Group.Message. Apply reads the ASG and
// writes only what differs: nothing at all for the spec the ASG has, one
// UpdateAutoScalingGroup for a capacity change. A new version prunes the
// template's versions older than every version in use and than the latest
// three (the default version is kept), so a long-lived pool never nears
// AWS's 10,000 versions per template. The SDK's retries are off: the
// engine retries, honouring the Retry-After of the typed errors.
package aws
