package kubeenv

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"sync/atomic"
	"time"

	"github.com/mpool-dev/mpool/config/crd"
	"github.com/mpool-dev/mpool/internal/conversion"
)

// conversionServer serves CRD conversion for the control plane's API server
// on loopback, with the control plane's own serving certificate (its CA is
// what the CRDs' caBundle names). It runs in the process that started the
// control plane, from before the CRDs are installed until after the API
// server stops, so no request ever finds the webhook missing.
type conversionServer struct {
	srv  *http.Server
	done chan struct{}
	url  string
	// requests counts the conversion requests served (ConversionRequests).
	requests atomic.Int64
}

// startConversion serves h at conversion.Path on a free loopback port.
func (c *ControlPlane) startConversion(h http.Handler) (*conversionServer, error) {
	cert, err := tls.LoadX509KeyPair(c.pki.path("apiserver.crt"), c.pki.path("apiserver.key"))
	if err != nil {
		return nil, fmt.Errorf("loading the conversion webhook's certificate: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listening for the conversion webhook: %w", err)
	}
	mux := http.NewServeMux()
	s := &conversionServer{
		srv: &http.Server{
			Handler:           mux,
			TLSConfig:         &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
			ReadHeaderTimeout: 10 * time.Second,
		},
		done: make(chan struct{}),
		url:  "https://" + ln.Addr().String() + conversion.Path,
	}
	mux.Handle(conversion.Path, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		h.ServeHTTP(w, r)
	}))
	go func() {
		defer close(s.done)
		_ = s.srv.ServeTLS(ln, "", "")
	}()
	return s, nil
}

// ConversionRequests returns how many requests the embedded conversion
// webhook has served (0 without one). The API server converts to a CRD's
// other served versions on every write of one of its objects (for the
// watch cache of each served version) and, with nothing written, while it
// checks such a watch cache against etcd: a count that moves while no one
// writes is the API server at work of its own.
func (c *ControlPlane) ConversionRequests() int64 {
	if c.conversion == nil {
		return 0
	}
	return c.conversion.requests.Load()
}

// stop closes the server and waits for it.
func (s *conversionServer) stop() error {
	if s == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	<-s.done
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// wireConversion starts the conversion webhook that opts.Conversion builds
// and points every CRD of opts.CRDs that serves more than one version at it.
func (c *ControlPlane) wireConversion(opts Options) error {
	if opts.Conversion == nil {
		return nil
	}
	h, err := opts.Conversion(c.RESTConfig())
	if err != nil {
		return fmt.Errorf("building the conversion webhook: %w", err)
	}
	if c.conversion, err = c.startConversion(h); err != nil {
		return err
	}
	ca, err := os.ReadFile(c.pki.CACert())
	if err != nil {
		return err
	}
	return crd.SetConversion(opts.CRDs, c.conversion.url, ca)
}
