package kubeenv

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
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
	mux.Handle(conversion.Path, h)
	s := &conversionServer{
		srv: &http.Server{
			Handler:           mux,
			TLSConfig:         &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
			ReadHeaderTimeout: 10 * time.Second,
		},
		done: make(chan struct{}),
		url:  "https://" + ln.Addr().String() + conversion.Path,
	}
	go func() {
		defer close(s.done)
		_ = s.srv.ServeTLS(ln, "", "")
	}()
	return s, nil
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
