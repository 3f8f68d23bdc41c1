package infrapool

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mpool-dev/mpool/internal/provider/contract"
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
