package infrapool

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mpool-dev/mpool/internal/provider/contract"
	"github.com/mpool-dev/mpool/internal/rollout"
)

func TestReportedInstancesKeepsProblemsFirst(t *testing.T) {
	var in []contract.InstanceReport
	for i := range 10 {
		in = append(in, contract.InstanceReport{InstanceID: fmt.Sprintf("i-%02d", i), State: contract.InstanceRunning, Ready: true, LatestModelApplied: true})
	}
	in[7].State = contract.InstanceFailed
	in[8].Ready = false
	in[9].LatestModelApplied = false
	got := reportedInstances(slices.Clone(in), 4)
	var ids []string
	for _, r := range got {
		ids = append(ids, r.InstanceID)
	}
	if want := []string{"i-00", "i-07", "i-08", "i-09"}; !slices.Equal(ids, want) {
		t.Errorf("kept %v, want %v: the instances needing attention first, then by ID, ordered by ID", ids, want)
	}
	if all := reportedInstances(slices.Clone(in), 100); len(all) != 10 || !slices.IsSortedFunc(all, func(a, b contract.InstanceReport) int { return strings.Compare(a.InstanceID, b.InstanceID) }) {
		t.Errorf("under the limit every instance is reported, by ID: %v", all)
	}
}

// TestBlockedMessageCountsTheOldInstances: a refusal in the middle of a
// rollout (two instances already on the new model) says how many instances
// on the previous model keep serving, not how many live instances there are.
func TestBlockedMessageCountsTheOldInstances(t *testing.T) {
	s := &pass{planned: true, nodesKnown: true, bootstrap: true, modelHash: "new", blocked: errors.New("no AMI")}
	s.plan.Counts = rollout.Counts{Replicas: 4, UpToDate: 2, Stale: 2}
	c := rolloutProgressingCondition(s)
	if !strings.Contains(c.Message, "2 instances on the previous model keep serving") {
		t.Fatalf("message %q, want the 2 old instances counted", c.Message)
	}
}
