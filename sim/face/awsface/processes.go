package awsface

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/wire/awsapi"
)

// Suspended processes of the AWS face (Amazon EC2 Auto Scaling's
// SuspendProcesses and ResumeProcesses). A group's suspended processes
// live in its payload, each with when it was suspended, and are reported
// in DescribeAutoScalingGroups' SuspendedProcesses with AWS's
// SuspensionReason ("User suspended at <time>"). Their effects, where the
// face models the process:
//
//   - Launch: the group launches nothing: not on a capacity increase (no
//     activity is started; the desired capacity stays as set), not to
//     replace an instance TerminateInstanceInAutoScalingGroup took out
//     without decrement, an ABANDONed launch or an interrupted Spot
//     instance, not for an instance refresh.
//   - Terminate: a scale-in terminates nothing (the group stays above its
//     desired capacity until Terminate is resumed);
//     TerminateInstanceInAutoScalingGroup, a user's request, still
//     terminates.
//   - InstanceRefresh: an instance refresh does not progress (nor while
//     Launch or Terminate is suspended, which it needs).
//   - ReplaceUnhealthy, HealthCheck: see health.go. An instance that
//     failed to boot or fails its status check is reported
//     InService/Unhealthy and, once the group's HealthCheckGracePeriod has
//     passed since its launch, terminated and replaced when the group is
//     next read (replaceUnhealthy); suspended HealthCheck marks no running
//     instance Unhealthy, and with ReplaceUnhealthy (or Terminate)
//     suspended an Unhealthy instance stays until terminated otherwise.
//   - AZRebalance, AddToLoadBalancer, AlarmNotification,
//     ScheduledActions: not modelled (the face has no rebalancing between
//     zones, load balancers, alarms or scheduled actions); they are kept
//     and reported.
//
// ResumeProcesses applies what the group held back at once: it launches
// toward, or scales in to, the desired capacity.

// Operation names of the process actions.
const (
	OpAWSSuspendProcesses = "aws.autoscaling.SuspendProcesses"
	OpAWSResumeProcesses  = "aws.autoscaling.ResumeProcesses"
)

// awsSuspended is a suspended process of a group.
type awsSuspended struct {
	Process string    `json:"process"`
	Since   time.Time `json:"since"`
}

// suspended reports whether any of processes is suspended in the group.
func (p awsGroupPayload) suspended(processes ...string) bool {
	return slices.ContainsFunc(p.Suspended, func(s awsSuspended) bool { return slices.Contains(processes, s.Process) })
}

// clampProcesses bounds an existing group's capacity target by its
// suspended processes: no launch beyond live instances while Launch is
// suspended, no scale-in below them while Terminate is.
func (p awsGroupPayload) clampProcesses(existing *core.Group, target int) int {
	if existing == nil {
		return target
	}
	live := awsLive(existing)
	if p.suspended(awsapi.ProcessLaunch) {
		target = min(target, live)
	}
	if p.suspended(awsapi.ProcessTerminate) {
		target = max(target, live)
	}
	return target
}

// wireSuspended is the group's SuspendedProcesses, sorted by name.
func wireSuspended(p awsGroupPayload) []awsapi.SuspendedProcess {
	out := []awsapi.SuspendedProcess{}
	for _, s := range p.Suspended {
		out = append(out, awsapi.SuspendedProcess{ProcessName: s.Process,
			SuspensionReason: "User suspended at " + s.Since.UTC().Format(time.RFC3339)})
	}
	slices.SortFunc(out, func(a, b awsapi.SuspendedProcess) int { return strings.Compare(a.ProcessName, b.ProcessName) })
	return out
}

// parseProcesses reads ScalingProcesses.member.N; none is every process.
func parseProcesses(req *awsRequest) ([]string, error) {
	names := qList(req.form, "ScalingProcesses.member")
	if len(names) == 0 {
		return slices.Clone(awsapi.Processes), nil
	}
	for _, n := range names {
		if !slices.Contains(awsapi.Processes, n) {
			return nil, validationError("Process type %s is not recognized (valid processes: %s).", n, strings.Join(awsapi.Processes, ", "))
		}
	}
	slices.Sort(names)
	return slices.Compact(names), nil
}

// suspendProcesses serves SuspendProcesses.
func (h *awsHandler) suspendProcesses(w http.ResponseWriter, r *http.Request) {
	h.changeProcesses(w, r, true)
}

// resumeProcesses serves ResumeProcesses.
func (h *awsHandler) resumeProcesses(w http.ResponseWriter, r *http.Request) {
	h.changeProcesses(w, r, false)
}

func (h *awsHandler) changeProcesses(w http.ResponseWriter, r *http.Request, suspend bool) {
	req := awsReq(r)
	name := req.form.Get("AutoScalingGroupName")
	g, p, err := h.group(req, name)
	if err == nil && g.Operation != nil && g.Operation.Type == core.OperationDelete {
		err = errBeingDeleted(name)
	}
	var names []string
	if err == nil {
		names, err = parseProcesses(req)
	}
	if err != nil {
		h.writeAWSError(w, req, err)
		return
	}
	now := h.env.Cloud.Clock().Now().UTC()
	for _, n := range names {
		has := p.suspended(n)
		switch {
		case suspend && !has:
			p.Suspended = append(p.Suspended, awsSuspended{Process: n, Since: now})
		case !suspend && has:
			p.Suspended = slices.DeleteFunc(p.Suspended, func(s awsSuspended) bool { return s.Process == n })
		}
	}
	h.env.Log.V(1).Info("Auto Scaling group processes changed", "group", name, "suspend", suspend, "processes", names)
	if suspend {
		_, err = h.applyModelOnly(req, g, &p)
	} else {
		// What the suspended processes held back happens now.
		_, err = h.apply(req, name, &p, g, "an instance was started in response to a difference between desired and actual capacity")
	}
	h.reply(w, req, nil, err)
}

// replaceUnhealthy terminates g's Unhealthy instances (health.go:
// failed status checks past the grace period, SetInstanceHealth) and
// launches their replacements (as far as Launch is not suspended), unless
// ReplaceUnhealthy or Terminate is suspended. It returns the group as it
// is then.
func (h *awsHandler) replaceUnhealthy(req *awsRequest, g *core.Group) *core.Group {
	p := readAWSPayload(g)
	if g.Operation != nil && g.Operation.Type == core.OperationDelete ||
		p.suspended(awsapi.ProcessReplaceUnhealthy, awsapi.ProcessTerminate) {
		return g
	}
	now := h.env.Cloud.Clock().Now().UTC()
	var ids []string
	var acts []awsActivity
	for _, in := range g.Instances {
		if cause := p.unhealthyCause(in, now); cause != "" {
			ids = append(ids, in.ID)
			acts = append(acts, awsActivity{Kind: "terminate", InstanceID: in.ID, Start: now, Cause: fmt.Sprintf(
				"At %s an instance was taken out of service in response to %s.", AWSTime(now), cause)})
		}
	}
	if len(ids) == 0 {
		return g
	}
	ng, err := h.terminateInstances(req, g, ids)
	if err != nil {
		return g
	}
	h.recordActivities(req, g.Name, acts, false)
	h.env.Log.V(1).Info("Replacing unhealthy instances", "group", g.Name, "instances", ids)
	if out, err := h.apply(req, g.Name, &p, ng, "an instance was started in response to a difference between desired and actual capacity"); err == nil {
		return out
	}
	return ng
}
