package kubeenv

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"github.com/mpool-dev/mpool/config/crd"
	"github.com/mpool-dev/mpool/internal/conversion"
)

// conversionServer serves CRD conversion (and Options.Validation's webhook)
// for the control plane's API server on loopback, with the control plane's
// own serving certificate (its CA is what the CRDs' caBundle names). It runs
// in the process that started the control plane, from before the CRDs are
// installed until after the API server stops, so no request ever finds the
// webhook missing.
type conversionServer struct {
	srv  *http.Server
	done chan struct{}
	// base is the server's https://host:port; each webhook is at a path.
	base string
	// requests counts the conversion requests served (ConversionRequests).
	requests atomic.Int64
	// tracked counts, per namespace TrackConversionsIn named, the objects
	// of that namespace converted (*atomic.Int64 by namespace); tracking
	// says whether any is, so that no other run reads a request's body.
	tracked  sync.Map
	tracking atomic.Bool
}

// startConversion serves h at conversion.Path, and each of extra at its
// path, on a free loopback port.
func (c *ControlPlane) startConversion(h http.Handler, extra map[string]http.Handler) (*conversionServer, error) {
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
		base: "https://" + ln.Addr().String(),
	}
	mux.Handle(conversion.Path, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		if s.tracking.Load() {
			s.track(r)
		}
		h.ServeHTTP(w, r)
	}))
	for path, h := range extra {
		mux.Handle(path, h)
	}
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

// TrackConversionsIn starts counting the objects of namespace ns that the
// embedded conversion webhook converts (ConversionsIn): what a test that
// writes in ns costs the webhook, without what other namespaces' writes
// and the API server's own checks cost it meanwhile.
func (c *ControlPlane) TrackConversionsIn(ns string) {
	if c.conversion == nil {
		return
	}
	c.conversion.tracked.LoadOrStore(ns, new(atomic.Int64))
	c.conversion.tracking.Store(true)
}

// ConversionsIn returns how many objects of namespace ns the conversion
// webhook converted since TrackConversionsIn(ns) (0 before it).
func (c *ControlPlane) ConversionsIn(ns string) int64 {
	if c.conversion == nil {
		return 0
	}
	n, ok := c.conversion.tracked.Load(ns)
	if !ok {
		return 0
	}
	return n.(*atomic.Int64).Load()
}

// track counts the objects of r's ConversionReview by namespace, for the
// tracked ones, and leaves r's body as it was.
func (s *conversionServer) track(r *http.Request) {
	body, err := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return
	}
	var review struct {
		Request struct {
			Objects []struct {
				Metadata struct {
					Namespace string `json:"namespace"`
				} `json:"metadata"`
			} `json:"objects"`
		} `json:"request"`
	}
	if json.Unmarshal(body, &review) != nil {
		return
	}
	for _, o := range review.Request.Objects {
		if n, ok := s.tracked.Load(o.Metadata.Namespace); ok {
			n.(*atomic.Int64).Add(1)
		}
	}
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
	extra := map[string]http.Handler{}
	if v := opts.Validation; v != nil {
		vh, err := v.Handler(c.RESTConfig())
		if err != nil {
			return fmt.Errorf("building the validating webhook at %s: %w", v.Path, err)
		}
		extra[v.Path] = vh
	}
	if c.conversion, err = c.startConversion(h, extra); err != nil {
		return err
	}
	ca, err := os.ReadFile(c.pki.CACert())
	if err != nil {
		return err
	}
	return crd.SetConversion(opts.CRDs, c.conversion.base+conversion.Path, ca)
}

// registerValidation applies opts.Validation's ValidatingWebhookConfiguration,
// pointed at this start's server (the port changes from one start to the
// next; until this write, a creation an earlier start's configuration sends
// to a closed port is admitted, as failurePolicy Ignore says).
func (c *ControlPlane) registerValidation(ctx context.Context, opts Options) error {
	v := opts.Validation
	if v == nil || c.conversion == nil {
		return nil
	}
	ca, err := os.ReadFile(c.pki.CACert())
	if err != nil {
		return err
	}
	url := c.conversion.base + v.Path
	want := v.Configuration(admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: ca})
	cs, err := kubernetes.NewForConfig(c.RESTConfig())
	if err != nil {
		return err
	}
	api := cs.AdmissionregistrationV1().ValidatingWebhookConfigurations()
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		got, err := api.Get(ctx, want.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			_, err = api.Create(ctx, want, metav1.CreateOptions{})
			return err
		}
		if err != nil {
			return err
		}
		want.ResourceVersion = got.ResourceVersion
		_, err = api.Update(ctx, want, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("registering the validating webhook %s: %w", want.Name, err)
	}
	return nil
}
