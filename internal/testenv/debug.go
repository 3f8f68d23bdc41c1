package testenv

import (
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"os"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// DebugAddrEnv names an environment variable with a listen address
// (127.0.0.1:6060) at which a test package's process serves, while its tests
// run, Go's profiles (/debug/pprof/: goroutine dumps, CPU profiles) and
// controller-runtime's metrics registry (/metrics: work queue depths,
// reconciles, active workers). It is for looking into a long benchmark while
// it runs, as the API server's --profiling is.
const DebugAddrEnv = "MPOOL_TEST_DEBUG_ADDR"

// serveDebug serves the profiles and metrics at DebugAddrEnv's address, if
// it is set, until the process ends.
func serveDebug() error {
	addr := os.Getenv(DebugAddrEnv)
	if addr == "" {
		return nil
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("%s: %w", DebugAddrEnv, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	mux.Handle("/metrics", promhttp.HandlerFor(metrics.Registry, promhttp.HandlerOpts{}))
	go func() { _ = http.Serve(l, mux) }()
	fmt.Fprintf(os.Stderr, "testenv: profiles and metrics at http://%s/debug/pprof/ and /metrics\n", l.Addr())
	return nil
}
