package server

import (
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/mpool-dev/mpool/sim/core"
	"k8s.io/utils/clock"
)

// Stats are request counters by face, operation and status code.
type Stats struct {
	// Requests are sorted by face, operation, then status.
	Requests []RequestCount
}

// RequestCount is the number of requests of one operation of one face
// answered with one status code.
type RequestCount struct {
	// Face is the name of the face that served the requests.
	Face      string
	Operation string
	Status    int
	Count     int64
}

// Count returns the number of requests of op (all faces, all statuses).
func (s Stats) Count(op string) int64 {
	return s.sum(func(r RequestCount) bool { return r.Operation == op })
}

// CountStatus returns the number of requests of op (all faces) answered
// with status.
func (s Stats) CountStatus(op string, status int) int64 {
	return s.sum(func(r RequestCount) bool { return r.Operation == op && r.Status == status })
}

// CountFace returns the number of requests of op served by face (all
// statuses).
func (s Stats) CountFace(face, op string) int64 {
	return s.sum(func(r RequestCount) bool { return r.Face == face && r.Operation == op })
}

// Total returns the number of requests counted.
func (s Stats) Total() int64 { return s.sum(func(RequestCount) bool { return true }) }

// sum is the number of requests of the counters ok accepts.
func (s Stats) sum(ok func(RequestCount) bool) int64 {
	var n int64
	for _, r := range s.Requests {
		if ok(r) {
			n += r.Count
		}
	}
	return n
}

type statKey struct {
	face   string
	op     string
	status int
}

// injector counts requests and injects faults; faces wrap their handlers
// with it (FaceEnv.Wrap).
type injector struct {
	clock clock.WithTicker

	mu     sync.Mutex
	faults core.Faults
	// faceFaults replace faults for one face's requests.
	faceFaults map[string]core.Faults
	rng        *rand.Rand
	stats      map[statKey]int64
}

func newInjector(clk clock.WithTicker, seed uint64, f core.Faults) *injector {
	return &injector{clock: clk, faults: f, faceFaults: map[string]core.Faults{}, rng: rand.New(rand.NewPCG(seed^0x5eed, seed)), stats: map[statKey]int64{}}
}

func (in *injector) set(f core.Faults) error {
	if err := f.Validate(); err != nil {
		return err
	}
	in.mu.Lock()
	in.faults = f
	in.mu.Unlock()
	return nil
}

func (in *injector) get() core.Faults {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.faults
}

func (in *injector) snapshot() Stats {
	in.mu.Lock()
	defer in.mu.Unlock()
	s := Stats{Requests: make([]RequestCount, 0, len(in.stats))}
	for k, v := range in.stats {
		s.Requests = append(s.Requests, RequestCount{Face: k.face, Operation: k.op, Status: k.status, Count: v})
	}
	sort.Slice(s.Requests, func(i, j int) bool {
		a, b := s.Requests[i], s.Requests[j]
		if a.Face != b.Face {
			return a.Face < b.Face
		}
		if a.Operation != b.Operation {
			return a.Operation < b.Operation
		}
		return a.Status < b.Status
	})
	return s
}

func (in *injector) reset() {
	in.mu.Lock()
	in.stats = map[statKey]int64{}
	in.mu.Unlock()
}

func (in *injector) count(face, op string, status int) {
	in.mu.Lock()
	in.stats[statKey{face, op, status}]++
	in.mu.Unlock()
}

// decision is what the injector does to one request.
type decision struct {
	latency    time.Duration
	throttle   bool
	retryAfter time.Duration
	errStatus  int
}

// setFace sets face's own switches; nil returns it to the cloud-wide ones.
func (in *injector) setFace(face string, f *core.Faults) error {
	if f != nil {
		if err := f.Validate(); err != nil {
			return err
		}
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if f == nil {
		delete(in.faceFaults, face)
	} else {
		in.faceFaults[face] = *f
	}
	return nil
}

// getFace returns face's own switches, or nil.
func (in *injector) getFace(face string) *core.Faults {
	in.mu.Lock()
	defer in.mu.Unlock()
	if f, ok := in.faceFaults[face]; ok {
		return &f
	}
	return nil
}

func (in *injector) decide(face string) decision {
	in.mu.Lock()
	defer in.mu.Unlock()
	f, ok := in.faceFaults[face]
	if !ok {
		f = in.faults
	}
	d := decision{latency: f.Latency}
	if f.ThrottleRate > 0 && in.rng.Float64() < f.ThrottleRate {
		d.throttle = true
		d.retryAfter = f.RetryAfter
		if d.retryAfter <= 0 {
			d.retryAfter = time.Second
		}
		return d
	}
	if f.ErrorRate > 0 && in.rng.Float64() < f.ErrorRate {
		d.errStatus = []int{http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable}[in.rng.IntN(3)]
	}
	return d
}

// wrap counts op's requests of face by final status and injects faults
// before h, answered by face.WriteFault.
func (in *injector) wrap(face core.Face, op string, h http.HandlerFunc) http.HandlerFunc {
	name := face.Name()
	return func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		defer func() { in.count(name, op, rec.status) }()
		d := in.decide(name)
		if d.latency > 0 {
			t := in.clock.NewTimer(d.latency)
			select {
			case <-t.C():
			case <-r.Context().Done():
				t.Stop()
				rec.status = 499 // client closed request
				return
			}
		}
		switch {
		case d.throttle:
			secs := max(1, int(math.Ceil(d.retryAfter.Seconds())))
			face.WriteFault(rec, r, core.Fault{
				Kind:       core.FaultThrottle,
				Status:     http.StatusTooManyRequests,
				RetryAfter: time.Duration(secs) * time.Second,
				Message:    fmt.Sprintf("Rate limit exceeded (simulated); retry after %ds", secs),
			})
		case d.errStatus != 0:
			face.WriteFault(rec, r, core.Fault{Kind: core.FaultServerError, Status: d.errStatus, Message: "Simulated server error"})
		default:
			h(rec, r)
		}
	}
}

type statusRecorder struct {
	http.ResponseWriter
	status      int
	wroteHeader bool
}

func (s *statusRecorder) WriteHeader(code int) {
	if !s.wroteHeader {
		s.status, s.wroteHeader = code, true
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	s.wroteHeader = true
	return s.ResponseWriter.Write(b)
}
