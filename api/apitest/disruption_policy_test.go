package apitest

import (
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestDisruptionAnnotationsPolicy: the admission policy of
// config/crd/policies/disruption-annotations.yaml refuses an unreadable
// maintenance window, undrainable-node behavior or blue-green setting on a MachinePool or an
// infrastructure pool, saying what to fix, and admits readable ones.
func TestDisruptionAnnotationsPolicy(t *testing.T) {
	ns := env.NewNamespace(t)
	for _, tc := range []struct {
		name, kind, annotations string
		wants                   []string // empty: admitted
	}{
		{name: "window", kind: "MachinePool", annotations: `{mpool.dev/maintenance-window-schedule: "0 2 * * MON-FRI", mpool.dev/maintenance-window-duration: 4h}`},
		{name: "daily", kind: "LocalMachinePool", annotations: `{mpool.dev/maintenance-window-schedule: "@daily", mpool.dev/maintenance-window-duration: 90m, mpool.dev/undrainable-node-behavior: Cordon}`},
		{name: "hour-25", kind: "MachinePool", annotations: `{mpool.dev/maintenance-window-schedule: "0 25 * * *", mpool.dev/maintenance-window-duration: 4h}`,
			wants: []string{"is not a cron schedule", "hour (0-23)"}},
		{name: "four-fields", kind: "LocalMachinePool", annotations: `{mpool.dev/maintenance-window-schedule: "0 2 * *", mpool.dev/maintenance-window-duration: 4h}`,
			wants: []string{"is not a cron schedule", "five fields"}},
		{name: "no-duration", kind: "MachinePool", annotations: `{mpool.dev/maintenance-window-schedule: "0 2 * * *"}`,
			wants: []string{"set mpool.dev/maintenance-window-schedule and mpool.dev/maintenance-window-duration together", "the duration is missing"}},
		{name: "bad-duration", kind: "MachinePool", annotations: `{mpool.dev/maintenance-window-schedule: "0 2 * * *", mpool.dev/maintenance-window-duration: "4 hours"}`,
			wants: []string{"is not a duration of at least a minute"}},
		{name: "short-duration", kind: "MachinePool", annotations: `{mpool.dev/maintenance-window-schedule: "0 2 * * *", mpool.dev/maintenance-window-duration: 30s}`,
			wants: []string{"is not a duration of at least a minute"}},
		{name: "pause", kind: "LocalMachinePool", annotations: `{mpool.dev/undrainable-node-behavior: pause}`,
			wants: []string{"is not one of Delete", "Schedule", "Cordon"}},
		{name: "blue-green", kind: "MachinePool", annotations: `{mpool.dev/rollout-strategy: BlueGreen, mpool.dev/blue-green-batch-size: "25%", mpool.dev/blue-green-batch-soak: "0", mpool.dev/blue-green-pool-soak: 1h30m}`},
		{name: "blue-green-count", kind: "LocalMachinePool", annotations: `{mpool.dev/rollout-strategy: RollingUpdate, mpool.dev/blue-green-batch-size: "3"}`},
		{name: "canary", kind: "MachinePool", annotations: `{mpool.dev/rollout-strategy: Canary}`,
			wants: []string{"is not one of RollingUpdate", "BlueGreen"}},
		{name: "batch-zero", kind: "LocalMachinePool", annotations: `{mpool.dev/blue-green-batch-size: "0"}`,
			wants: []string{"is not a positive integer"}},
		{name: "batch-pct", kind: "MachinePool", annotations: `{mpool.dev/blue-green-batch-size: "150%"}`,
			wants: []string{"from 1% to 100%"}},
		{name: "soak", kind: "MachinePool", annotations: `{mpool.dev/blue-green-pool-soak: "1 hour"}`,
			wants: []string{"are Go durations"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := fromYAML(t, bases[tc.kind])
			mergePatch(t, obj.Object, "metadata: {annotations: "+tc.annotations+"}")
			obj.SetNamespace(ns)
			obj.SetName(tc.name)
			err := env.Client.Create(ctx(), obj, client.DryRunAll)
			if len(tc.wants) == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			wantRefused(t, err, tc.kind+" "+tc.annotations, tc.wants...)
		})
	}
}
