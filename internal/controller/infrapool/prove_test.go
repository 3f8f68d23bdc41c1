package infrapool

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/preview"
	"github.com/mpool-dev/mpool/internal/provider/contract"
	"github.com/mpool-dev/mpool/internal/rollout"
	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// refusingGroup is an engine-driven ScaleGroup that answers Apply with
// applyErr (nil: accepts), recording what the engine asks of it.
type refusingGroup struct {
	group    *scalegroup.Group
	applyErr error
	applied  []scalegroup.GroupSpec
	deleted  [][]string
}

func (c *refusingGroup) Get(context.Context, scalegroup.Ref) (*scalegroup.Group, error) {
	return c.group, nil
}
func (c *refusingGroup) Apply(_ context.Context, _ scalegroup.Ref, spec scalegroup.GroupSpec) (*scalegroup.Group, error) {
	c.applied = append(c.applied, spec)
	if c.applyErr != nil {
		return nil, c.applyErr
	}
	g := *c.group
	g.Capacity, g.ModelHash = spec.Capacity, spec.ModelHash
	return &g, nil
}
func (c *refusingGroup) DeleteInstances(_ context.Context, _ scalegroup.Ref, ids []string) error {
	c.deleted = append(c.deleted, ids)
	return nil
}
func (c *refusingGroup) Capabilities() scalegroup.Capabilities        { return scalegroup.Capabilities{} }
func (c *refusingGroup) Delete(context.Context, scalegroup.Ref) error { return nil }

// TestNothingDeletedForAModelTheCloudCannotCreate: seed 004's AWS pool
// scaled to 4 and its version bumped to one without an AMI (issue 25). AWS's
// defaults are maxSurge 0 and maxUnavailable 1, so the plan deletes an old
// instance first; the engine must let the cloud accept the model before.
func TestNothingDeletedForAModelTheCloudCannotCreate(t *testing.T) {
	noAMI := scalegroup.NewInvalid("no AMI capa-ami-ubuntu-18.04-v1.16.9-* in us-east-1")
	awsDefaults := rollout.Strategy{MaxSurge: ptr.To(intstr.FromInt32(0)), MaxUnavailable: ptr.To(intstr.FromInt32(1))}
	oneSurge := rollout.Strategy{MaxSurge: ptr.To(intstr.FromInt32(1))}
	old := func(id string) fixture {
		return fixture{id: id, age: time.Hour, state: scalegroup.StateRunning, model: "old"}
	}
	for _, tc := range []struct {
		name     string
		reason   string
		fx       []fixture
		strategy rollout.Strategy
		groupHas string // the model the group has
		applyErr error
		// want
		blocked     bool
		deleted     []string
		applies     []int32 // capacities applied, in order
		errReturned bool
	}{
		{
			name:   "a refused model deletes nothing and blocks the rollout",
			reason: "the reported bug: one of four old instances was deleted, then the launch template was refused",
			fx:     []fixture{old("a"), old("b"), old("c"), old("d")}, strategy: awsDefaults, groupHas: "old", applyErr: noAMI,
			blocked: true, applies: []int32{4},
		},
		{
			name:   "a refused model with surge blocks without failing the pool",
			reason: "Ready old instances and maxUnavailable 0: the surge is refused, nothing goes, the four keep serving",
			fx:     []fixture{running("a", time.Hour, "old"), running("b", time.Hour, "old"), running("c", time.Hour, "old"), running("d", time.Hour, "old")}, strategy: oneSurge, groupHas: "old", applyErr: noAMI,
			blocked: true, applies: []int32{5},
		},
		{
			name:   "an accepted model is applied before the first deletion",
			reason: "with maxSurge 0 no new instance can exist first: the cloud's own validation is the proof",
			fx:     []fixture{old("a"), old("b"), old("c"), old("d")}, strategy: awsDefaults, groupHas: "old",
			deleted: []string{"a", "b", "c", "d"}, applies: []int32{4, 4},
		},
		{
			name:   "a model the group has needs no proof",
			reason: "the cloud accepted it when it was applied: one Apply, for the capacity",
			fx:     []fixture{old("a"), old("b")}, strategy: awsDefaults, groupHas: "new",
			deleted: []string{"a", "b"}, applies: []int32{2},
		},
		{
			name:   "a transient failure deletes nothing",
			reason: "not proven is not deleted; the error is retried with backoff",
			fx:     []fixture{old("a"), old("b")}, strategy: awsDefaults, groupHas: "old", applyErr: scalegroup.NewTransient("503", errors.New("unavailable")),
			applies: []int32{2}, errReturned: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, s := glueScope(tc.fx, int32(len(tc.fx)), tc.strategy)
			// No Nodes and no per-instance objects: the instances are not
			// available (the planner deletes stale ones freely, the worst
			// case) and their removal needs no API server.
			s.objects = map[string]contract.InstanceObject{}
			s.owner = &clusterv1.MachinePool{}
			s.cloud.ModelHash = tc.groupHas
			rg := &refusingGroup{group: s.cloud, applyErr: tc.applyErr}
			e.setScaleGroup(rg)
			e.rec, e.applied, e.workers = nopRecorder{}, newPoolMemo[string](), 4
			e.timing.defaults()
			s.skipRemoval, s.drains = map[string]bool{}, map[string]drainOutcome{}
			if err := e.planRollout(context.Background(), s); err != nil {
				t.Fatal(err)
			}
			err := e.act(context.Background(), s)
			if (err != nil) != tc.errReturned {
				t.Fatalf("act: %v, want an error: %v", err, tc.errReturned)
			}
			var deleted []string
			for _, ids := range rg.deleted {
				deleted = append(deleted, ids...)
			}
			if !slices.Equal(deleted, tc.deleted) {
				t.Errorf("deleted %v, want %v", deleted, tc.deleted)
			}
			var applies []int32
			for _, a := range rg.applied {
				applies = append(applies, a.Capacity)
			}
			if !slices.Equal(applies, tc.applies) {
				t.Errorf("applied capacities %v, want %v", applies, tc.applies)
			}
			if (s.blocked != nil) != tc.blocked {
				t.Fatalf("blocked %v, want %v", s.blocked, tc.blocked)
			}
			if !tc.blocked {
				return
			}
			if s.invalid != nil {
				// status.failureReason would follow, and the MachinePool's phase Failed.
				t.Errorf("a blocked rollout whose instances serve is not an invalid spec: %v", s.invalid)
			}
			c := rolloutProgressingCondition(s)
			if c.Status != metav1.ConditionFalse || c.Reason != infrav1.RolloutBlockedReason || !strings.Contains(c.Message, "no AMI") || !strings.Contains(c.Message, "4 instances on the previous model keep serving") {
				t.Errorf("RolloutProgressing %+v, want False/%s naming the cause", c, infrav1.RolloutBlockedReason)
			}
			if g := scaleGroupReadyCondition(s); g.Status != metav1.ConditionFalse || g.Reason != infrav1.InvalidSpecReason || !strings.Contains(g.Message, "rollout blocked") {
				t.Errorf("ScaleGroupReady %+v: want False/%s with the cloud's refusal (EKSNodegroupReady and ASGReady mirror it)", g, infrav1.InvalidSpecReason)
			}
		})
	}
}

// TestRefusedSpecOfANewGroupIsInvalid: with nothing serving, a refused
// model is what it always was, an invalid spec (no rollout to block).
func TestRefusedSpecOfANewGroupIsInvalid(t *testing.T) {
	e, s := glueScope(nil, 2, rollout.Strategy{})
	s.cloud = nil
	s.owner = &clusterv1.MachinePool{}
	rg := &refusingGroup{group: &scalegroup.Group{}, applyErr: scalegroup.NewInvalid("no AMI")}
	e.rec, e.applied = nopRecorder{}, newPoolMemo[string]()
	e.setScaleGroup(rg)
	s.plan = rollout.Result{TargetCapacity: 2}
	if err := e.applyGroup(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	if s.blocked != nil || s.invalid == nil {
		t.Fatalf("blocked %v, invalid %v: want an invalid spec", s.blocked, s.invalid)
	}
}

// TestBlockedRolloutIsNotPausedByTheDeadline: a rollout the cloud blocks
// (no AMI yet) asks again every QuotaRetry, and goes on by itself once the
// image is published (docs/rollout.md). The progress deadline must not
// turn it into an engine pause, which stops asking the cloud and needs a
// manual resume; once the cloud accepts, the deadline starts again.
func TestBlockedRolloutIsNotPausedByTheDeadline(t *testing.T) {
	noAMI := scalegroup.NewInvalid("no AMI capa-ami-ubuntu-24.04-v1.16.9-* in us-east-1")
	awsDefaults := rollout.Strategy{MaxSurge: ptr.To(intstr.FromInt32(0)), MaxUnavailable: ptr.To(intstr.FromInt32(1))}
	old := func(id string) fixture {
		return fixture{id: id, age: time.Hour, state: scalegroup.StateRunning, model: "old"}
	}
	var annotations map[string]string
	reconcile := func(at time.Duration, applyErr error) (*pass, *refusingGroup) {
		t.Helper()
		e, s := glueScope([]fixture{old("a"), old("b"), old("c"), old("d")}, 4, awsDefaults)
		s.now = t0.Add(at)
		s.objects = map[string]contract.InstanceObject{}
		s.owner = &clusterv1.MachinePool{ObjectMeta: metav1.ObjectMeta{Name: "mp"}}
		s.cloud.ModelHash = "old"
		s.pool.SetAnnotations(annotations)
		rg := &refusingGroup{group: s.cloud, applyErr: applyErr}
		e.setScaleGroup(rg)
		e.rec, e.applied, e.workers = nopRecorder{}, newPoolMemo[string](), 4
		e.timing.defaults()
		s.skipRemoval, s.drains = map[string]bool{}, map[string]drainOutcome{}
		if err := e.planRollout(context.Background(), s); err != nil {
			t.Fatal(err)
		}
		if err := e.act(context.Background(), s); err != nil {
			t.Fatal(err)
		}
		annotations = s.pool.GetAnnotations()
		return s, rg
	}
	if s, _ := reconcile(0, noAMI); s.blocked == nil {
		t.Fatal("not blocked")
	}
	s, rg := reconcile(11*time.Minute, noAMI)
	if s.selfPaused != nil {
		t.Fatalf("a blocked rollout was paused by the progress deadline (%s): the cloud is no longer asked", s.selfPaused.Message)
	}
	if len(rg.applied) == 0 || s.blocked == nil {
		t.Fatalf("the refused model was not asked again (%d applies, blocked %v)", len(rg.applied), s.blocked)
	}
	if c := rolloutProgressingCondition(s); c.Reason != infrav1.RolloutBlockedReason {
		t.Errorf("RolloutProgressing reason %s, want %s", c.Reason, infrav1.RolloutBlockedReason)
	}
	// The image is published: the rollout goes on, and the deadline counts
	// from now.
	s, rg = reconcile(30*time.Minute, nil)
	if s.selfPaused != nil || s.blocked != nil || len(rg.deleted) == 0 {
		t.Fatalf("paused %v, blocked %v, deleted %v: want the rollout going on", s.selfPaused, s.blocked, rg.deleted)
	}
	r, ok := preview.ParseRolloutProgress(annotations[preview.RolloutProgressAnnotation])
	if !ok || !r.ProgressAt.Equal(t0.Add(30*time.Minute)) {
		t.Fatalf("record %+v: want the deadline to start again when the cloud accepted the model", r)
	}
}
