package metrics

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// The ScaleGroup call decorator: metrics and counters around any provider's
// scalegroup.ScaleGroup, applied by the provider registry, so that no
// provider counts its own calls.

// Operation names used as the "operation" metric label and in Counts.
const (
	OpGet             = "Get"
	OpApply           = "Apply"
	OpDeleteInstances = "DeleteInstances"
	// OpReplaceInstances is scalegroup.Replacer's call.
	OpReplaceInstances = "ReplaceInstances"
	OpDelete           = "Delete"
)

// Result label values.
const (
	ResultSuccess = "success"
	// ResultError labels unclassified errors. Classified ones are labelled
	// with their Reason in snake case: "not_found", "throttled",
	// "quota_exceeded", "transient", "invalid".
	ResultError = "error"
)

var (
	// RequestsTotal counts ScaleGroup calls by provider, operation and result.
	RequestsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "mpool",
		Subsystem: "scalegroup",
		Name:      "requests_total",
		Help:      "ScaleGroup calls by provider, operation and result.",
	}, []string{"provider", "operation", "result"})

	// RequestDuration observes ScaleGroup call latency by provider and
	// operation.
	RequestDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: "mpool",
		Subsystem: "scalegroup",
		Name:      "request_duration_seconds",
		Help:      "ScaleGroup call latency by provider and operation.",
		Buckets:   prometheus.ExponentialBuckets(0.001, 2, 16),
	}, []string{"provider", "operation"})

	// RetryAfterSeconds observes the waits the cloud asked for (Retry-After on a
	// throttled or busy response), by provider, operation and result. Its
	// count is the number of calls that came back with a wait; throttled
	// calls are counted, with or without one, by RequestsTotal's result
	// "throttled".
	RetryAfterSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: "mpool",
		Subsystem: "scalegroup",
		Name:      "retry_after_seconds",
		Help:      "Waits the cloud asked for before a retry (Retry-After of throttled or busy ScaleGroup calls), by provider, operation and result.",
		Buckets:   prometheus.ExponentialBuckets(0.5, 2, 10),
	}, []string{"provider", "operation", "result"})
)

// RegisterScaleGroupMetrics registers the ScaleGroup call metrics with reg
// (the manager's registry): the manager calls it once at start-up. A
// registry that has them already is fine.
func RegisterScaleGroupMetrics(reg prometheus.Registerer) error {
	for _, c := range []prometheus.Collector{RequestsTotal, RequestDuration, RetryAfterSeconds} {
		if err := reg.Register(c); err != nil {
			var are prometheus.AlreadyRegisteredError
			if !errors.As(err, &are) {
				return fmt.Errorf("registering the ScaleGroup metrics: %w", err)
			}
		}
	}
	return nil
}

// Instrumented is a scalegroup.ScaleGroup that counts and times the calls it forwards.
// Besides the Prometheus metrics (shared by every Instrumented in the
// process), it keeps its own counters, read with Counts, for tests and
// benchmarks.
type Instrumented struct {
	next     scalegroup.ScaleGroup
	provider string

	mu     sync.Mutex
	counts map[countKey]int64
}

type countKey struct{ op, result string }

var (
	_ scalegroup.ScaleGroup = (*Instrumented)(nil)
	_ scalegroup.Replacer   = (*Instrumented)(nil)
)

// WithMetrics wraps sg so that every call is counted by operation and result
// and timed, labelled with provider ("azure", "aws", "local", ...).
func WithMetrics(sg scalegroup.ScaleGroup, provider string) *Instrumented {
	return &Instrumented{next: sg, provider: provider, counts: map[countKey]int64{}}
}

// Get implements scalegroup.ScaleGroup.
func (m *Instrumented) Get(ctx context.Context, ref scalegroup.Ref) (*scalegroup.Group, error) {
	start := time.Now()
	g, err := m.next.Get(ctx, ref)
	m.observe(OpGet, start, err)
	return g, err
}

// Apply implements scalegroup.ScaleGroup.
func (m *Instrumented) Apply(ctx context.Context, ref scalegroup.Ref, spec scalegroup.GroupSpec) (*scalegroup.Group, error) {
	start := time.Now()
	g, err := m.next.Apply(ctx, ref, spec)
	m.observe(OpApply, start, err)
	return g, err
}

// DeleteInstances implements scalegroup.ScaleGroup.
func (m *Instrumented) DeleteInstances(ctx context.Context, ref scalegroup.Ref, ids []string) error {
	start := time.Now()
	err := m.next.DeleteInstances(ctx, ref, ids)
	m.observe(OpDeleteInstances, start, err)
	return err
}

// ReplaceInstances implements scalegroup.Replacer by forwarding to the
// wrapped group, which refuses (Invalid) when it is no Replacer.
func (m *Instrumented) ReplaceInstances(ctx context.Context, ref scalegroup.Ref, ids []string) error {
	start := time.Now()
	var err error
	if r, ok := m.next.(scalegroup.Replacer); ok {
		err = r.ReplaceInstances(ctx, ref, ids)
	} else {
		err = scalegroup.NewInvalid(fmt.Sprintf("scale group %s cannot replace chosen instances", ref))
	}
	m.observe(OpReplaceInstances, start, err)
	return err
}

// Capabilities implements scalegroup.ScaleGroup: the wrapped group's, so
// that the decorator hides nothing the engine branches on.
func (m *Instrumented) Capabilities() scalegroup.Capabilities { return m.next.Capabilities() }

// Delete implements scalegroup.ScaleGroup.
func (m *Instrumented) Delete(ctx context.Context, ref scalegroup.Ref) error {
	start := time.Now()
	err := m.next.Delete(ctx, ref)
	m.observe(OpDelete, start, err)
	return err
}

// observe records one call. Latency is measured with the wall clock on
// purpose: it is a metric of real I/O, not logic.
func (m *Instrumented) observe(op string, start time.Time, err error) {
	result := resultLabel(err)
	RequestsTotal.WithLabelValues(m.provider, op, result).Inc()
	RequestDuration.WithLabelValues(m.provider, op).Observe(time.Since(start).Seconds())
	if wait := scalegroup.RetryAfter(err); wait > 0 {
		RetryAfterSeconds.WithLabelValues(m.provider, op, result).Observe(wait.Seconds())
	}
	m.mu.Lock()
	m.counts[countKey{op, result}]++
	m.mu.Unlock()
}

func resultLabel(err error) string {
	if err == nil {
		return ResultSuccess
	}
	switch r := scalegroup.ReasonOf(err); r {
	case scalegroup.ReasonNotFound:
		return "not_found"
	case scalegroup.ReasonThrottled:
		return "throttled"
	case scalegroup.ReasonQuotaExceeded:
		return "quota_exceeded"
	case scalegroup.ReasonTransient:
		return "transient"
	case scalegroup.ReasonInvalid:
		return "invalid"
	default:
		return ResultError
	}
}

// Counts is a snapshot of an Instrumented's call counters.
type Counts map[string]map[string]int64

// Total returns the number of calls of operation op, whatever their result.
func (c Counts) Total(op string) int64 {
	var n int64
	for _, v := range c[op] {
		n += v
	}
	return n
}

// Reads returns the number of Get calls.
func (c Counts) Reads() int64 { return c.Total(OpGet) }

// Writes returns the number of Apply, DeleteInstances and Delete calls.
func (c Counts) Writes() int64 {
	return c.Total(OpApply) + c.Total(OpDeleteInstances) + c.Total(OpDelete)
}

// Counts returns the calls made through m so far: operation → result → count.
func (m *Instrumented) Counts() Counts {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := Counts{}
	for k, v := range m.counts {
		if out[k.op] == nil {
			out[k.op] = map[string]int64{}
		}
		out[k.op][k.result] = v
	}
	return out
}

// ResetCounts sets m's own counters to zero (the Prometheus metrics are
// cumulative and are not reset).
func (m *Instrumented) ResetCounts() {
	m.mu.Lock()
	m.counts = map[countKey]int64{}
	m.mu.Unlock()
}
