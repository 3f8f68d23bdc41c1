package core

import (
	"math"
	"sync"
	"time"
)

// Budget is a token bucket of requests, the one throttle every face uses:
// Burst requests at once, refilled at PerSecond. The zero value is
// unlimited.
type Budget struct {
	// Burst is the bucket's size: how many requests may come at once.
	Burst int
	// PerSecond is how many tokens the bucket gains a second.
	PerSecond float64
}

// On reports whether the budget limits anything.
func (b Budget) On() bool { return b.Burst > 0 && b.PerSecond > 0 }

// bucket is one token bucket's state.
type bucket struct {
	tokens float64
	at     time.Time
}

// Buckets holds a face's token buckets by key (a subscription and kind, an
// account, region and action, ...). They are not persisted: a restarted
// cloud starts with full buckets. The zero value is ready to use.
type Buckets struct {
	mu sync.Mutex
	m  map[string]*bucket
}

// Take takes a token from the bucket key of budget b at now: the tokens
// left, or how long until one is available.
func (z *Buckets) Take(key string, b Budget, now time.Time) (int, time.Duration) {
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
