// Package servertest starts simulated clouds for the tests of the
// simulator's faces.
package servertest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/server"
)

// Start starts a Server with opts for t and stops it when t ends. Each of
// faces is served unless opts.Faces has a face of its name (one configured
// otherwise); instances boot in 100ms unless opts.DefaultSimulation says
// otherwise.
func Start(t testing.TB, opts core.Options, faces ...core.Face) *server.Server {
	t.Helper()
	if opts.DefaultSimulation == nil {
		opts.DefaultSimulation = &core.Simulation{BootDelay: 100 * time.Millisecond}
	}
	for _, f := range faces {
		if !slices.ContainsFunc(opts.Faces, func(o core.Face) bool { return o.Name() == f.Name() }) {
			opts.Faces = append(opts.Faces, f)
		}
	}
	srv, err := server.Start(context.Background(), opts)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _ = srv.Stop() })
	return srv
}
