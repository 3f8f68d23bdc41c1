package rollout

import (
	"testing"

	"k8s.io/utils/ptr"
)

// TestPlanRemediation: instances a MachineHealthCheck found unhealthy are
// replaced first, within the budgets and the cap on remediations in flight.
func TestPlanRemediation(t *testing.T) {
	runPlanCases(t, []planCase{
		{
			name:       "an unhealthy NotReady instance is replaced at once: it serves nothing, the budget does not hold it",
			desired:    3,
			instances:  concat(group("a", 2), []Instance{inst("sick", 5, unhealthy, notReady)}),
			wantTarget: 3, wantDelete: []string{"sick/Remediate"},
			wantWaits: []WaitReason{WaitAvailable},
		},
		{
			name:       "an unhealthy instance whose Node is still Ready waits for the unavailability budget (maxUnavailable 0: surge first)",
			desired:    3,
			instances:  concat(group("a", 2), []Instance{inst("sick", 5, unhealthy)}),
			wantTarget: 4, wantWaits: []WaitReason{WaitBudget, WaitAvailable},
		},
		{
			name:       "the cap holds the second remediation while one is in flight",
			desired:    3,
			maxRemed:   ptr.To[int32](1),
			instances:  concat(group("a", 1), []Instance{inst("gone", 9, unhealthy, deleting), inst("sick", 5, unhealthy, notReady)}),
			wantTarget: 4, wantDelete: []string{"gone/Deleting"},
			wantWaits: []WaitReason{WaitRemediation, WaitAvailable},
		},
		{
			name:       "the cap lets as many remediations start as it has room for",
			desired:    4,
			maxRemed:   ptr.To[int32](2),
			instances:  concat(group("a", 1), []Instance{inst("s1", 9, unhealthy, notReady), inst("s2", 8, unhealthy, notReady), inst("s3", 7, unhealthy, notReady)}),
			wantTarget: 5, wantDelete: []string{"s1/Remediate", "s2/Remediate"},
			wantWaits: []WaitReason{WaitRemediation, WaitAvailable},
		},
		{
			name:       "a rollout and a remediation share the budget: the NotReady unhealthy instance goes free, the stale one within maxUnavailable",
			desired:    4,
			strategy:   strategy("0", "1"),
			instances:  concat(group("s", 3, stale), []Instance{inst("sick", 5, unhealthy, notReady)}),
			wantTarget: 4, wantDelete: []string{"sick/Remediate"},
			wantWaits: []WaitReason{WaitSurge, WaitBudget, WaitAvailable},
		},
	})
}
