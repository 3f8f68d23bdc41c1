package crd

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mpool-dev/mpool/internal/preview"
)

// TestDisruptionPolicyScheduleRegex: the admission policy's regular
// expression for mpool.dev/maintenance-window-schedule (RE2, as CEL's
// matches) accepts what the engine's cron parser accepts, and refuses the
// mistakes it can see.
func TestDisruptionPolicyScheduleRegex(t *testing.T) {
	pols, _, err := AdmissionPolicies()
	if err != nil {
		t.Fatal(err)
	}
	var expr string
	for _, p := range pols {
		if p.Name != "mpool-disruption-annotations" {
			continue
		}
		for _, v := range p.Spec.Variables {
			if v.Name == "scheduleRegex" {
				expr = v.Expression
			}
		}
	}
	raw, ok := strings.CutPrefix(strings.TrimSpace(expr), "r'")
	if !ok || !strings.HasSuffix(raw, "'") {
		t.Fatalf("scheduleRegex %q is not a CEL raw string", expr)
	}
	rx := regexp.MustCompile(strings.TrimSuffix(raw, "'"))
	valid := []string{
		"0 2 * * *", "30 22 * * MON-FRI", "*/15 0-6 * * *", "0 9 1,15 * ?", "0 0 1 JAN,jul *",
		"@daily", "@hourly", "@weekly", "@every 6h", "CRON_TZ=Europe/Paris 0 2 * * *", " 0 2 * * 0 ",
		"59 23 31 12 6", "0 1-5/2 * * *",
	}
	invalid := []string{
		"0 2 * *", "0 2 * * * *", "60 2 * * *", "0 24 * * *", "0 2 0 * *", "0 2 32 * *", "0 2 * 13 *",
		"0 2 * * 7", "0 2 * * FUN", "*/0 * * * *", "@sometimes", "daily", "", "0 2 * * * # comment",
	}
	for _, s := range valid {
		if !rx.MatchString(s) {
			t.Errorf("policy refuses %q", s)
		}
		if _, err := preview.ParseMaintenanceWindow(s, "1h"); err != nil {
			t.Errorf("engine refuses %q: %v", s, err)
		}
	}
	for _, s := range invalid {
		if rx.MatchString(s) {
			t.Errorf("policy admits %q", s)
		}
		if _, err := preview.ParseMaintenanceWindow(s, "1h"); err == nil && s != "" {
			t.Errorf("engine accepts %q", s)
		}
	}
}

// TestDisruptionPolicyCoversEveryPoolKind: the disruption annotations'
// policy is evaluated for every infrastructure pool CRD (plural
// "…machinepools") and for nothing else of the infrastructure group, so
// that a new provider's pool is not left unchecked and no per-instance
// object pays for the evaluation.
func TestDisruptionPolicyCoversEveryPoolKind(t *testing.T) {
	crds, err := CRDs()
	if err != nil {
		t.Fatal(err)
	}
	var pools []string
	for _, c := range crds {
		if c.Spec.Group == "infrastructure.cluster.x-k8s.io" && strings.HasSuffix(c.Spec.Names.Plural, "machinepools") {
			pools = append(pools, c.Spec.Names.Plural)
		}
	}
	pols, _, err := AdmissionPolicies()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range pols {
		if p.Name != "mpool-disruption-annotations" {
			continue
		}
		for _, r := range p.Spec.MatchConstraints.ResourceRules {
			if slices.Contains(r.APIGroups, "infrastructure.cluster.x-k8s.io") {
				got = append(got, r.Resources...)
			}
		}
	}
	slices.Sort(pools)
	slices.Sort(got)
	if len(pools) == 0 || !slices.Equal(got, pools) {
		t.Fatalf("the policy matches infrastructure resources %v, want the pool CRDs %v", got, pools)
	}
}
