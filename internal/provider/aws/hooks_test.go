package aws_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/provider/aws"
	"github.com/mpool-dev/mpool/internal/provider/contract"
	"github.com/mpool-dev/mpool/internal/scalegroup"
	"github.com/mpool-dev/mpool/internal/testenv/cloudtest"
	"github.com/mpool-dev/mpool/sim/face/awsface"
)

// asgClient is an Auto Scaling client of the face's default key.
func (e *env) asgClient() *autoscaling.Client { return autoscaling.NewFromConfig(e.sdkConfig()) }

// hookSpec is spec with lifecycle hooks.
func hookSpec(capacity int32, hooks ...aws.LifecycleHook) scalegroup.GroupSpec {
	s := spec(capacity, "h1", token1)
	settings := s.Model.InPlace.(aws.GroupSettings)
	settings.LifecycleHooks = hooks
	s.Model.InPlace = settings
	return s
}

var (
	launchHook = aws.LifecycleHook{Name: "launch", Transition: "autoscaling:EC2_INSTANCE_LAUNCHING", HeartbeatTimeoutSeconds: 600, DefaultResult: "CONTINUE"}
	drainHook  = aws.LifecycleHook{Name: "drain", Transition: "autoscaling:EC2_INSTANCE_TERMINATING", HeartbeatTimeoutSeconds: 300, DefaultResult: "ABANDON",
		NotificationMetadata: "drain"}
)

// TestLifecycleHooks: the hooks are created with the ASG and hold its
// first instance (Pending:Wait, reported Booting; not booted); a spec whose hooks did not change
// costs no DescribeLifecycleHooks; changed hooks are put, extra ones
// deleted; AWS's refusal names the hook and what to fix.
func TestLifecycleHooks(t *testing.T) {
	e := startAWS(t)
	r := ref("hooks")
	ctx := context.Background()
	e.Apply(t, r, hookSpec(1, launchHook))
	e.Clk.Step(cloudtest.BootDelay + time.Second)
	g := e.Get(t, r)
	if len(g.Instances) != 1 || g.Instances[0].State != scalegroup.StateBooting || !g.Pending() {
		t.Fatalf("with a launch hook: %+v, want one instance Booting (Pending:Wait)", g)
	}
	if cg := e.CloudGroup(t, groupKey(r.Name)); len(cg.Instances) != 1 || !cg.Instances[0].Held {
		t.Fatalf("the cloud's group %+v: want its instance held, not booted", cg)
	}
	asg := e.asgClient()
	hooks := func() map[string]string {
		t.Helper()
		out, err := asg.DescribeLifecycleHooks(ctx, &autoscaling.DescribeLifecycleHooksInput{AutoScalingGroupName: awssdk.String(r.Name)})
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]string{}
		for _, h := range out.LifecycleHooks {
			m[awssdk.ToString(h.LifecycleHookName)] = awssdk.ToString(h.LifecycleTransition) + "/" + awssdk.ToString(h.DefaultResult) + "/" +
				strconv.Itoa(int(awssdk.ToInt32(h.HeartbeatTimeout))) + "/" + awssdk.ToString(h.NotificationMetadata)
		}
		return m
	}
	if h := hooks(); len(h) != 1 || h["launch"] != "autoscaling:EC2_INSTANCE_LAUNCHING/CONTINUE/600/" {
		t.Fatalf("hooks %v", h)
	}

	if _, got := e.ApplyCounted(t, r, hookSpec(2, launchHook)); got[awsface.OpAWSDescribeLifecycleHooks] != 0 || writes(got) != 1 {
		t.Fatalf("the same hooks, more capacity: %v, want no hook call and one update", got)
	}

	changed := launchHook
	changed.HeartbeatTimeoutSeconds = 120
	if _, got := e.ApplyCounted(t, r, hookSpec(2, changed, drainHook)); got[awsface.OpAWSDescribeLifecycleHooks] != 1 || got[awsface.OpAWSPutLifecycleHook] != 2 || writes(got) != 3 {
		t.Fatalf("a changed and a new hook: %v, want one describe, two puts and the tag", got)
	}
	if h := hooks(); len(h) != 2 || h["launch"] != "autoscaling:EC2_INSTANCE_LAUNCHING/CONTINUE/120/" || h["drain"] != "autoscaling:EC2_INSTANCE_TERMINATING/ABANDON/300/drain" {
		t.Fatalf("hooks %v", h)
	}

	if _, got := e.ApplyCounted(t, r, hookSpec(2)); got[awsface.OpAWSDeleteLifecycleHook] != 2 || got[awsface.OpAWSPutLifecycleHook] != 0 {
		t.Fatalf("no hooks: %v, want two deletes", got)
	}
	if h := hooks(); len(h) != 0 {
		t.Fatalf("hooks %v, want none", h)
	}

	bad := launchHook
	bad.HeartbeatTimeoutSeconds = 10
	_, err := e.sg.Apply(ctx, r, hookSpec(2, bad))
	if err == nil || scalegroup.ReasonOf(err) != scalegroup.ReasonInvalid || !strings.Contains(err.Error(), `lifecycle hook "launch": Invalid: ValidationError`) {
		t.Fatalf("a heartbeat AWS refuses: %v (%s), want Invalid naming the hook", err, scalegroup.ReasonOf(err))
	}
}

// TestLifecycleHookCondition: LifecycleHookReady follows the engine's
// ScaleGroupReady, False with AWS's answer when it refused a hook.
func TestLifecycleHookCondition(t *testing.T) {
	pool := &infrav1.AWSMachinePool{Spec: infrav1.AWSMachinePoolSpec{LifecycleHooks: []infrav1.AWSLifecycleHook{
		{Name: "launch", LifecycleTransition: infrav1.LifecycleTransitionInstanceLaunch},
	}}}
	write := func(status metav1.ConditionStatus, reason, msg string) *metav1.Condition {
		meta.SetStatusCondition(&pool.Status.Conditions, metav1.Condition{Type: infrav1.ScaleGroupReadyCondition, Status: status, Reason: reason, Message: msg})
		aws.Adapter{}.WritePool(pool, contract.PoolReport{})
		return meta.FindStatusCondition(pool.Status.Conditions, infrav1.LifecycleHookReadyCondition)
	}
	if c := write(metav1.ConditionFalse, infrav1.ScaleGroupNotFoundReason, "not yet"); c == nil || c.Status != metav1.ConditionFalse || c.Reason != infrav1.LifecycleHookNotFoundReason {
		t.Fatalf("no ASG: %+v", c)
	}
	if c := write(metav1.ConditionTrue, "Ready", "capacity 1"); c == nil || c.Status != metav1.ConditionTrue || c.Reason != infrav1.LifecycleHooksInSyncReason {
		t.Fatalf("applied: %+v", c)
	}
	refused := `applying scale group x: updating auto scaling group x: lifecycle hook "launch": ValidationError: Heartbeat timeout value 10 is invalid (fix spec.lifecycleHooks)`
	if c := write(metav1.ConditionFalse, infrav1.ScaleGroupProvisionFailedReason, refused); c == nil || c.Status != metav1.ConditionFalse ||
		c.Reason != infrav1.LifecycleHookCreationFailedReason || c.Message != refused {
		t.Fatalf("refused: %+v", c)
	}
	if c := write(metav1.ConditionFalse, "Throttled", "rate exceeded"); c == nil || c.Reason != infrav1.LifecycleHookCreationFailedReason {
		t.Fatalf("an unrelated problem changed the condition: %+v", c)
	}

	none := &infrav1.AWSMachinePool{}
	meta.SetStatusCondition(&none.Status.Conditions, metav1.Condition{Type: infrav1.ScaleGroupReadyCondition, Status: metav1.ConditionTrue, Reason: "Ready"})
	aws.Adapter{}.WritePool(none, contract.PoolReport{})
	if c := meta.FindStatusCondition(none.Status.Conditions, infrav1.LifecycleHookReadyCondition); c != nil {
		t.Fatalf("a pool without hooks: %+v", c)
	}
}
