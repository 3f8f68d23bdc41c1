package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// LifecycleHookReadyCondition reports whether the Auto Scaling Group's
// lifecycle hooks match spec.lifecycleHooks (CAPA's name).
const LifecycleHookReadyCondition = "LifecycleHookReady"

// Reasons of LifecycleHookReadyCondition, as CAPA names them.
const (
	// LifecycleHooksInSyncReason: the ASG's hooks are the spec's.
	LifecycleHooksInSyncReason = "LifecycleHooksInSync"
	// LifecycleHookNotFoundReason: the ASG does not exist (yet).
	LifecycleHookNotFoundReason = "LifecycleHookNotFound"
	// LifecycleHookCreationFailedReason: AWS refused to create, update or
	// delete a hook; the message says which and why.
	LifecycleHookCreationFailedReason = "LifecycleHookCreationFailed"
)

// LifecycleTransition is the instance transition a lifecycle hook holds.
// +kubebuilder:validation:Enum="autoscaling:EC2_INSTANCE_LAUNCHING";"autoscaling:EC2_INSTANCE_TERMINATING"
type LifecycleTransition string

// Lifecycle transitions.
const (
	// LifecycleTransitionInstanceLaunch holds new instances in Pending:Wait.
	LifecycleTransitionInstanceLaunch LifecycleTransition = "autoscaling:EC2_INSTANCE_LAUNCHING"
	// LifecycleTransitionInstanceTerminate holds leaving instances in
	// Terminating:Wait.
	LifecycleTransitionInstanceTerminate LifecycleTransition = "autoscaling:EC2_INSTANCE_TERMINATING"
)

// LifecycleHookDefaultResult is what the ASG does when a hook's heartbeat
// times out.
// +kubebuilder:validation:Enum=CONTINUE;ABANDON
type LifecycleHookDefaultResult string

// Default results.
const (
	// LifecycleHookDefaultResultContinue lets the instance proceed.
	LifecycleHookDefaultResultContinue LifecycleHookDefaultResult = "CONTINUE"
	// LifecycleHookDefaultResultAbandon terminates a launching instance
	// (a terminating one terminates either way).
	LifecycleHookDefaultResultAbandon LifecycleHookDefaultResult = "ABANDON"
)

// AWSLifecycleHook is a lifecycle hook of the Auto Scaling Group: instances
// wait in Pending:Wait (launch) or Terminating:Wait (terminate) until the
// action is completed (CompleteLifecycleAction) or the heartbeat times out.
// +kubebuilder:validation:XValidation:rule="!has(self.heartbeatTimeout) || (duration(self.heartbeatTimeout) >= duration('30s') && duration(self.heartbeatTimeout) <= duration('7200s'))",message="heartbeatTimeout must be between 30s and 7200s (2h), AWS's limits: set it within them or leave it out for AWS's default 3600s",fieldPath=".heartbeatTimeout"
// +kubebuilder:validation:XValidation:rule="has(self.notificationTargetARN) == has(self.roleARN)",message="notificationTargetARN and roleARN go together: set both (a notification target and the role Auto Scaling assumes to publish to it) or neither"
type AWSLifecycleHook struct {
	// Name is the hook's name, unique within the pool.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9\-_\/]+$`
	Name string `json:"name"`

	// NotificationTargetARN is the SNS topic or SQS queue notified when an
	// instance enters the hook's wait state.
	// +optional
	// +kubebuilder:validation:MaxLength=255
	NotificationTargetARN *string `json:"notificationTargetARN,omitempty"`

	// RoleARN is the IAM role Auto Scaling assumes to publish to the
	// notification target.
	// +optional
	// +kubebuilder:validation:MaxLength=255
	RoleARN *string `json:"roleARN,omitempty"`

	// LifecycleTransition is the transition the hook holds:
	// autoscaling:EC2_INSTANCE_LAUNCHING or autoscaling:EC2_INSTANCE_TERMINATING.
	// +required
	LifecycleTransition LifecycleTransition `json:"lifecycleTransition"`

	// HeartbeatTimeout is how long an instance waits before DefaultResult
	// applies, between 30s and 7200s; AWS's default is 3600s.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Format=duration
	HeartbeatTimeout *metav1.Duration `json:"heartbeatTimeout,omitempty"`

	// DefaultResult is what happens when the heartbeat times out: CONTINUE
	// or ABANDON (AWS's default).
	// +optional
	DefaultResult *LifecycleHookDefaultResult `json:"defaultResult,omitempty"`

	// NotificationMetadata is sent with every notification of the hook.
	// +optional
	// +kubebuilder:validation:MaxLength=1023
	NotificationMetadata *string `json:"notificationMetadata,omitempty"`
}
