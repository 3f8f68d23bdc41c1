package awsapi

// Lifecycle hook transitions, default results and the instance lifecycle
// states the hooks hold instances in, as Auto Scaling names them.
const (
	TransitionLaunching   = "autoscaling:EC2_INSTANCE_LAUNCHING"
	TransitionTerminating = "autoscaling:EC2_INSTANCE_TERMINATING"
	ResultContinue        = "CONTINUE"
	ResultAbandon         = "ABANDON"
	StatePendingWait      = "Pending:Wait"
	StatePendingProceed   = "Pending:Proceed"
	StateTerminatingWait  = "Terminating:Wait"
)

// LifecycleHook is a lifecycle hook of an Auto Scaling group
// (DescribeLifecycleHooks).
type LifecycleHook struct {
	LifecycleHookName     string `xml:"LifecycleHookName"`
	AutoScalingGroupName  string `xml:"AutoScalingGroupName"`
	LifecycleTransition   string `xml:"LifecycleTransition"`
	NotificationTargetARN string `xml:"NotificationTargetARN,omitempty"`
	RoleARN               string `xml:"RoleARN,omitempty"`
	NotificationMetadata  string `xml:"NotificationMetadata,omitempty"`
	HeartbeatTimeout      int32  `xml:"HeartbeatTimeout"`
	GlobalTimeout         int32  `xml:"GlobalTimeout"`
	DefaultResult         string `xml:"DefaultResult"`
}

// DescribeLifecycleHooksResult is DescribeLifecycleHooks' result.
type DescribeLifecycleHooksResult struct {
	LifecycleHooks []LifecycleHook `xml:"LifecycleHooks>member"`
}
