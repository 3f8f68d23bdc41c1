package azureface

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/wire/azureapi"
)

// Automatic instance repairs of the Azure face, as a scale set's
// automaticRepairsPolicy
// (https://learn.microsoft.com/azure/virtual-machine-scale-sets/virtual-machine-scale-sets-automatic-instance-repairs):
//
//   - The policy is validated on PUT and PATCH as ARM does: gracePeriod an
//     ISO 8601 duration from PT10M to PT90M (default PT10M), repairAction
//     Replace (default), Restart or Reimage; enabling it needs application
//     health monitoring: an Application Health extension
//     (ApplicationHealthLinux/-Windows) in the VM profile's
//     extensionProfile, or networkProfile.healthProbe. GET returns the
//     policy with its defaults filled in.
//   - Application health: a VM whose core fault is CloudCheckFailing is
//     the one the extension (or probe) reports Unhealthy; the face has no
//     instance views, so it is not reported otherwise.
//   - With the policy enabled, a VM reported Unhealthy for which the grace
//     period has passed since its last state change (its creation, or its
//     last repair) is repaired when the scale set or its VMs are next read:
//     Replace deletes it and creates a new VM, the capacity unchanged;
//     Restart and Reimage keep the VM and bring its application back
//     healthy (the fault cleared), which restarts the grace period.
//
// The grace period runs on the core's clock: tests step a fake clock over
// the ten minutes rather than shorten them below Azure's minimum.

// Limits of automaticRepairsPolicy.gracePeriod.
const (
	azureMinRepairGrace = 10 * time.Minute
	azureMaxRepairGrace = 90 * time.Minute
)

// iso8601Duration is the day-time subset of ISO 8601 durations ARM uses.
var iso8601Duration = regexp.MustCompile(`^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?$`)

// parseISO8601 parses a duration such as PT10M, PT1H30M or P1DT2H.
func parseISO8601(s string) (time.Duration, bool) {
	m := iso8601Duration.FindStringSubmatch(strings.ToUpper(s))
	if m == nil || s == "P" || strings.HasSuffix(strings.ToUpper(s), "T") {
		return 0, false
	}
	var d time.Duration
	for i, unit := range []time.Duration{24 * time.Hour, time.Hour, time.Minute, time.Second} {
		if m[i+1] != "" {
			n, err := strconv.Atoi(m[i+1])
			if err != nil {
				return 0, false
			}
			d += time.Duration(n) * unit
		}
	}
	return d, true
}

// repairPolicy is a scale set's automaticRepairsPolicy with its defaults.
type repairPolicy struct {
	enabled bool
	grace   time.Duration
	action  string
}

// checkRepairs validates the scale set's automaticRepairsPolicy and returns
// the target and message of ARM's InvalidParameter error, or "".
func checkRepairs(view *azureapi.ScaleSetView) (string, string) {
	if view.Properties == nil || view.Properties.AutomaticRepairsPolicy == nil {
		return "", ""
	}
	pol := view.Properties.AutomaticRepairsPolicy
	const target = "properties.automaticRepairsPolicy"
	if pol.GracePeriod != "" {
		d, ok := parseISO8601(pol.GracePeriod)
		if !ok || d < azureMinRepairGrace || d > azureMaxRepairGrace {
			return target + ".gracePeriod", fmt.Sprintf("The grace period '%s' of the automatic repairs policy is invalid: it must be an ISO 8601 duration between PT10M and PT90M.", pol.GracePeriod)
		}
	}
	if a := pol.RepairAction; a != "" && repairAction(a) == "" {
		return target + ".repairAction", fmt.Sprintf("The repair action '%s' is not one of Replace, Restart, Reimage.", a)
	}
	if pol.Enabled != nil && *pol.Enabled && !healthMonitored(view) {
		return target, "Automatic repairs cannot be enabled on a scale set without application health monitoring: add the Application Health extension or a load balancer health probe (networkProfile.healthProbe) to its virtual machine profile."
	}
	return "", ""
}

// repairAction is a as ARM spells it, "" when it is none.
func repairAction(a string) string {
	for _, v := range []string{azureapi.RepairReplace, azureapi.RepairRestart, azureapi.RepairReimage} {
		if strings.EqualFold(a, v) {
			return v
		}
	}
	return ""
}

// healthMonitored reports whether the VM profile has an Application Health
// extension or a load balancer health probe.
func healthMonitored(view *azureapi.ScaleSetView) bool {
	vp := view.Properties.VirtualMachineProfile
	if vp == nil {
		return false
	}
	if vp.NetworkProfile != nil && vp.NetworkProfile.HealthProbe != nil && vp.NetworkProfile.HealthProbe.ID != "" {
		return true
	}
	if vp.ExtensionProfile == nil {
		return false
	}
	return slices.ContainsFunc(vp.ExtensionProfile.Extensions, func(e azureapi.ExtensionView) bool {
		return e.Properties != nil && (strings.EqualFold(e.Properties.Type, azureapi.ExtensionApplicationHealthLinux) ||
			strings.EqualFold(e.Properties.Type, azureapi.ExtensionApplicationHealthWindows))
	})
}

// readRepairPolicy is the scale set's policy, with Azure's defaults.
func readRepairPolicy(p azureGroupPayload) repairPolicy {
	out := repairPolicy{grace: azureMinRepairGrace, action: azureapi.RepairReplace}
	raw := child(p.Resource, false, "properties", "automaticRepairsPolicy")
	if raw == nil {
		return out
	}
	var pol azureapi.AutomaticRepairsPolicy
	b, _ := json.Marshal(raw)
	_ = json.Unmarshal(b, &pol)
	out.enabled = pol.Enabled != nil && *pol.Enabled
	if d, ok := parseISO8601(pol.GracePeriod); ok && pol.GracePeriod != "" {
		out.grace = d
	}
	if a := repairAction(pol.RepairAction); a != "" {
		out.action = a
	}
	return out
}

// fillRepairDefaults writes the policy's defaults into a scale set
// resource as ARM returns it.
func fillRepairDefaults(props map[string]any) {
	pol := child(props, false, "automaticRepairsPolicy")
	if pol == nil {
		return
	}
	if _, ok := pol["enabled"]; !ok {
		pol["enabled"] = false
	}
	if g, _ := pol["gracePeriod"].(string); g == "" {
		pol["gracePeriod"] = "PT10M"
	}
	a, _ := pol["repairAction"].(string)
	if a = repairAction(a); a == "" {
		a = azureapi.RepairReplace
	}
	pol["repairAction"] = a
}

// repair applies the scale set's automatic repairs due at now (see above)
// and returns the group as it is then.
func (h *azureHandler) repair(sc core.Scope, g *core.Group) *core.Group {
	if g.Operation != nil && g.Operation.Type == core.OperationDelete {
		return g
	}
	pol := readRepairPolicy(readAzurePayload(g))
	if !pol.enabled {
		return g
	}
	now := h.env.Cloud.Clock().Now()
	var due []string
	for i := range g.Instances {
		in := &g.Instances[i]
		since := in.CreatedAt
		if r := readVMPayload(in).RepairedAt; r.After(since) {
			since = r
		}
		if in.State == core.StateRunning && in.Fault == core.FaultCloudCheckFailing && !now.Before(since.Add(pol.grace)) {
			due = append(due, in.ID)
		}
	}
	if len(due) == 0 {
		return g
	}
	h.env.Log.V(1).Info("Repairing unhealthy VMs", "scaleSet", g.Name, "action", pol.action, "vms", due)
	if pol.action == azureapi.RepairReplace {
		capacity := g.Capacity
		if _, err := sc.DeleteInstances(g.Name, due); err != nil {
			return g
		}
		if ng, err := sc.SetCapacity(g.Name, capacity); err == nil {
			return ng
		}
	} else {
		for _, id := range due {
			_, _ = sc.UpdateInstancePayload(g.Name, id, core.EditPayload(func(vp *azureVMPayload) error {
				vp.RepairedAt = now
				return nil
			}))
			_, _ = sc.SetInstanceFault(g.Name, id, core.FaultNone)
		}
	}
	if ng, err := sc.GetGroup(g.Name); err == nil {
		return ng
	}
	return g
}

// readGroup reads the scale set gname, with its automatic repairs applied.
func (h *azureHandler) readGroup(sc core.Scope, gname string) (*core.Group, error) {
	g, err := sc.GetGroup(gname)
	if err != nil {
		return nil, err
	}
	return h.repair(sc, g), nil
}
