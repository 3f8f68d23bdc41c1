package awsface

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/mpool-dev/mpool/sim/core"

	"github.com/mpool-dev/mpool/sim/wire/awsapi"
)

// AWSBudgets are the AWS face's request budgets: token buckets per
// account, region and action (EC2's request rate limiting evaluates each
// API on its own), by the action's category.
type AWSBudgets struct {
	// EC2NonMutating: EC2's Describe* actions.
	EC2NonMutating core.Budget
	// EC2Unfiltered: DescribeInstances without instance IDs, filters or
	// MaxResults (EC2's "unfiltered and unpaginated non-mutating").
	EC2Unfiltered core.Budget
	// EC2Mutating: EC2's other actions.
	EC2Mutating core.Budget
	// AutoScalingReads and AutoScalingWrites: Auto Scaling's Describe*
	// actions and its others.
	AutoScalingReads, AutoScalingWrites core.Budget
}

// AWS's request budgets, for AWSFace.Budgets (off unless set): EC2's
// documented request token buckets (non-mutating actions 100 refilled 20/s;
// unfiltered and unpaginated non-mutating 50 refilled 10/s; mutating 200
// refilled 5/s). Auto Scaling documents no figures: the simulation chooses
// 50 refilled 10/s for Describe* and 20 refilled 2/s for the others.
var (
	AWSEC2Budgets = AWSBudgets{
		EC2NonMutating: core.Budget{Burst: 100, PerSecond: 20},
		EC2Unfiltered:  core.Budget{Burst: 50, PerSecond: 10},
		EC2Mutating:    core.Budget{Burst: 200, PerSecond: 5},
	}
	AWSAutoScalingBudgets = AWSBudgets{
		AutoScalingReads:  core.Budget{Burst: 50, PerSecond: 10},
		AutoScalingWrites: core.Budget{Burst: 20, PerSecond: 2},
	}
	// AWSDefaultBudgets are both services' figures together.
	AWSDefaultBudgets = AWSBudgets{
		EC2NonMutating: AWSEC2Budgets.EC2NonMutating, EC2Unfiltered: AWSEC2Budgets.EC2Unfiltered, EC2Mutating: AWSEC2Budgets.EC2Mutating,
		AutoScalingReads: AWSAutoScalingBudgets.AutoScalingReads, AutoScalingWrites: AWSAutoScalingBudgets.AutoScalingWrites,
	}
)

// throttle applies the face's budgets to an authenticated request: an
// exhausted bucket answers EC2's 503 RequestLimitExceeded or Auto Scaling's
// 400 Throttling.
func (h *awsHandler) throttle(w http.ResponseWriter, req *awsRequest) bool {
	b := h.face.Budgets
	read := strings.HasPrefix(req.action, "Describe")
	var budget core.Budget
	switch {
	case req.service == awsapi.ServiceEC2 && req.action == "DescribeInstances" && !qHas(req.form, "InstanceId") && !qHas(req.form, "Filter") && !qHas(req.form, "MaxResults"):
		budget = b.EC2Unfiltered
	case req.service == awsapi.ServiceEC2 && read:
		budget = b.EC2NonMutating
	case req.service == awsapi.ServiceEC2:
		budget = b.EC2Mutating
	case read:
		budget = b.AutoScalingReads
	default:
		budget = b.AutoScalingWrites
	}
	if !budget.On() {
		return true
	}
	key := fmt.Sprintf("%s/%s/%s/%s", req.account, req.region, req.service, req.action)
	if _, wait := h.face.buckets.Take(key, budget, h.env.Cloud.Clock().Now()); wait == 0 {
		return true
	}
	if req.service == awsapi.ServiceEC2 {
		h.writeError(w, req, http.StatusServiceUnavailable, awsapi.CodeRequestLimitExceeded, "Request limit exceeded.")
	} else {
		h.writeError(w, req, http.StatusBadRequest, awsapi.CodeThrottling, "Rate exceeded")
	}
	return false
}
