package aws

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	asgtypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/log"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// TagLifecycleHooks is the ASG tag holding the hash of the lifecycle hooks
// mpool last put on it (LifecycleHooksHash): Apply reads the ASG's hooks
// only when the spec's hash differs, so a pool at rest costs no
// DescribeLifecycleHooks.
const TagLifecycleHooks = "mpool.dev/lifecycle-hooks"

// AWS's lifecycle hook defaults.
const (
	defaultHeartbeatTimeoutSeconds = 3600
	defaultHookResult              = "ABANDON"
)

// hookErrorPrefix starts the message of every error AWS answers a
// lifecycle hook write with; the LifecycleHookReady condition finds it in
// the engine's ScaleGroupReady message.
const hookErrorPrefix = "lifecycle hook "

// LifecycleHook is a lifecycle hook of the ASG, GroupSettings'
// LifecycleHooks: applied in place, instances keep running. Defaults are
// filled in (a heartbeat of 3600s, ABANDON), as AWS reports them.
type LifecycleHook struct {
	// Name is the hook's name.
	Name string `json:"name"`
	// Transition is autoscaling:EC2_INSTANCE_LAUNCHING or
	// autoscaling:EC2_INSTANCE_TERMINATING.
	Transition string `json:"transition"`
	// NotificationTargetARN and RoleARN are the notification target and
	// the role publishing to it, "" for none.
	NotificationTargetARN string `json:"notificationTargetARN,omitempty"`
	RoleARN               string `json:"roleARN,omitempty"`
	// HeartbeatTimeoutSeconds is how long an instance waits.
	HeartbeatTimeoutSeconds int32 `json:"heartbeatTimeoutSeconds"`
	// DefaultResult is CONTINUE or ABANDON.
	DefaultResult string `json:"defaultResult"`
	// NotificationMetadata is sent with the hook's notifications.
	NotificationMetadata string `json:"notificationMetadata,omitempty"`
}

// LifecycleHooksOf maps an AWSMachinePool's spec.lifecycleHooks, with AWS's
// defaults filled in.
func LifecycleHooksOf(hooks []infrav1.AWSLifecycleHook) []LifecycleHook {
	var out []LifecycleHook
	for _, h := range hooks {
		lh := LifecycleHook{
			Name: h.Name, Transition: string(h.LifecycleTransition),
			NotificationTargetARN: ptr.Deref(h.NotificationTargetARN, ""), RoleARN: ptr.Deref(h.RoleARN, ""),
			HeartbeatTimeoutSeconds: defaultHeartbeatTimeoutSeconds, DefaultResult: defaultHookResult,
			NotificationMetadata: ptr.Deref(h.NotificationMetadata, ""),
		}
		if h.HeartbeatTimeout != nil {
			lh.HeartbeatTimeoutSeconds = int32(h.HeartbeatTimeout.Seconds())
		}
		if h.DefaultResult != nil {
			lh.DefaultResult = string(*h.DefaultResult)
		}
		out = append(out, lh)
	}
	return out
}

// LifecycleHooksHash identifies a set of hooks (TagLifecycleHooks); "" for
// none, the value of an ASG that lacks the tag.
func LifecycleHooksHash(hooks []LifecycleHook) string {
	if len(hooks) == 0 {
		return ""
	}
	b, _ := json.Marshal(hooks) // plain strings and numbers always encode
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:10])
}

// hookSpecs are the hooks of a new ASG, in CreateAutoScalingGroup: they
// hold its very first instances.
func hookSpecs(hooks []LifecycleHook) []asgtypes.LifecycleHookSpecification {
	var out []asgtypes.LifecycleHookSpecification
	for _, h := range hooks {
		out = append(out, asgtypes.LifecycleHookSpecification{
			LifecycleHookName: aws.String(h.Name), LifecycleTransition: aws.String(h.Transition),
			NotificationTargetARN: optional(h.NotificationTargetARN), RoleARN: optional(h.RoleARN),
			HeartbeatTimeout: aws.Int32(h.HeartbeatTimeoutSeconds), DefaultResult: aws.String(h.DefaultResult),
			NotificationMetadata: optional(h.NotificationMetadata),
		})
	}
	return out
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return aws.String(s)
}

// withHooks adds the hooks and their hash tag to a new ASG.
func withHooks(in *autoscaling.CreateAutoScalingGroupInput, hooks []LifecycleHook) {
	if len(hooks) == 0 {
		return
	}
	in.LifecycleHookSpecificationList = hookSpecs(hooks)
	in.Tags = append(in.Tags, asgtypes.Tag{Key: aws.String(TagLifecycleHooks), Value: aws.String(LifecycleHooksHash(hooks)), PropagateAtLaunch: aws.Bool(false)})
}

// applyHooks brings the ASG's lifecycle hooks to want when its
// TagLifecycleHooks says they differ: one DescribeLifecycleHooks, a
// PutLifecycleHook per missing or changed hook, a DeleteLifecycleHook per
// extra one, then the tag. Nothing when the tag matches.
func (s *ASGs) applyHooks(ctx context.Context, c *sdkClients, ref scalegroup.Ref, asg *asgtypes.AutoScalingGroup, want []LifecycleHook) error {
	hash := LifecycleHooksHash(want)
	if tagValue(asg, TagLifecycleHooks) == hash {
		return nil
	}
	logger := log.FromContext(ctx).WithValues("group", ref.String())
	res, err := c.asg.DescribeLifecycleHooks(ctx, &autoscaling.DescribeLifecycleHooksInput{AutoScalingGroupName: aws.String(ref.Name)})
	if err != nil {
		return fmt.Errorf("%sdescription: %w", hookErrorPrefix, cloudError(err, ref))
	}
	have := map[string]LifecycleHook{}
	for _, h := range res.LifecycleHooks {
		have[aws.ToString(h.LifecycleHookName)] = LifecycleHook{
			Name: aws.ToString(h.LifecycleHookName), Transition: aws.ToString(h.LifecycleTransition),
			NotificationTargetARN: aws.ToString(h.NotificationTargetARN), RoleARN: aws.ToString(h.RoleARN),
			HeartbeatTimeoutSeconds: aws.ToInt32(h.HeartbeatTimeout), DefaultResult: aws.ToString(h.DefaultResult),
			NotificationMetadata: aws.ToString(h.NotificationMetadata),
		}
	}
	for _, h := range want {
		if cur, ok := have[h.Name]; ok && cur == h {
			continue
		}
		logger.V(1).Info("Putting lifecycle hook", "hook", h.Name, "transition", h.Transition)
		if _, err := c.asg.PutLifecycleHook(ctx, &autoscaling.PutLifecycleHookInput{
			AutoScalingGroupName: aws.String(ref.Name), LifecycleHookName: aws.String(h.Name), LifecycleTransition: aws.String(h.Transition),
			NotificationTargetARN: optional(h.NotificationTargetARN), RoleARN: optional(h.RoleARN),
			HeartbeatTimeout: aws.Int32(h.HeartbeatTimeoutSeconds), DefaultResult: aws.String(h.DefaultResult),
			NotificationMetadata: optional(h.NotificationMetadata),
		}); err != nil {
			return fmt.Errorf("%s%q: %w (fix spec.lifecycleHooks)", hookErrorPrefix, h.Name, cloudError(err, ref))
		}
	}
	for name := range have {
		if hookNamed(want, name) {
			continue
		}
		logger.V(1).Info("Deleting lifecycle hook", "hook", name)
		if _, err := c.asg.DeleteLifecycleHook(ctx, &autoscaling.DeleteLifecycleHookInput{
			AutoScalingGroupName: aws.String(ref.Name), LifecycleHookName: aws.String(name),
		}); err != nil {
			return fmt.Errorf("%s%q: deleting: %w", hookErrorPrefix, name, cloudError(err, ref))
		}
	}
	if _, err := c.asg.CreateOrUpdateTags(ctx, &autoscaling.CreateOrUpdateTagsInput{Tags: []asgtypes.Tag{{
		ResourceId: aws.String(ref.Name), ResourceType: aws.String("auto-scaling-group"),
		Key: aws.String(TagLifecycleHooks), Value: aws.String(hash), PropagateAtLaunch: aws.Bool(false),
	}}}); err != nil {
		return cloudError(err, ref)
	}
	return nil
}

func hookNamed(hooks []LifecycleHook, name string) bool {
	for _, h := range hooks {
		if h.Name == name {
			return true
		}
	}
	return false
}

// setLifecycleHookCondition sets CAPA's LifecycleHookReady from the
// engine's ScaleGroupReady: False with AWS's answer when it refused a
// hook, False while the ASG does not exist, True once the engine applied
// the spec (the hooks are part of what it applies); unchanged when a
// problem unrelated to the hooks left them unknown. Pools without hooks
// get the condition only once they had some.
func setLifecycleHookCondition(pool *infrav1.AWSMachinePool) {
	conds := pool.GetConditions()
	prev := meta.FindStatusCondition(conds, infrav1.LifecycleHookReadyCondition)
	sg := meta.FindStatusCondition(conds, infrav1.ScaleGroupReadyCondition)
	if sg == nil || len(pool.Spec.LifecycleHooks) == 0 && prev == nil {
		return
	}
	c := metav1.Condition{Type: infrav1.LifecycleHookReadyCondition, ObservedGeneration: sg.ObservedGeneration}
	switch {
	case sg.Status != metav1.ConditionTrue && strings.Contains(sg.Message, ": "+hookErrorPrefix):
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, infrav1.LifecycleHookCreationFailedReason, sg.Message
	case sg.Reason == infrav1.ScaleGroupNotFoundReason:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, infrav1.LifecycleHookNotFoundReason, "The auto scaling group does not exist yet"
	case sg.Status == metav1.ConditionTrue || sg.Reason == infrav1.ScaleGroupProblemReason:
		c.Status, c.Reason = metav1.ConditionTrue, infrav1.LifecycleHooksInSyncReason
		c.Message = fmt.Sprintf("The auto scaling group has the %d lifecycle hooks of spec.lifecycleHooks", len(pool.Spec.LifecycleHooks))
	case prev != nil:
		return
	default:
		c.Status, c.Reason, c.Message = metav1.ConditionUnknown, sg.Reason, "The lifecycle hooks are not known yet: "+sg.Message
	}
	meta.SetStatusCondition(&conds, c)
	pool.SetConditions(conds)
}
