package kit

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// RetryAfter parses a response's Retry-After header: delay-seconds, or an
// HTTP date taken relative to the response's Date (both are the cloud's
// clock, so the manager's own clock does not skew it). It returns zero when
// the header is absent, malformed or negative, or when a date comes without
// a Date: the engine's default backoff then applies.
func RetryAfter(h http.Header) time.Duration {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(v); err == nil {
		return max(time.Duration(s)*time.Second, 0)
	}
	at, err := http.ParseTime(v)
	if err != nil {
		return 0
	}
	now, err := http.ParseTime(h.Get("Date"))
	if err != nil {
		return 0
	}
	return max(at.Sub(now), 0)
}
