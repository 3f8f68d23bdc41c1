package scalegroup

import (
	"errors"
	"fmt"
	"time"
)

// Reason classifies a ScaleGroup error.
type Reason string

// Error reasons.
const (
	// ReasonNotFound: the group does not exist.
	ReasonNotFound Reason = "NotFound"
	// ReasonThrottled: the cloud rate-limited the request; retry after
	// Error.RetryAfter.
	ReasonThrottled Reason = "Throttled"
	// ReasonQuotaExceeded: the cloud cannot grant the requested capacity.
	// Retrying the same request will fail until quota is freed or raised.
	ReasonQuotaExceeded Reason = "QuotaExceeded"
	// ReasonTransient: a server error, a timeout or a conflicting operation in
	// progress; retrying with backoff is expected to succeed.
	ReasonTransient Reason = "Transient"
	// ReasonInvalid: the cloud rejected the request as malformed; retrying
	// the same request cannot succeed.
	ReasonInvalid Reason = "Invalid"
	// ReasonUnauthorized: the cloud refused the credentials (unknown client,
	// wrong or expired secret, no access to the scope). Retrying succeeds
	// once someone fixes the identity, so callers retry slowly.
	ReasonUnauthorized Reason = "Unauthorized"
)

// Error is a classified ScaleGroup error. Providers return it (possibly
// wrapped); callers test it with the IsX helpers.
type Error struct {
	// Reason classifies the error.
	Reason Reason
	// Message is the cloud's explanation.
	Message string
	// RetryAfter is how long the cloud asked the caller to wait, when it said
	// so (throttling, some server errors); zero otherwise.
	RetryAfter time.Duration
	// Err is the underlying error, if any.
	Err error
}

// Error implements error.
func (e *Error) Error() string {
	msg := string(e.Reason)
	if e.Message != "" {
		msg += ": " + e.Message
	}
	if e.RetryAfter > 0 {
		msg += fmt.Sprintf(" (retry after %s)", e.RetryAfter)
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// NewNotFound returns a NotFound error for group name.
func NewNotFound(name string) error {
	return &Error{Reason: ReasonNotFound, Message: fmt.Sprintf("scale group %q not found", name)}
}

// NewThrottled returns a Throttled error asking to retry after retryAfter.
func NewThrottled(message string, retryAfter time.Duration) error {
	return &Error{Reason: ReasonThrottled, Message: message, RetryAfter: retryAfter}
}

// NewQuotaExceeded returns a QuotaExceeded error.
func NewQuotaExceeded(message string) error {
	return &Error{Reason: ReasonQuotaExceeded, Message: message}
}

// NewTransient returns a Transient error wrapping err (which may be nil).
func NewTransient(message string, err error) error {
	return &Error{Reason: ReasonTransient, Message: message, Err: err}
}

// NewInvalid returns an Invalid error.
func NewInvalid(message string) error {
	return &Error{Reason: ReasonInvalid, Message: message}
}

// NewUnauthorized returns an Unauthorized error.
func NewUnauthorized(message string, err error) error {
	return &Error{Reason: ReasonUnauthorized, Message: message, Err: err}
}

// ReasonOf returns the reason of a classified error in err's chain, and ""
// for nil or unclassified errors.
func ReasonOf(err error) Reason {
	var e *Error
	if errors.As(err, &e) {
		return e.Reason
	}
	return ""
}

// IsNotFound reports whether err says the group does not exist.
func IsNotFound(err error) bool { return ReasonOf(err) == ReasonNotFound }

// IsThrottled reports whether err is a throttling error and, if so, how long
// the cloud asked to wait (zero when it did not say).
func IsThrottled(err error) (retryAfter time.Duration, ok bool) {
	var e *Error
	if errors.As(err, &e) && e.Reason == ReasonThrottled {
		return e.RetryAfter, true
	}
	return 0, false
}

// IsQuotaExceeded reports whether err says the requested capacity exceeds
// the cloud's quota.
func IsQuotaExceeded(err error) bool { return ReasonOf(err) == ReasonQuotaExceeded }

// IsTransient reports whether err is a retryable server-side or network
// failure (not throttling, which IsThrottled reports).
func IsTransient(err error) bool { return ReasonOf(err) == ReasonTransient }

// IsInvalid reports whether the cloud rejected the request as invalid.
func IsInvalid(err error) bool { return ReasonOf(err) == ReasonInvalid }

// IsUnauthorized reports whether the cloud refused the credentials.
func IsUnauthorized(err error) bool { return ReasonOf(err) == ReasonUnauthorized }

// RetryAfter returns how long the cloud asked the caller to wait before
// retrying, or zero.
func RetryAfter(err error) time.Duration {
	var e *Error
	if errors.As(err, &e) {
		return e.RetryAfter
	}
	return 0
}
