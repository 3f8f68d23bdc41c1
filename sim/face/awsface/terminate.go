package awsface

import (
	"fmt"
	"net/http"

	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/wire/awsapi"
)

// OpAWSTerminateInstances is EC2 TerminateInstances' operation name.
const OpAWSTerminateInstances = "aws.ec2.TerminateInstances"

// ec2TerminateInstances serves EC2 TerminateInstances (InstanceId.N) for
// the instances of the scope's Auto Scaling groups, as EC2 does for an
// instance of a group: the instance shuts down, and its group, whose
// desired capacity is unchanged, takes it out of service and launches a
// replacement (an activity says so). An instance already shutting down is
// answered with its state unchanged. Any unknown ID fails the whole
// request (InvalidInstanceID.NotFound), a malformed one
// InvalidInstanceID.Malformed. CAPA terminates a pool's instance so when
// it deletes the instance's AWSMachine.
func (h *awsHandler) ec2TerminateInstances(w http.ResponseWriter, r *http.Request) {
	req := awsReq(r)
	ids := qList(req.form, "InstanceId")
	if len(ids) == 0 {
		h.writeError(w, req, http.StatusBadRequest, awsapi.CodeMissingParameter, "The request must contain the parameter InstanceId")
		return
	}
	for _, id := range ids {
		if !awsIDRE("i").MatchString(id) {
			h.writeError(w, req, http.StatusBadRequest, awsapi.CodeInvalidInstanceIDMal, fmt.Sprintf("Invalid id: %q", id))
			return
		}
	}
	for _, id := range ids {
		if g, _ := h.instanceGroup(req, id); g == nil {
			h.writeError(w, req, http.StatusBadRequest, awsapi.CodeInvalidInstanceIDNF, fmt.Sprintf("The instance ID '%s' does not exist", id))
			return
		}
	}
	out := &awsapi.TerminateInstancesResponse{}
	for _, id := range ids {
		g, in := h.instanceGroup(req, id)
		if g == nil {
			// Gone since it was looked up: terminated.
			out.Instances = append(out.Instances, awsapi.InstanceStateChange{InstanceID: id,
				CurrentState: awsapi.InstanceState{Code: 48, Name: "terminated"}, PreviousState: ec2State(core.StateDeleting)})
			continue
		}
		prev := ec2State(in.State)
		if !awsLeaving(*in) {
			if _, err := h.terminateInstances(req, g, []string{id}); err != nil {
				h.writeAWSError(w, req, err)
				return
			}
			now := h.env.Cloud.Clock().Now().UTC()
			act := awsActivity{ID: NewRequestID(), Kind: "terminate", InstanceID: id, Start: now,
				Cause: fmt.Sprintf("At %s an instance was taken out of service in response to an EC2 health check indicating it has been terminated or stopped.", AWSTime(now))}
			if ng, p, err := h.group(req, g.Name); err == nil {
				// The replacement; a group that cannot launch (a template
				// gone) records that when it is next described.
				_, _ = h.apply(req, g.Name, &p, ng, "an instance was started in response to a difference between desired and actual capacity")
			}
			h.recordActivities(req, g.Name, []awsActivity{act}, false)
		}
		out.Instances = append(out.Instances, awsapi.InstanceStateChange{InstanceID: id, CurrentState: ec2State(core.StateDeleting), PreviousState: prev})
	}
	h.writeResult(w, req, out)
}
