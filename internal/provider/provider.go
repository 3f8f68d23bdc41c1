package provider

import (
	"context"
	"fmt"
	"net/http"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	"github.com/mpool-dev/mpool/internal/controller/infrapool"
	"github.com/mpool-dev/mpool/internal/metrics"
	"github.com/mpool-dev/mpool/internal/provider/local"
	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// Config is what the manager knows about the clouds: endpoints and
// credentials. A provider whose part is empty is not configured, and its
// controllers are not started.
type Config struct {
	// LocalCloudURL is the simulated cloud's local face (mpool up, mpool
	// cloud); empty disables the local provider.
	LocalCloudURL string
	// HTTPClient, when set, carries every provider's cloud requests (tests
	// count and fault them with it); nil leaves each SDK its own.
	HTTPClient *http.Client
}

// Provider is one cloud in the registry: the infra pool kind it serves,
// through its Adapter, and how to reach its scale groups.
type Provider struct {
	// Name labels the provider in metrics, events and logs.
	Name string
	// Adapter maps the provider's infra pool kind onto the engine.
	Adapter infrapool.Adapter
	// ScaleGroup returns the cloud's ScaleGroup for cfg, or nil when cfg
	// does not configure this provider.
	ScaleGroup func(cfg Config) (scalegroup.ScaleGroup, error)
}

// All is the registry: every provider mpool has, one line each.
func All() []Provider {
	return []Provider{
		{Name: local.ProviderName, Adapter: local.Adapter{}, ScaleGroup: func(cfg Config) (scalegroup.ScaleGroup, error) {
			if cfg.LocalCloudURL == "" {
				return nil, nil
			}
			return local.New(cfg.LocalCloudURL, local.Options{HTTPClient: cfg.HTTPClient})
		}},
	}
}

// Running is a provider whose controllers were set up.
type Running struct {
	// Provider is the registry entry.
	Provider Provider
	// ScaleGroup is the provider's ScaleGroup as the engine calls it,
	// decorated with metrics; its Counts tell how many cloud calls were made.
	ScaleGroup *metrics.Instrumented
}

// Setup starts, for every provider that cfg configures, the engine for its
// pool kind and the releaser of its orphaned per-instance objects (see
// infrapool.Setup), with engine's options (workload clusters, clock, gates,
// timing). Each provider's ScaleGroup is wrapped with metrics.WithMetrics.
// `mpool manager`, `mpool up` and the integration tests all wire providers
// through it.
func Setup(ctx context.Context, mgr ctrl.Manager, cfg Config, engine infrapool.Options, copts controller.Options) ([]Running, error) {
	var out []Running
	for _, p := range All() {
		sg, err := p.ScaleGroup(cfg)
		if err != nil {
			return nil, fmt.Errorf("creating the %s provider's client: %w", p.Name, err)
		}
		if sg == nil {
			ctrl.LoggerFrom(ctx).Info("Provider not configured: its controllers are not started", "provider", p.Name, "kind", p.Adapter.PoolKind())
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
