package manager

import (
	"testing"

	"github.com/go-logr/logr/funcr"
	"k8s.io/client-go/rest"

	"sigs.k8s.io/cluster-api/util/apiwarnings"
)

// TestWarningHandlerDropsWhatUpstreamDrops: the manager's clients drop the
// API server's warnings about Cluster API's finalizer names and deprecated
// versions (the messages as kube-apiserver v1.37 sends them) and log every
// other; a configuration with a handler of its own keeps it.
func TestWarningHandlerDropsWhatUpstreamDrops(t *testing.T) {
	cfg := withWarningHandler(&rest.Config{Host: "https://127.0.0.1:6443"})
	h, ok := cfg.WarningHandler.(*apiwarnings.DiscardMatchingHandler)
	if !ok {
		t.Fatalf("warning handler %T, want upstream's DiscardMatchingHandler", cfg.WarningHandler)
	}
	var logged []string
	h.Logger = funcr.New(func(_, args string) { logged = append(logged, args) }, funcr.Options{})
	for _, msg := range []string{
		`metadata.finalizers: "localmachinepoolmachine.infrastructure.cluster.x-k8s.io": prefer a domain-qualified finalizer name including a path (/) to avoid accidental conflicts with other finalizer writers`,
		`metadata.finalizers: "machinepool.cluster.x-k8s.io": prefer a domain-qualified finalizer name including a path (/) to avoid accidental conflicts with other finalizer writers`,
		`cluster.x-k8s.io/v1beta1 MachinePool is deprecated; use cluster.x-k8s.io/v1beta2 MachinePool`,
	} {
		h.HandleWarningHeader(299, "", msg)
	}
	if len(logged) != 0 {
		t.Errorf("logged %q, want nothing", logged)
	}
	h.HandleWarningHeader(299, "", "spec.template.spec.version: unknown field")
	if len(logged) != 1 {
		t.Errorf("an unrelated warning logged %d times, want once", len(logged))
	}
	own := rest.NoWarnings{}
	if got := withWarningHandler(&rest.Config{WarningHandler: own}); got.WarningHandler != own {
		t.Errorf("a configuration's own handler replaced by %T", got.WarningHandler)
	}
}
