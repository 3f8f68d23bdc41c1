package core

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/mpool-dev/mpool/sim/wire/azureapi"
)

// AzureBudget is a token bucket of ARM requests: Burst requests at once,
// refilled at PerSecond. The zero value is unlimited.
type AzureBudget struct {
	Burst     int
	PerSecond float64
}

// Azure's documented request budgets, for AzureFace's budgets (which are
// off unless set): ARM's per-subscription token buckets (reads 250 refilled
// 25/s, writes 200 refilled 10/s) and Compute's per-resource example (12
// updates, refilled 4 per minute).
var (
	AzureSubscriptionReads  = AzureBudget{Burst: 250, PerSecond: 25}
	AzureSubscriptionWrites = AzureBudget{Burst: 200, PerSecond: 10}
	AzureScaleSetWrites     = AzureBudget{Burst: 12, PerSecond: 4.0 / 60}
)

func (b AzureBudget) on() bool { return b.Burst > 0 && b.PerSecond > 0 }

// bucket is one token bucket's state.
type bucket struct {
	tokens float64
	at     time.Time
}

// azureBuckets holds the face's buckets; they are not persisted (a
// restarted cloud starts with full buckets).
type azureBuckets struct {
	mu sync.Mutex
	m  map[string]*bucket
}

// take takes a token from the bucket key of budget b at now: the tokens
// left, or how long until one is available.
func (z *azureBuckets) take(key string, b AzureBudget, now time.Time) (int, time.Duration) {
	z.mu.Lock()
	defer z.mu.Unlock()
	if z.m == nil {
		z.m = map[string]*bucket{}
	}
	bk := z.m[key]
	if bk == nil {
		bk = &bucket{tokens: float64(b.Burst), at: now}
		z.m[key] = bk
	}
	if d := now.Sub(bk.at); d > 0 {
		bk.tokens = math.Min(float64(b.Burst), bk.tokens+d.Seconds()*b.PerSecond)
		bk.at = now
	}
	if bk.tokens < 1 {
		wait := time.Duration((1 - bk.tokens) / b.PerSecond * float64(time.Second))
		return 0, wait
	}
	bk.tokens--
	return int(bk.tokens), 0
}

// throttle applies the face's budgets to an authorized ARM request and
// answers 429 when one is exhausted; it sets the remaining-requests
// headers either way.
func (h *azureHandler) throttle(w http.ResponseWriter, r *http.Request) bool {
	f := h.face
	sub := r.PathValue("sub")
	now := h.env.Cloud.clock.Now()
	read := r.Method == http.MethodGet || r.Method == http.MethodHead
	kind, budget := "reads", f.SubscriptionReads
	if !read {
		kind, budget = "writes", f.SubscriptionWrites
	}
	header := "x-ms-ratelimit-remaining-subscription-" + kind
	remaining := map[bool]int{true: 16499, false: 1199}[read]
	var wait time.Duration
	if budget.on() {
		remaining, wait = h.buckets.take("sub/"+kind+"/"+sub, budget, now)
	}
	w.Header().Set(header, strconv.Itoa(remaining))
	if wait == 0 && !read && r.PathValue("vmss") != "" && f.ScaleSetWrites.on() {
		key := "vmss/" + azureScope(sub, r.PathValue("rg")) + "/" + groupName(r.PathValue("vmss"))
		var left int
		left, wait = h.buckets.take(key, f.ScaleSetWrites, now)
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
