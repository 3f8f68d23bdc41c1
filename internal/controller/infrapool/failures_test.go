package infrapool

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/events"
	"github.com/mpool-dev/mpool/internal/rollout"
	"github.com/mpool-dev/mpool/internal/scalegroup"
)

func TestJoinTimeoutReplacesInstancesWithoutANode(t *testing.T) {
	notJoined := func(id string, age time.Duration, state scalegroup.InstanceState) fixture {
		return fixture{id: id, age: age, state: state, model: "new"}
	}
	oneSurge := rollout.Strategy{MaxSurge: ptr.To(intstr.FromInt32(1))}
	for _, tc := range []struct {
		name       string
		reason     string
		fx         []fixture
		timeout    time.Duration
		nodesKnown bool
		victims    []string
	}{
		{
			name:    "a running instance without a Node past the timeout goes",
			reason:  "its token was wrong or expired: it never joins; replaced although maxUnavailable is 0",
			fx:      []fixture{running("a", time.Hour, "new"), notJoined("b", 11*time.Minute, scalegroup.StateRunning)},
			timeout: 10 * time.Minute, nodesKnown: true, victims: []string{"b"},
		},
		{
			name:    "a booting instance past the timeout goes too",
			reason:  "as a MachineHealthCheck's nodeStartupTimeout, whatever keeps it from joining",
			fx:      []fixture{running("a", time.Hour, "new"), notJoined("b", 11*time.Minute, scalegroup.StateBooting)},
			timeout: 10 * time.Minute, nodesKnown: true, victims: []string{"b"},
		},
		{
			name:    "within the timeout it is waited for",
			fx:      []fixture{running("a", time.Hour, "new"), notJoined("b", 9*time.Minute, scalegroup.StateRunning)},
			timeout: 10 * time.Minute, nodesKnown: true,
		},
		{
			name:    "a held instance is waited for, however long",
			reason:  "an AWS launch lifecycle hook holds it in Pending:Wait for up to two hours: nothing is wrong with it",
			fx:      []fixture{running("a", time.Hour, "new"), {id: "b", age: time.Hour, state: scalegroup.StateBooting, model: "new", held: true}},
			timeout: 10 * time.Minute, nodesKnown: true,
		},
		{
			name:    "disabled",
			fx:      []fixture{running("a", time.Hour, "new"), notJoined("b", time.Hour, scalegroup.StateRunning)},
			timeout: 0, nodesKnown: true,
		},
		{
			name:    "unknown Nodes time nothing out",
			reason:  "without the workload cluster's Nodes every instance would look unjoined",
			fx:      []fixture{running("a", time.Hour, "new"), notJoined("b", time.Hour, scalegroup.StateRunning)},
			timeout: 10 * time.Minute, nodesKnown: false,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, s := glueScope(tc.fx, 2, oneSurge)
			s.joinTimeout, s.nodesKnown = tc.timeout, tc.nodesKnown
			res, err := rollout.Plan(e.rolloutInput(s))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, v := range res.Delete {
				got = append(got, v.ID)
				if v.Reason != rollout.ReasonFailed {
					t.Errorf("victim %s for %s, want Failed", v.ID, v.Reason)
				}
			}
			if strings.Join(got, ",") != strings.Join(tc.victims, ",") {
				t.Fatalf("victims %v, want %v (%s)", got, tc.victims, tc.reason)
			}
			if len(tc.victims) > 0 && res.TargetCapacity != 2 {
				t.Errorf("capacity %d, want 2: the group refills", res.TargetCapacity)
			}
			for _, id := range tc.victims {
				rep := e.instanceReport(s, s.cloud.Instances[1])
				if !s.joinTimedOut[id] || !rep.JoinTimedOut {
					t.Errorf("instance %s is not reported as timed out", id)
				}
				var conds []metav1.Condition
				setInstanceConditions(&conds, s, rep, 1)
				if c := conds[0]; c.Reason != infrav1.NodeStartupTimeoutReason || !strings.Contains(c.Message, id) {
					t.Errorf("InstanceReady %+v, want reason %s naming %s", c, infrav1.NodeStartupTimeoutReason, id)
				}
			}
		})
	}
}

// TestJoinTimeoutCountsFromTheHoldsEnd: an instance the cloud held for an
// hour gets the whole join timeout after its release.
func TestJoinTimeoutCountsFromTheHoldsEnd(t *testing.T) {
	oneSurge := rollout.Strategy{MaxSurge: ptr.To(intstr.FromInt32(1))}
	fx := []fixture{running("a", time.Hour, "new"), {id: "b", age: time.Hour, state: scalegroup.StateBooting, model: "new", held: true}}
	e, s := glueScope(fx, 2, oneSurge)
	s.joinTimeout, s.nodesKnown = 10*time.Minute, true
	plan := func() []string {
		t.Helper()
		res, err := rollout.Plan(e.rolloutInput(s))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, v := range res.Delete {
			got = append(got, v.ID)
		}
		return got
	}
	if got := plan(); len(got) != 0 {
		t.Fatalf("victims %v while b is held, want none", got)
	}
	// Released: it boots; 9 minutes later it is still waited for, 11
	// minutes later it is replaced.
	s.cloud.Instances[1].Held = false
	s.now = t0.Add(9 * time.Minute)
	if got := plan(); len(got) != 0 {
		t.Fatalf("victims %v 9 minutes after the hold ended, want none", got)
	}
	s.now = t0.Add(11 * time.Minute)
	if got := plan(); strings.Join(got, ",") != "b" {
		t.Fatalf("victims %v 11 minutes after the hold ended, want b", got)
	}
}

func TestQuotaExceededSaysWhatToFix(t *testing.T) {
	e, s := glueScope(nil, 4, rollout.Strategy{})
	e.rec, e.timing = nopRecorder{}, Timing{QuotaRetry: time.Minute}
	err := e.cloudError(context.Background(), s, events.ActionApply, scalegroup.NewQuotaExceeded("capacity 4 exceeds the instance quota of 2"))
	if err != nil {
		t.Fatalf("a quota error is reported, not returned: %v", err)
	}
	s.owner = &clusterv1.MachinePool{}
	c := scaleGroupReadyCondition(s)
	if c.Status != metav1.ConditionFalse || c.Reason != infrav1.QuotaExceededReason {
		t.Fatalf("ScaleGroupReady %+v, want False/%s", c, infrav1.QuotaExceededReason)
	}
	for _, want := range []string{"quota of 2", "Raise the quota", "spec.replicas"} {
		if !strings.Contains(c.Message, want) {
			t.Errorf("message %q does not say %q", c.Message, want)
		}
	}
	if s.requeue != time.Minute {
		t.Errorf("requeue %s, want the quota retry", s.requeue)
	}
}
