package aws

import (
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
)

// Suspended processes and refreshPreferences.disable.
//
// spec.suspendProcesses is the user's: Apply suspends and resumes the
// difference between it and the processes DescribeAutoScalingGroups
// reports (applyProcesses), only when the engine applies a changed spec, so
// a pool at rest makes no write. mpool never suspends a process itself
// and never resumes one the spec suspends. Two of them are processes
// mpool's own work goes through; rather than fight the user's choice or
// loop on writes the ASG will not act on, mpool says so:
//
//   - Launch: the ASG launches no instance, so a scale-up raises the
//     desired capacity and waits, and a rollout could take old instances
//     down that nothing replaces. The engine therefore replaces no
//     out-of-date instance while Launch is suspended (the pool's
//     Desired.SkipModelReconciliation, as refreshPreferences.disable),
//     and the ASGReady and ScaleGroupDesiredReplicas messages say why
//     instances are missing.
//   - Terminate: the ASG terminates nothing by itself; mpool's scale-in
//     and rollouts terminate the instances the engine picked with
//     TerminateInstanceInAutoScalingGroup, which AWS still honours, so
//     they go on; ASGReady says so.
//
// refreshPreferences.disable is CAPA's "do not start an instance refresh
// when the launch template changes". mpool never starts an instance
// refresh (the engine replaces instances, with drains, within the
// budgets Strategy maps from refreshPreferences); disabling it means the
// engine does not replace instances on a model change: new instances get
// the new launch template version, existing ones stay until scaled in or
// deleted, and ScaleGroupModelUpdated says why.

// suspends reports whether spec.suspendProcesses suspends process.
func suspends(spec infrav1.AWSMachinePoolSpec, process string) bool {
	return slices.Contains(suspendedProcesses(spec.SuspendProcesses), process)
}

// skipModelReconciliation is the pool's Desired.SkipModelReconciliation:
// why the engine keeps its out-of-date instances, "" when it replaces
// them.
func skipModelReconciliation(spec infrav1.AWSMachinePoolSpec) string {
	switch {
	case spec.RefreshPreferences != nil && spec.RefreshPreferences.Disable:
		return "spec.refreshPreferences.disable is true"
	case suspends(spec, "Launch"):
		return "the ASG's Launch process is suspended (spec.suspendProcesses)"
	}
	return ""
}

// noteSuspendedProcesses adds to the ASGReady (and, while replicas are
// missing, ScaleGroupDesiredReplicas) condition's message what the
// suspended Launch and Terminate processes mean for mpool.
func noteSuspendedProcesses(pool *infrav1.AWSMachinePool) {
	var notes []string
	if suspends(pool.Spec, "Launch") {
		notes = append(notes, "spec.suspendProcesses suspends Launch: the ASG launches no instance, so scale-ups wait and out-of-date instances are not replaced until it is resumed")
	}
	if suspends(pool.Spec, "Terminate") {
		notes = append(notes, "spec.suspendProcesses suspends Terminate: the ASG terminates nothing by itself; mpool's scale-in and rollouts still terminate the instances they picked")
	}
	if len(notes) == 0 {
		return
	}
	note := "; " + strings.Join(notes, "; ")
	conds := pool.GetConditions()
	for i := range conds {
		c := &conds[i]
		switch {
		case strings.Contains(c.Message, note):
		case c.Type == infrav1.ASGReadyCondition,
			c.Type == infrav1.ScaleGroupDesiredReplicasCondition && c.Status != metav1.ConditionTrue && suspends(pool.Spec, "Launch"):
			c.Message += note
		}
	}
	pool.SetConditions(conds)
}
