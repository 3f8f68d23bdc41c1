package metrics

import (
	"context"
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/mpool-dev/mpool/internal/provider/contract"
)

// AddToManager makes mgr export the MachinePool metrics through reg
// (normally controller-runtime's metrics.Registry, which mgr serves): a
// PoolCollector reading mgr's cache is registered while mgr is the leader
// (at once without leader election) and unregistered when mgr stops.
//
// Call it only when the MachinePool controller is set up: the collector
// reads the kinds that controller caches and would otherwise start
// informers of its own.
//
// adapters are the providers' readers (provider.Adapters): the instances of
// pools of their kinds are counted.
func AddToManager(mgr manager.Manager, reg prometheus.Registerer, adapters []contract.Adapter) error {
	if err := mgr.Add(&leaderCollector{reader: mgr.GetCache(), adapters: adapters, reg: reg}); err != nil {
		return fmt.Errorf("adding the MachinePool metrics: %w", err)
	}
	return nil
}

// leaderCollector is the runnable that registers a PoolCollector while the
// manager leads.
type leaderCollector struct {
	reader   client.Reader
	adapters []contract.Adapter
	reg      prometheus.Registerer
}

var _ manager.LeaderElectionRunnable = (*leaderCollector)(nil)

// NeedLeaderElection implements manager.LeaderElectionRunnable: only the
// leader exports pool metrics, so that scraping every replica does not
// count each pool once per replica.
func (*leaderCollector) NeedLeaderElection() bool { return true }

// Start implements manager.Runnable.
func (l *leaderCollector) Start(ctx context.Context) error {
	ctx = log.IntoContext(ctx, log.FromContext(ctx).WithName("machinepool-metrics"))
	c := NewPoolCollector(ctx, l.reader, l.adapters)
	if err := l.reg.Register(c); err != nil {
		var dup prometheus.AlreadyRegisteredError
		if !errors.As(err, &dup) {
			return fmt.Errorf("registering the MachinePool metrics: %w", err)
		}
		// Another manager in this process exports them already (tests, or
		// two managers in one binary): its series would clash with ours.
		log.FromContext(ctx).Info("MachinePool metrics are already registered by another manager in this process; not exporting them twice")
		return nil
	}
	defer l.reg.Unregister(c)
	<-ctx.Done()
	return nil
}
