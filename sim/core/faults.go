package core

import (
	"time"
)

// Faults are the fault injection switches of a Server. They apply to every
// face's cloud API requests (not to admin endpoints), at the wire: a faulted
// request never reaches the core. Rates are probabilities in [0, 1], drawn
// from the cloud's seeded random numbers.
type Faults struct {
	// ThrottleRate is the share of requests throttled, answered in the
	// face's shape (Face.WriteFault; the local face: 429 Too Many Requests
	// with a Retry-After header).
	ThrottleRate float64
	// RetryAfter is the Retry-After of throttled responses (default 1s;
	// rounded up to whole seconds on the wire).
	RetryAfter time.Duration
	// ErrorRate is the share of requests answered with a 5xx (in the face's
	// shape).
	ErrorRate float64
	// Latency is added to every request.
	Latency time.Duration
}

// Validate reports whether the switches are in range.
func (f Faults) Validate() error {
	if f.ThrottleRate < 0 || f.ThrottleRate > 1 || f.ErrorRate < 0 || f.ErrorRate > 1 {
		return Invalidf("fault rates must be within [0, 1]")
	}
	if f.RetryAfter < 0 || f.Latency < 0 {
		return Invalidf("fault durations must not be negative")
	}
	return nil
}
