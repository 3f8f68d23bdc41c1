// Package awsface is the simulated cloud's AWS face: Auto Scaling + EC2
// (AWSFace, wire types in package awsapi). It is Amazon EC2 Auto Scaling
// (API 2011-01-01) and the part of Amazon EC2 (2016-11-15) a machine pool
// needs, over the AWS Query protocol (form-encoded POST with
// Action and Version; XML answers in each service's namespace with
// ResponseMetadata/RequestId or requestId; errors as Auto Scaling's
// <ErrorResponse><Error><Type/><Code/><Message/></Error><RequestId/> and
// EC2's <Response><Errors><Error><Code/><Message/></Error></Errors><RequestID/>),
// as the unmodified AWS SDK for Go v2 and the AWS CLI speak them. It is
// served over plain HTTP on a listener of its own (ListenerFace; FaceAddrs
// or 127.0.0.1:0) and under /aws/; clients set BaseEndpoint (or
// AWS_ENDPOINT_URL) to Server.FaceURL("aws") with static credentials. The
// service is the SigV4 credential scope's (else the Version's).
//
// Every request is verified as Signature Version 4 (canonical request,
// string to sign, the HMAC key chain; auth.go, no SDK) against the
// face's access keys: AWSDefaultAccessKeyID / AWSDefaultSecretAccessKey in
// account AWSDefaultAccountID until removed; AWSSetKey, AWSDeleteKey and
// AWSKeys manage keys (persisted face data), AWSFace.Keys adds fixed ones.
// A wrong secret is 403 SignatureDoesNotMatch (EC2: 401 AuthFailure), an
// unknown key 403 InvalidClientTokenId (EC2: 401 AuthFailure), a date more
// than 15 minutes off 403 SignatureDoesNotMatch "Signature expired: ..."
// (EC2: 400 RequestExpired). The account and the scope's region are the
// core scope AWSScope(account, region) ("<account>/<region>").
//
// Auto Scaling: Create/Update/Describe/DeleteAutoScalingGroup(s),
// SetDesiredCapacity, TerminateInstanceInAutoScalingGroup, SetInstanceHealth,
// CreateOrUpdateTags, DeleteTags, DescribeScalingActivities,
// Suspend/ResumeProcesses (processes.go: Launch, Terminate,
// ReplaceUnhealthy, HealthCheck and InstanceRefresh take effect) and
// Start/Describe/CancelInstanceRefresh (refresh.go: min/max
// healthy percentages, warmup, SkipMatching). A group is a
// core group named as sent (its payload: launch template and version as
// named, the resolved version, sizes, subnets, tags). LaunchTemplate (or
// MixedInstancesPolicy's launch template; overrides ignored) by ID or name
// with $Latest, $Default or a number; the core model is the resolved
// version's AMI, instance type, user data (decoded), instance tags plus
// propagated group tags; ModelHash is the tag mpool.dev/model-hash, else
// <template-id>:<version>; the kubelet version the tag
// mpool.dev/kubernetes-version, else the AMI's. A new template version or
// default re-resolves the groups launching $Latest or $Default: new
// instances launch from it, existing ones keep theirs (each records its
// version). Instances: IDs i- + 17 hex digits, providerIDs
// aws:///<zone>/<id>, a private address in the zone's subnet, host names
// ip-10-0-x-y.ec2.internal (us-east-1) or .<region>.compute.internal;
// ds.meta_data local_hostname, hostname, instance_id, instance_type,
// ami_id, local_ipv4, availability_zone, region, account_id. Lifecycle
// states Pending, InService (a failed boot: InService, Unhealthy, replaced
// after the group's HealthCheckGracePeriod), Terminating. Health checks
// (health.go): HealthCheckType and HealthCheckGracePeriod (default 0, as
// the API's) are kept and reported; an instance with the core fault
// CloudCheckFailing fails its EC2 status check and is Unhealthy past the
// grace period, as is one SetInstanceHealth set Unhealthy; ReplaceUnhealthy
// terminates it and launches a replacement, the desired capacity
// unchanged, with activities, when the group is next described. Scale-in spares instances ProtectedFromScaleIn and takes
// failed ones, then the fullest zone, other template versions, newest.
// Deletion without ForceDelete is refused while instances remain
// (ResourceInUse; ScalingActivityInProgress while they terminate); the
// group reports "Delete in progress" until they are gone. Errors are
// ValidationError with AWS's messages (sizes, unknown subnets, a template
// that cannot launch: "The image id '[ami-…]' does not exist"),
// AlreadyExists, InvalidNextToken. DescribeAutoScalingGroups pages
// (MaxRecords default 50, at most 100).
//
// EC2: Create/Describe/Modify/DeleteLaunchTemplate(s),
// CreateLaunchTemplateVersion (SourceVersion; at most 10,000 versions),
// DescribeLaunchTemplateVersions, DeleteLaunchTemplateVersions (never the
// default), DescribeInstances (one reservation per instance; filters
// instance-id, instance-state-name, tag:<k>, tag-key, ...; MaxResults
// paging), TerminateInstances (instances.go: an instance of a group shuts
// down and the group replaces it, its desired capacity unchanged),
// DescribeImages (AWSKubernetesVersions' CAPA AMIs
// capa-ami-ubuntu-24.04-<v>-<build> of AWSCAPAImageOwner and an Ubuntu
// image; AWSImageID), DescribeSubnets, DescribeVpcs, DescribeDhcpOptions
// and DescribeAvailabilityZones of each account's default VPC in each region
// (10.0.0.0/16, a /20 in each of <region>a, b, c; AWSDefaultVPCID,
// AWSDefaultSubnetIDs; us-east-1a's is AWSDefaultSubnetID). User data is
// at most 16 KB decoded (InvalidParameterValue). DescribeNetworkInterfaces
// (network.go) answers each instance's primary interface with its launch
// template version's security groups.
//
// Quota and throttling: AWSFace.VCPUQuota is the Running On-Demand
// Standard vCPU limit per account and region: launches beyond it fail as
// Failed scaling activities ("You have requested more vCPU capacity than
// your current vCPU limit of N allows ...") while the desired capacity
// stays, and the group launches the rest once the quota allows.
// AWSFace.Budgets (off by default) are token buckets per account, region
// and action: AWSEC2Budgets are EC2's documented figures, Auto Scaling's
// (AWSAutoScalingBudgets) are the simulation's choice; an exhausted one
// answers 503 RequestLimitExceeded (EC2) or 400 Throttling (Auto Scaling),
// as injected throttles do; injected server errors are InternalFailure /
// ServiceUnavailable (Auto Scaling), InternalError / Unavailable (EC2).
//
// Lifecycle hooks (hooks.go: launch and termination hooks holding
// instances in Pending:Wait and Terminating:Wait until
// CompleteLifecycleAction, RecordLifecycleActionHeartbeat or the heartbeat
// timeout, with the hook's default result), suspended processes and
// instance refreshes (above) and Spot interruptions (spot.go) are
// simulated.
//
// Not simulated: warm pools, launch configurations, RunInstances and other EC2 actions,
// security groups, VPCs besides the default, presigned requests' expiry,
// session tokens (accepted, not checked), terminated instances (they
// vanish once gone).
//
// # For faces built on it
//
// The EKS face (package eksface) runs its node groups in this face's Auto
// Scaling groups through an exported API and nothing else: the signature
// check with this face's keys and clock skew (VerifySigV4, AuthError), the
// vCPU quota (VCPUFit, VCPULaunchFailure), failed scaling activities
// (AWSRecordFailedActivity), groups another face writes (AWSManagedGroup,
// AWSGroupARN, AWSGroupDesired), launch templates (AWSLaunchTemplate), the
// default VPC's subnets (AWSSubnetZone) and the face's IDs and times
// (AWSHex, AWSTime, NewRequestID).
package awsface
