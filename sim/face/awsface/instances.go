package awsface

import (
	"fmt"
	"net/http"

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
	for _, id := range ids {
		if !awsIDRE("i").MatchString(id) {
			h.writeError(w, req, http.StatusBadRequest, awsapi.CodeInvalidInstanceIDMal, fmt.Sprintf("Invalid id: %q", id))
			return
		}
	}
	f := ec2Filters(req)
	sc := h.scope(req)
	templates := h.templates(AWSScope(req.account, req.region))
	found := map[string]bool{}
	var res []awsapi.Reservation
	for _, n := range sc.ListGroups() {
		g, err := sc.GetGroup(n)
		if err != nil {
			continue
		}
		for _, in := range g.Instances {
			if len(ids) > 0 && !containsStr(ids, in.ID) {
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
	if err != nil {
		h.writeAWSError(w, req, err)
		return
	}
	h.writeResult(w, req, &awsapi.DescribeInstancesResponse{Reservations: page, NextToken: next})
}
