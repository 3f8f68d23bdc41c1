package cloudsim

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// Server is the simulated cloud served over HTTP on loopback: the core
// (Cloud), its faces, the admin endpoints and the fault injector.
type Server struct {
	cloud    *Cloud
	inj      *injector
	listener net.Listener
	http     *http.Server
	url      string

	serveErr chan error
	stopOnce sync.Once
	stopErr  error
}

// Start starts the simulated cloud: it loads opts.DataDir, starts the
// simulation and the node agent, and serves HTTP on opts.Addr (default
// 127.0.0.1:0, a free port; see URL). Everything stops when ctx is cancelled
// or Stop is called.
func Start(ctx context.Context, opts Options) (*Server, error) {
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.Addr == "" {
		opts.Addr = "127.0.0.1:0"
	}
	if opts.Seed == 0 {
		opts.Seed = rand.Uint64()
	}
	if err := opts.Faults.validate(); err != nil {
		return nil, fmt.Errorf("faults: %w", err)
	}
	cloud, err := NewCloud(ctx, opts)
	if err != nil {
		return nil, err
	}
	lis, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		_ = cloud.Stop()
		return nil, fmt.Errorf("listening on %s: %w", opts.Addr, err)
	}
	s := &Server{
		cloud:    cloud,
		inj:      newInjector(opts.Clock, opts.Seed, opts.Faults),
		listener: lis,
		url:      "http://" + lis.Addr().String(),
		serveErr: make(chan error, 1),
	}
	mux := http.NewServeMux()
	(&localFace{cloud: cloud, inj: s.inj}).register(mux)
	s.registerAdmin(mux)
	s.http = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { s.serveErr <- s.http.Serve(lis) }()
	go func() {
		<-ctx.Done()
		_ = s.Stop()
	}()
	cloud.log.Info("Simulated cloud listening", "url", s.url, "dataDir", opts.DataDir)
	return s, nil
}

// URL is the base URL of the cloud's HTTP API, e.g. http://127.0.0.1:41234.
func (s *Server) URL() string { return s.url }

// Cloud returns the core, for in-process use of the Go API (simulation
// knobs, quota).
func (s *Server) Cloud() *Cloud { return s.cloud }

// SetFaults replaces the fault injection switches.
func (s *Server) SetFaults(f Faults) error { return s.inj.set(f) }

// Faults returns the fault injection switches.
func (s *Server) Faults() Faults { return s.inj.get() }

// Stats returns the request counters by operation and status.
func (s *Server) Stats() Stats { return s.inj.snapshot() }

// ResetStats sets the request counters to zero.
func (s *Server) ResetStats() { s.inj.reset() }

// Stop stops serving, stops the cloud's loops and writes its state. It is
// safe to call more than once.
func (s *Server) Stop() error {
	s.stopOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		err := s.http.Shutdown(ctx)
		if serr := <-s.serveErr; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
			err = errors.Join(err, serr)
		}
		s.stopErr = errors.Join(err, s.cloud.Stop())
	})
	return s.stopErr
}
