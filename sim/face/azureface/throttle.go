package azureface

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/mpool-dev/mpool/sim/core"

	"github.com/mpool-dev/mpool/sim/wire/azureapi"
)

// Azure's documented request budgets, for AzureFace's budgets (which are
// off unless set): ARM's per-subscription token buckets (reads 250 refilled
// 25/s, writes 200 refilled 10/s) and Compute's per-resource example (12
// updates, refilled 4 per minute).
var (
	AzureSubscriptionReads  = core.Budget{Burst: 250, PerSecond: 25}
	AzureSubscriptionWrites = core.Budget{Burst: 200, PerSecond: 10}
	AzureScaleSetWrites     = core.Budget{Burst: 12, PerSecond: 4.0 / 60}
)

// throttle applies the face's budgets to an authorized ARM request and
// answers 429 when one is exhausted; it sets the remaining-requests
// headers either way.
func (h *azureHandler) throttle(w http.ResponseWriter, r *http.Request) bool {
	f := h.face
	sub := r.PathValue("sub")
	now := h.env.Cloud.Clock().Now()
	read := r.Method == http.MethodGet || r.Method == http.MethodHead
	kind, budget := "reads", f.SubscriptionReads
	if !read {
		kind, budget = "writes", f.SubscriptionWrites
	}
	header := "x-ms-ratelimit-remaining-subscription-" + kind
	remaining := map[bool]int{true: 16499, false: 1199}[read]
	var wait time.Duration
	if budget.On() {
		remaining, wait = h.buckets.Take("sub/"+kind+"/"+sub, budget, now)
	}
	w.Header().Set(header, strconv.Itoa(remaining))
	if wait == 0 && !read && r.PathValue("vmss") != "" && f.ScaleSetWrites.On() {
		key := "vmss/" + azureScope(sub, r.PathValue("rg")) + "/" + groupName(r.PathValue("vmss"))
		var left int
		left, wait = h.buckets.Take(key, f.ScaleSetWrites, now)
		w.Header().Set("x-ms-ratelimit-remaining-resource", fmt.Sprintf("Microsoft.Compute/VMScaleSetWrites;%d", left))
	}
	if wait == 0 {
		return true
	}
	secs := max(1, int(math.Ceil(wait.Seconds())))
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	writeARMError(w, http.StatusTooManyRequests, azureapi.CodeTooManyRequests, fmt.Sprintf(
		"The request is being throttled as the limit has been reached for operation type - %s. Please retry after %d seconds.", kind, secs))
	return false
}
