package eksface

import (
	"net/http"

	"github.com/mpool-dev/mpool/sim/core"
)

// EKSDefaultBudget is the request budget `mpool cloud --eks-throttle`
// gives the EKS face (EKSFace.Budget): EKS publishes no figures for its
// API's rate limits, so the simulation chooses a token bucket of 50
// requests refilled at 10 a second per account and region, shared by all
// of EKS's actions.
var EKSDefaultBudget = core.Budget{Burst: 50, PerSecond: 10}

// throttle applies the face's budget (EKSFace.Budget) to an authenticated
// request: an exhausted bucket answers EKS's ThrottlingException, HTTP
// 429 with the X-Amzn-ErrorType header, as the SDKs' retryers expect.
func (h *eksHandler) throttle(w http.ResponseWriter, req *eksRequest) bool {
	b := h.face.Budget
	if !b.On() {
		return true
	}
	_, wait := h.face.buckets.Take(req.account+"/"+req.region, b, h.env.Cloud.Clock().Now())
	if wait == 0 {
		return true
	}
	writeEKSError(w, req, http.StatusTooManyRequests, EKSCodeThrottling, "Rate exceeded")
	return false
}
