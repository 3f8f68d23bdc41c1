package awsface

import (
	"fmt"
	"iter"
	"net/http"
	"slices"

	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/wire/awsapi"
)

// ec2State is an instance's EC2 state: pending while it is created or
// boots, running once booted (a failed boot too: EC2 would report a failed
// status check), shutting-down while it terminates.
func ec2State(s core.InstanceState) awsapi.InstanceState {
	switch s {
	case core.StateCreating, core.StateBooting:
		return awsapi.InstanceState{Code: 0, Name: "pending"}
	case core.StateDeleting:
		return awsapi.InstanceState{Code: 32, Name: "shutting-down"}
	}
	return awsapi.InstanceState{Code: 16, Name: "running"}
}

// describeInstances serves DescribeInstances: the instances of the scope's
// Auto Scaling groups, one reservation each, by InstanceId.N and the
// filters instance-id, instance-state-name, instance-type, image-id,
// availability-zone, subnet-id, vpc-id, private-dns-name, tag:<key> and
// tag-key; paged by MaxResults (5 to 1000) and NextToken.
func (h *awsHandler) describeInstances(w http.ResponseWriter, r *http.Request) {
	req := awsReq(r)
	ids := qList(req.form, "InstanceId")
	if len(ids) > 0 && qHas(req.form, "MaxResults") {
		h.writeError(w, req, http.StatusBadRequest, awsapi.CodeInvalidParameterCombination, "The parameter instancesSet cannot be used with the parameter maxResults")
		return
	}
	if !h.validInstanceIDs(w, req, ids) {
		return
	}
	f := ec2Filters(req)
	sc := h.scope(req)
	templates := h.templates(AWSScope(req.account, req.region))
	found := map[string]bool{}
	var res []awsapi.Reservation
	for g := range scopeGroups(sc) {
		for _, in := range g.Instances {
			if len(ids) > 0 && !slices.Contains(ids, in.ID) {
				continue
			}
			found[in.ID] = true
			ip := readAWSInstance(in)
			st := ec2State(in.State)
			inst := awsapi.EC2Instance{
				InstanceID: in.ID, ImageID: ip.ImageID, InstanceState: st, PrivateDNSName: in.Hostname, KeyName: ip.KeyName,
				InstanceType: ip.InstanceType, LaunchTime: AWSTime(in.CreatedAt), Placement: awsapi.Placement{AvailabilityZone: in.Zone, Tenancy: "default"},
				SubnetID: ip.SubnetID, VpcID: ip.VpcID, PrivateIPAddress: in.PrivateIP, Architecture: "x86_64", RootDeviceType: "ebs",
				RootDeviceName: "/dev/sda1", VirtualizationType: "hvm", Hypervisor: "xen", Tags: ip.Tags,
				MetadataOptions: instanceMetadataOptions(launchData(templates, ip)),
			}
			if ip.Spot {
				inst.InstanceLifecycle = "spot"
			}
			if !f.match("instance-id", in.ID) || !f.match("instance-state-name", st.Name) || !f.match("instance-type", ip.InstanceType) ||
				!f.match("image-id", ip.ImageID) || !f.match("availability-zone", in.Zone) || !f.match("subnet-id", ip.SubnetID) ||
				!f.match("vpc-id", ip.VpcID) || !f.match("private-dns-name", in.Hostname) || !f.matchTags(ip.Tags) {
				continue
			}
			res = append(res, awsapi.Reservation{ReservationID: "r-" + AWSHex(17, "reservation", in.ID), OwnerID: req.account,
				RequesterID: "940372691376", Instances: []awsapi.EC2Instance{inst}})
		}
	}
	for _, id := range ids {
		if !found[id] {
			h.writeError(w, req, http.StatusBadRequest, awsapi.CodeInvalidInstanceIDNF, fmt.Sprintf("The instance ID '%s' does not exist", id))
			return
		}
	}
	page, next, err := ec2Page(req, res, 5, 1000)
	h.reply(w, req, &awsapi.DescribeInstancesResponse{Reservations: page, NextToken: next}, err)
}

// instanceGroup returns the group of the scope's instance id and the
// instance, or nil.
func (h *awsHandler) instanceGroup(req *awsRequest, id string) (*core.Group, *core.Instance) {
	for g := range scopeGroups(h.scope(req)) {
		if in := findInstance(g, id); in != nil {
			return g, in
		}
	}
	return nil, nil
}

// scopeGroups yields the Auto Scaling groups of sc that can be read.
func scopeGroups(sc core.Scope) iter.Seq[*core.Group] {
	return func(yield func(*core.Group) bool) {
		for _, n := range sc.ListGroups() {
			if g, err := sc.GetGroup(n); err == nil && !yield(g) {
				return
			}
		}
	}
}

// validInstanceIDs answers InvalidInstanceID.Malformed and is false when
// one of ids is not an instance ID.
func (h *awsHandler) validInstanceIDs(w http.ResponseWriter, req *awsRequest, ids []string) bool {
	for _, id := range ids {
		if !awsIDRE("i").MatchString(id) {
			h.writeError(w, req, http.StatusBadRequest, awsapi.CodeInvalidInstanceIDMal, fmt.Sprintf("Invalid id: %q", id))
			return false
		}
	}
	return true
}

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
	if !h.validInstanceIDs(w, req, ids) {
		return
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
