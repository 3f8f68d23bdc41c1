package localpool

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	"github.com/mpool-dev/mpool/internal/controller/infrapool"
	"github.com/mpool-dev/mpool/internal/provider/local"
	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// Options configure a LocalMachinePoolReconciler.
type Options struct {
	// CloudURL is the simulated cloud's base URL (e.g. cloudsim.Server.URL()).
	// Required.
	CloudURL string
	// HTTPClient talks to the simulated cloud (default: the local
	// provider's).
	HTTPClient *http.Client
	// Workload gives access to the workload clusters' Nodes, typically a
	// *workload.ClusterCache. Required.
	Workload infrapool.Workload
	// SkipModelReconciliation is the SkipMachinePoolModelReconciliation
	// feature gate.
	SkipModelReconciliation bool
	// Clock is the time source (default: the real clock).
	Clock clock.PassiveClock
	// Timing tunes the engine's requeues (zero fields take defaults).
	Timing infrapool.Timing
	// Workers bounds the concurrent API calls of one reconcile (default 32).
	Workers int
	// JoinTimeout is how long an instance may go without a Node before it is
	// replaced (zero: infrapool.DefaultJoinTimeout; negative: never).
	JoinTimeout time.Duration
}

// LocalMachinePoolReconciler reconciles LocalMachinePools with the infrapool
// engine on the simulated cloud.
type LocalMachinePoolReconciler struct {
	opts Options
	sg   *scalegroup.Instrumented
}

// NewLocalMachinePoolReconciler returns a reconciler for the simulated cloud
// at opts.CloudURL. Register it with SetupWithManager.
func NewLocalMachinePoolReconciler(opts Options) (*LocalMachinePoolReconciler, error) {
	if opts.Workload == nil {
		return nil, errors.New("localpool: Options.Workload is required")
	}
	c, err := local.New(opts.CloudURL, local.Options{HTTPClient: opts.HTTPClient})
	if err != nil {
		return nil, fmt.Errorf("creating the simulated cloud client: %w", err)
	}
	return &LocalMachinePoolReconciler{opts: opts, sg: scalegroup.WithMetrics(c, local.ProviderName)}, nil
}

// ScaleGroup returns the instrumented ScaleGroup the reconciler uses; its
// Counts tell how many cloud calls were made.
func (r *LocalMachinePoolReconciler) ScaleGroup() *scalegroup.Instrumented { return r.sg }

// SetupWithManager registers the LocalMachinePool controller with mgr.
func (r *LocalMachinePoolReconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, opts controller.Options) error {
	e, err := infrapool.New(infrapool.Options{
		Adapter:                 Adapter{},
		Client:                  mgr.GetClient(),
		ScaleGroup:              r.sg,
		Workload:                r.opts.Workload,
		Recorder:                mgr.GetEventRecorder("localmachinepool-controller"),
		Clock:                   r.opts.Clock,
		SkipModelReconciliation: r.opts.SkipModelReconciliation,
		Timing:                  r.opts.Timing,
		Workers:                 r.opts.Workers,
		JoinTimeout:             r.opts.JoinTimeout,
	})
	if err != nil {
		return err
	}
	return e.SetupWithManager(ctx, mgr, opts)
}
