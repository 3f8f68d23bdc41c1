package server

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"github.com/mpool-dev/mpool/sim/face/localface"
	"math/rand/v2"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mpool-dev/mpool/sim/core"
	"k8s.io/utils/clock"
)

// Server is the simulated cloud served over HTTP on loopback: the core
// (Cloud), its faces, the admin endpoints and the fault injector. One
// listener serves the admin endpoints, the local face at its root and every
// other face under /<name>/; Options.FaceAddrs gives faces listeners of
// their own besides.
type Server struct {
	cloud     *core.Cloud
	inj       *injector
	url       string
	endpoints []FaceEndpoint
	servers   []*httpServer
	certs     *cloudCerts
	faces     map[string]core.Face
	// reqs are the requests being served, on every listener.
	reqs *inflight
	// stopGrace is how long Stop lets requests finish (default 5 s).
	stopGrace time.Duration

	stopOnce sync.Once
	stopErr  error
}

// FaceEndpoint is where a face is served.
type FaceEndpoint struct {
	// Face is the face's name.
	Face string
	// URL is the face's base URL (no trailing slash): its own listener's
	// when it has one, else the Server's URL for the local face and
	// URL()/<name> for the others. It is https:// for an HTTPSFace.
	URL string
	// CAFile is the PEM file of the CA that signed the listener's
	// certificate for an HTTPS face served from a data directory (see
	// Server.CA); empty otherwise.
	CAFile string
}

// HTTPSFace is implemented by faces whose clients only speak HTTPS to the
// root of a host: the Azure SDK sends bearer tokens over TLS only, and MSAL
// wants an authority whose path is just the tenant. The Server serves such a
// face on a listener of its own (Options.FaceAddrs, default 127.0.0.1:0),
// with TLS and a certificate for 127.0.0.1, ::1 and localhost signed by the
// cloud's CA (Server.CA, Server.CAFile), besides plain HTTP under /<name>/
// of the Server's listener.
type HTTPSFace interface {
	core.Face

	// HTTPS reports whether the face must be served over HTTPS.
	HTTPS() bool
}

// FaceDescriber is implemented by faces with more to say where the Server
// prints their URL (FaceLines) than their default account (AccountFace,
// which FaceLines prints): the account's scope, say.
type FaceDescriber interface {
	Describe() string
}

// AccountFace is implemented by faces whose cloud has a default account
// (DefaultAccounts): `mpool up` gives it to the provider of the same name
// as the manager's own credentials.
type AccountFace interface {
	core.Face

	// DefaultAccount returns the face's default account.
	DefaultAccount() core.Account
}

// SandboxFace is implemented by faces that put into their cloud, when
// asked (PrepareSandbox), what the project's examples name in it beyond
// the default account: the EKS face the EKS cluster of examples/eks.
type SandboxFace interface {
	core.Face

	// PrepareSandbox creates what the examples name, at Kubernetes
	// version ("" is the face's default), leaving what exists as it is.
	PrepareSandbox(c *core.Cloud, version string) error
}

// ListenerFace is implemented by faces whose clients want the root of a
// host of their own over plain HTTP (the AWS SDKs' BaseEndpoint, which they
// sign the path of): the Server serves such a face on a listener of its own
// (Options.FaceAddrs, default 127.0.0.1:0) besides under /<name>/.
type ListenerFace interface {
	core.Face

	// OwnListener reports whether the face wants a listener of its own.
	OwnListener() bool
}

func wantsListener(f core.Face) bool {
	l, ok := f.(ListenerFace)
	return isHTTPS(f) || ok && l.OwnListener()
}

func isHTTPS(f core.Face) bool {
	h, ok := f.(HTTPSFace)
	return ok && h.HTTPS()
}

// httpServer is one listener and its HTTP server.
type httpServer struct {
	lis      net.Listener
	http     *http.Server
	serveErr chan error
	// tls is set for HTTPS listeners.
	tls *tls.Config
}

// Start starts the simulated cloud: it loads opts.DataDir, starts the
// simulation and the node agent, and serves HTTP on opts.Addr (default
// 127.0.0.1:0, a free port; see URL) and on opts.FaceAddrs. Everything
// stops when ctx is cancelled or Stop is called.
func Start(ctx context.Context, opts core.Options) (*Server, error) {
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.Addr == "" {
		opts.Addr = "127.0.0.1:0"
	}
	if opts.Seed == 0 {
		opts.Seed = rand.Uint64()
	}
	if err := opts.Faults.Validate(); err != nil {
		return nil, fmt.Errorf("faults: %w", err)
	}
	faces := withLocal(opts.Faces)
	opts.Faces = faces
	byName := map[string]core.Face{}
	for _, f := range faces {
		if f != nil {
			byName[f.Name()] = f
		}
	}
	for name := range opts.FaceAddrs {
		if byName[name] == nil {
			return nil, fmt.Errorf("face addresses: no face %q", name)
		}
	}
	cloud, err := core.NewCloud(ctx, opts)
	if err != nil {
		return nil, err
	}
	s := &Server{cloud: cloud, inj: newInjector(opts.Clock, opts.Seed, opts.Faults), faces: byName, reqs: newInflight(), stopGrace: 5 * time.Second}
	fail := func(err error) (*Server, error) {
		for _, hs := range s.servers {
			_ = hs.lis.Close()
		}
		return nil, errors.Join(err, cloud.Stop())
	}

	for _, f := range faces {
		if isHTTPS(f) {
			if s.certs, err = loadOrCreateCerts(opts.DataDir, opts.Clock.Now()); err != nil {
				return fail(fmt.Errorf("the cloud's CA: %w", err))
			}
			break
		}
	}
	mux := http.NewServeMux()
	root, err := listen(opts.Addr, s.reqs.wrap(mux))
	if err != nil {
		return fail(err)
	}
	s.servers = append(s.servers, root)
	s.url = "http://" + root.lis.Addr().String()
	for _, f := range faces {
		name := f.Name()
		base := ""
		if name != core.LocalFace {
			base = "/" + name
		}
		h := f.Handler(s.faceEnv(f, base))
		if base == "" {
			mux.Handle("/", h)
		} else {
			mux.Handle(base+"/", http.StripPrefix(base, h))
		}
		ep := FaceEndpoint{Face: name, URL: s.url + base}
		addr, ok := opts.FaceAddrs[name]
		if !ok && wantsListener(f) {
			addr, ok = "127.0.0.1:0", true
		}
		if ok {
			own, err := listen(addr, s.reqs.wrap(f.Handler(s.faceEnv(f, ""))))
			if err != nil {
				return fail(fmt.Errorf("face %s: %w", name, err))
			}
			s.servers = append(s.servers, own)
			ep.URL = "http://" + own.lis.Addr().String()
			if isHTTPS(f) {
				own.tls = &tls.Config{Certificates: []tls.Certificate{s.certs.serving}, MinVersion: tls.VersionTLS12}
				ep.URL = "https://" + own.lis.Addr().String()
				ep.CAFile = s.certs.caFile
			}
		}
		s.endpoints = append(s.endpoints, ep)
	}
	s.registerAdmin(mux)
	for _, hs := range s.servers {
		if hs.tls != nil {
			hs.http.TLSConfig = hs.tls
			go func() { hs.serveErr <- hs.http.ServeTLS(hs.lis, "", "") }()
			continue
		}
		go func() { hs.serveErr <- hs.http.Serve(hs.lis) }()
	}
	go func() {
		<-ctx.Done()
		_ = s.Stop()
	}()
	for _, ep := range s.endpoints {
		cloud.Log().Info("Simulated cloud listening", "face", ep.Face, "url", ep.URL, "dataDir", opts.DataDir, "caFile", ep.CAFile)
	}
	return s, nil
}

func listen(addr string, h http.Handler) (*httpServer, error) {
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", addr, err)
	}
	return &httpServer{
		lis:      lis,
		http:     &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second},
		serveErr: make(chan error, 1),
	}, nil
}

func (s *Server) faceEnv(f core.Face, base string) core.FaceEnv {
	return core.FaceEnv{
		Cloud:    s.cloud,
		Wrap:     func(op string, h http.HandlerFunc) http.HandlerFunc { return s.inj.wrap(f, op, h) },
		BasePath: base,
		Log:      s.cloud.Log().WithName(f.Name()),
	}
}

// URL is the base URL of the cloud's HTTP API, e.g. http://127.0.0.1:41234:
// the admin endpoints and the local face at its root, the other faces under
// /<name>.
func (s *Server) URL() string { return s.url }

// FaceURL returns the base URL of the named face (see FaceEndpoint), or ""
// when no such face is served.
func (s *Server) FaceURL(face string) string {
	for _, ep := range s.endpoints {
		if ep.Face == face {
			return ep.URL
		}
	}
	return ""
}

// FaceLines describes where each face listens, one line per face, as
// `mpool cloud` and `mpool up` print it: "simulated cloud: local face at
// http://127.0.0.1:8790".
func (s *Server) FaceLines() []string {
	lines := make([]string, len(s.endpoints))
	for i, ep := range s.endpoints {
		lines[i] = fmt.Sprintf("simulated cloud: %s face at %s", ep.Face, ep.URL)
		if ep.CAFile != "" {
			lines[i] += " (CA " + ep.CAFile + ")"
		}
		if a, ok := s.faces[ep.Face].(AccountFace); ok {
			lines[i] += "; " + a.DefaultAccount().String()
		}
		if d, ok := s.faces[ep.Face].(FaceDescriber); ok {
			if more := d.Describe(); more != "" {
				lines[i] += "; " + more
			}
		}
	}
	return lines
}

// DefaultAccounts returns the default account of every face that has one
// (AccountFace), by face name.
func (s *Server) DefaultAccounts() map[string]core.Account {
	out := map[string]core.Account{}
	for _, ep := range s.endpoints {
		if f, ok := s.faces[ep.Face].(AccountFace); ok {
			out[ep.Face] = f.DefaultAccount()
		}
	}
	return out
}

// PrepareSandbox asks every face that can (SandboxFace) to create what the
// project's examples name in its cloud, at Kubernetes version ("" for each
// face's default). It is idempotent: `mpool up` calls it on every start.
func (s *Server) PrepareSandbox(version string) error {
	for _, ep := range s.endpoints {
		if f, ok := s.faces[ep.Face].(SandboxFace); ok {
			if err := f.PrepareSandbox(s.cloud, version); err != nil {
				return fmt.Errorf("face %s: %w", ep.Face, err)
			}
		}
	}
	return nil
}

// CA returns the PEM certificate of the cloud's CA, which signs the
// certificate of its HTTPS listeners (HTTPSFace); nil when no face is served
// over HTTPS. Clients trust it (CertPool) rather than disabling
// verification. It is kept in the data directory (CAFile), so a restarted
// cloud keeps it.
func (s *Server) CA() []byte {
	if s.certs == nil {
		return nil
	}
	return bytes.Clone(s.certs.caPEM)
}

// CAFile returns the path of the CA's PEM file (<DataDir>/ca.crt), or ""
// when the cloud has no data directory or serves no HTTPS face.
func (s *Server) CAFile() string {
	if s.certs == nil {
		return ""
	}
	return s.certs.caFile
}

// FaceEndpoints returns where each face is served: the local face first,
// then Options.Faces in order.
func (s *Server) FaceEndpoints() []FaceEndpoint { return slices.Clone(s.endpoints) }

// Cloud returns the core, for in-process use of the Go API (simulation
// knobs, quota).
func (s *Server) Cloud() *core.Cloud { return s.cloud }

// SetFaults replaces the fault injection switches.
func (s *Server) SetFaults(f core.Faults) error { return s.inj.set(f) }

// SetFaceFaults gives one face's requests switches of their own, replacing
// the cloud-wide ones (SetFaults) for them; nil returns the face to the
// cloud-wide switches.
func (s *Server) SetFaceFaults(face string, f *core.Faults) error { return s.inj.setFace(face, f) }

// FaceFaults returns the face's own switches, or nil when it follows the
// cloud-wide ones.
func (s *Server) FaceFaults(face string) *core.Faults { return s.inj.getFace(face) }

// Faults returns the fault injection switches.
func (s *Server) Faults() core.Faults { return s.inj.get() }

// Stats returns the request counters by operation and status.
func (s *Server) Stats() Stats { return s.inj.snapshot() }

// ResetStats sets the request counters to zero.
func (s *Server) ResetStats() { s.inj.reset() }

// Stop stops serving, stops the cloud's loops and writes its state. It is
// safe to call more than once.
//
// The requests being served get stopGrace to finish; one that comes after
// Stop began is answered 503. Then every connection is closed, which
// cancels the contexts of the requests still running, and they get as long
// again to return before the cloud writes its state; those that do not are
// named in the error. A connection that has sent no request
// is not waited on: a client keeps the connection it dialed for a request
// cancelled meanwhile, and http.Server.Shutdown would wait 5 s on it.
func (s *Server) Stop() error {
	s.stopOnce.Do(func() {
		ctx, cancel := context.WithCancel(context.Background())
		errs := make([]error, len(s.servers))
		var wg sync.WaitGroup
		for i, hs := range s.servers {
			wg.Go(func() {
				if hs.http.Shutdown(ctx) != nil {
					_ = hs.http.Close()
				}
				if serr := <-hs.serveErr; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
					errs[i] = serr
				}
			})
		}
		s.reqs.stop()
		s.reqs.wait(s.stopGrace)
		cancel()
		wg.Wait()
		if left := s.reqs.wait(s.stopGrace); len(left) > 0 {
			errs = append(errs, fmt.Errorf("%d requests still running %s after the cloud began to stop: %s",
				len(left), 2*s.stopGrace, strings.Join(left, ", ")))
		}
		errs = append(errs, s.cloud.Stop())
		s.stopErr = errors.Join(errs...)
	})
	return s.stopErr
}

// withLocal returns faces after the local face, which every Server serves
// (a face of faces with its name is refused as registered twice).
func withLocal(faces []core.Face) []core.Face {
	return append([]core.Face{localface.Face{}}, faces...)
}
