package manager

import (
	"context"
	"fmt"
	"net/http"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	"github.com/mpool-dev/mpool/internal/controller/infrapool"
	"github.com/mpool-dev/mpool/internal/metrics"
	"github.com/mpool-dev/mpool/internal/provider"
	"github.com/mpool-dev/mpool/internal/provider/kit"
)

// Running is a provider whose controllers were set up.
type Running struct {
	// Provider is the registry entry.
	Provider provider.Provider
	// ScaleGroup is the provider's ScaleGroup as the engine calls it,
	// decorated with metrics; its Counts tell how many cloud calls were made.
	ScaleGroup *metrics.Instrumented
}

// setupProviders starts, for every provider that cfgs configure, the engine
// for its pool kind and the releaser of its orphaned per-instance objects
// (see infrapool.Setup), with engine's options (workload clusters, clock,
// gates, timing). Each provider's ScaleGroup, built by its own
// configuration (its requests carried by hc when set), is wrapped with
// metrics.WithMetrics. `mpool manager`, `mpool up` and the integration
// tests all wire providers through it (New).
func setupProviders(ctx context.Context, mgr ctrl.Manager, cfgs provider.Configs, hc *http.Client, engine infrapool.Options, copts controller.Options) ([]Running, error) {
	var out []Running
	for _, p := range provider.All() {
		cfg, ok := cfgs[p.Name]
		if !ok {
			ctrl.LoggerFrom(ctx).Info("Provider not configured: its controllers are not started", "provider", p.Name, "kind", p.Adapter.Kinds().Pool)
			continue
		}
		sg, err := cfg.ScaleGroup(ctx, kit.Env{Reader: mgr.GetClient(), HTTPClient: hc})
		if err != nil {
			return nil, fmt.Errorf("creating the %s provider's client: %w", p.Name, err)
		}
		if sg == nil {
			ctrl.LoggerFrom(ctx).Info("Provider not configured: its controllers are not started", "provider", p.Name, "kind", p.Adapter.Kinds().Pool)
			continue
		}
		instrumented := metrics.WithMetrics(sg, p.Name)
		opts := engine
		opts.Adapter, opts.ScaleGroup = p.Adapter, instrumented
		if err := infrapool.Setup(ctx, mgr, opts, copts); err != nil {
			return nil, err
		}
		out = append(out, Running{Provider: p, ScaleGroup: instrumented})
	}
	return out, nil
}
