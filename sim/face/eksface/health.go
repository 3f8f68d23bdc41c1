package eksface

import (
	"fmt"
	"slices"
	"time"

	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/face/awsface"
)

// Health issue codes of a node group the simulated EKS reports, as the EKS
// API reference's Issue type names them. Each comes from a condition of
// the simulation, and goes when the condition does:
//
//   - AsgInstanceLaunchFailures: the node group's Auto Scaling group cannot
//     launch the instances it wants (the AWS face's vCPU quota,
//     awsface.AWSFace.VCPUQuota); the message is the group's failed scaling
//     activity's, as DescribeScalingActivities shows it.
//   - AutoScalingGroupNotFound: the Auto Scaling group was deleted behind
//     EKS's back; recreating one of its name (through the AWS face) is
//     recovery: EKS puts its own configuration back on it.
//   - Ec2LaunchTemplateNotFound: the node group's launch template (one that
//     existed when the node group was created) was deleted; nothing more is
//     launched from it. Template IDs never repeat, so, as EKS's
//     troubleshooting guide says, only a new node group recovers.
//   - NodeCreationFailure: instances that have not joined the cluster
//     (EKSFace.NodeCreationTimeout after their launch); a node group still
//     CREATING then becomes CREATE_FAILED.
//
// An ACTIVE node group with issues is DEGRADED, and ACTIVE again once they
// are gone; a CREATING one is CREATE_FAILED with them at its creation
// timeout; an UPDATING one shows them, and its update fails when they hold
// its launches back for the node creation timeout (NodeCreationFailure),
// or at once when its Auto Scaling group is gone.
const (
	EKSIssueAsgInstanceLaunchFailures = "AsgInstanceLaunchFailures"
	EKSIssueAutoScalingGroupNotFound  = "AutoScalingGroupNotFound"
	EKSIssueEc2LaunchTemplateNotFound = "Ec2LaunchTemplateNotFound"
	EKSIssueNodeCreationFailure       = "NodeCreationFailure"
)

// eksNodeJoinMessage is NodeCreationFailure's message.
const eksNodeJoinMessage = "Instances failed to join the kubernetes cluster"

// launchLimit says what holds the node group's launches back: how many
// instances its Auto Scaling group may have (-1: no limit) and the issue
// that limits it (nil when none). A deleted launch template allows no
// launch; the AWS face's vCPU quota allows what fits.
func (f *EKSFace) launchLimit(env core.FaceEnv, n *eksNodegroup) (int, *eksIssue) {
	if lt := n.LaunchTemplate; lt != nil && n.LTSeen {
		if _, ok := awsface.AWSLaunchTemplate(env.Cloud, n.Account, n.Region, lt.ID, ""); !ok {
			return 0, &eksIssue{Code: EKSIssueEc2LaunchTemplateNotFound, ResourceIDs: []string{lt.ID},
				Message: fmt.Sprintf("The launch template %s of the node group was not found: recreate it to recover.", lt.ID)}
		}
	}
	awsFace := awsface.AWSFaceOf(env.Cloud)
	if fit := awsFace.VCPUFit(env.Cloud, n.Account, n.Region, n.ASG, n.InstanceTypes[0], n.CapacityType == "SPOT"); fit >= 0 {
		return fit, &eksIssue{Code: EKSIssueAsgInstanceLaunchFailures, ResourceIDs: []string{n.ASG}, Message: awsFace.VCPULaunchFailure()}
	}
	return -1, nil
}

// heldBack records, as the Auto Scaling group's failed scaling activity,
// why it launches fewer instances than it wants (the AWS face shows it in
// DescribeScalingActivities; repeats of the latest are not recorded).
func (f *EKSFace) heldBack(env core.FaceEnv, n *eksNodegroup, issue *eksIssue, from, to int32) {
	now := env.Cloud.Clock().Now().UTC()
	awsface.AWSRecordFailedActivity(env.Cloud, n.Account, n.Region, n.ASG, now,
		fmt.Sprintf("At %s a user request update of AutoScalingGroup constraints to min: %d, max: %d, desired: %d changing the desired capacity from %d to %d.",
			awsface.AWSTime(now), n.MinSize, max(n.MaxSize, to), to, from, to), issue.Message)
}

// issues are the node group's health issues as EKS finds them now, with g
// and gerr the read of its Auto Scaling group and want the instances it
// should have (the node group's desired size; more while an update
// surges).
func (f *EKSFace) issues(env core.FaceEnv, n *eksNodegroup, g *core.Group, gerr error, want int, now time.Time) []eksIssue {
	if core.CodeOf(gerr) == core.CodeNotFound {
		return []eksIssue{{Code: EKSIssueAutoScalingGroupNotFound, ResourceIDs: []string{n.ASG},
			Message: fmt.Sprintf("The Auto Scaling group %s of the node group was not found: recreate it with the same name to recover.", n.ASG)}}
	}
	if gerr != nil {
		return n.Health
	}
	var out []eksIssue
	live := g.Live()
	var stuck []string
	for _, in := range live {
		if !eksUp(n, in) && now.Sub(in.CreatedAt) > f.nodeCreationTimeout() {
			stuck = append(stuck, in.ID)
		}
	}
	fit, issue := f.launchLimit(env, n)
	switch {
	case issue == nil:
	case issue.Code == EKSIssueEc2LaunchTemplateNotFound:
		out = append(out, *issue)
	case len(live) < want && fit < want:
		out = append(out, *issue)
	}
	if len(stuck) > 0 {
		slices.Sort(stuck)
		out = append(out, eksIssue{Code: EKSIssueNodeCreationFailure, Message: eksNodeJoinMessage, ResourceIDs: stuck})
	}
	return out
}

// relaunch retries the launches a limit held back once it allows more (as
// an Auto Scaling group's retries do), and puts EKS's configuration back
// on an Auto Scaling group of the node group's name that EKS did not write
// (one recreated through the AWS face). It returns the group as it is now.
func (f *EKSFace) relaunch(env core.FaceEnv, n *eksNodegroup, g *core.Group) *core.Group {
	if g.Operation != nil && g.Operation.Type == core.OperationDelete {
		return g
	}
	// Outside an update (the callers' case) the group's model is always
	// the node group's release.
	if g.ModelHash == n.release() && g.Capacity >= n.DesiredSize {
		return g
	}
	if ng, err := f.applyASG(env, n, n.DesiredSize); err == nil {
		return ng
	}
	return g
}

// checkHealth re-evaluates an ACTIVE or DEGRADED node group: relaunches
// what limits held back, then sets its issues and status (DEGRADED with
// issues, else ACTIVE). It reports whether the node group changed.
func (f *EKSFace) checkHealth(env core.FaceEnv, n *eksNodegroup, now time.Time) bool {
	sc := asgScope(env, n)
	g, err := sc.GetGroup(n.ASG)
	if err == nil && g.Operation != nil && g.Operation.Type == core.OperationDelete {
		// Being deleted behind EKS's back: as good as gone.
		g, err = nil, core.NotFound(g.Key())
	}
	if err == nil {
		g = f.relaunch(env, n, g)
	}
	issues := f.issues(env, n, g, err, int(n.DesiredSize), now)
	status := EKSStatusActive
	if len(issues) > 0 {
		status = EKSStatusDegraded
	}
	if status == n.Status && eksIssuesEqual(issues, n.Health) {
		return false
	}
	if status != n.Status {
		env.Log.V(1).Info("EKS node group health changed", "nodegroup", n.Name, "status", status, "issues", issues)
	}
	n.Status, n.Health, n.ModifiedAt = status, issues, now
	return true
}

func eksIssuesEqual(a, b []eksIssue) bool {
	return slices.EqualFunc(a, b, func(x, y eksIssue) bool {
		return x.Code == y.Code && x.Message == y.Message && slices.Equal(x.ResourceIDs, y.ResourceIDs)
	})
}

// stepHealthy is step (an update's progress) with the node group's
// health: the issues found are shown while the update runs; a vanished
// Auto Scaling group fails the update at once, nodes that do not join
// fail it, and so do launches held back for the node creation timeout
// (all NodeCreationFailure, the update error EKS reports when an update
// cannot bring up its nodes).
func (f *EKSFace) stepHealthy(env core.FaceEnv, n *eksNodegroup, u *eksUpdate, now time.Time) (bool, *eksUpdateError) {
	g, err := asgScope(env, n).GetGroup(n.ASG)
	if core.CodeOf(err) == core.CodeNotFound {
		n.Health = f.issues(env, n, nil, err, 0, now)
		return false, &eksUpdateError{ErrorCode: EKSIssueNodeCreationFailure, ErrorMessage: n.Health[0].Message, ResourceIDs: []string{n.ASG}}
	}
	if err != nil {
		return false, nil
	}
	done, fail := f.step(env, n, u, now)
	if done || fail != nil {
		return done, fail
	}
	want := int(awsface.AWSGroupDesired(g))
	n.Health = f.issues(env, n, g, nil, want, now)
	fit, limit := f.launchLimit(env, n)
	blocked := limit != nil && fit < want && int(g.Capacity) < want
	switch {
	case !blocked:
		n.LaunchBlockedSince = time.Time{}
	case n.LaunchBlockedSince.IsZero():
		n.LaunchBlockedSince = now
	}
	for _, i := range n.Health {
		if i.Code == EKSIssueNodeCreationFailure || blocked && now.Sub(n.LaunchBlockedSince) > f.nodeCreationTimeout() {
			return false, &eksUpdateError{ErrorCode: EKSIssueNodeCreationFailure, ErrorMessage: i.Message, ResourceIDs: i.ResourceIDs}
		}
	}
	return false, nil
}
