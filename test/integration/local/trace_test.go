package local

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/testenv"
)

// scaleTrace records when one pool's MachinePool, LocalMachinePool and
// Nodes changed while it is traced, as a cache of the benchmark's own sees
// them: where the time of one small scale-up goes (BenchmarkManyPools'
// alone and at-rest samples with MPOOL_BENCH_TIMELINE set). Its Node
// informer holds every Node of the API server, so it is only started when
// asked for.
type scaleTrace struct {
	mu    sync.Mutex
	pool  string // the traced pool; "" when none is
	start time.Time
	lines []string
	// seen is what the last line of each object said, so that an update
	// which changes nothing traced is not a line.
	seen map[string]string
}

// startScaleTrace starts the informers scaleTrace reads in a cache of its
// own (stopped when b ends); nil when MPOOL_BENCH_TIMELINE is unset.
func startScaleTrace(b *testing.B, ns string) *scaleTrace {
	b.Helper()
	if os.Getenv("MPOOL_BENCH_TIMELINE") == "" {
		return nil
	}
	c, err := cache.New(env.Config, cache.Options{Scheme: env.Scheme, ByObject: map[client.Object]cache.ByObject{
		&clusterv1.MachinePool{}:    {Namespaces: map[string]cache.Config{ns: {}}},
		&infrav1.LocalMachinePool{}: {Namespaces: map[string]cache.Config{ns: {}}},
		&corev1.Node{}:              {},
	}})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	t := &scaleTrace{seen: map[string]string{}}
	for _, o := range []client.Object{&clusterv1.MachinePool{}, &infrav1.LocalMachinePool{}, &corev1.Node{}} {
		inf, err := c.GetInformer(ctx, o)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { t.observe(obj) },
			UpdateFunc: func(_, obj any) { t.observe(obj) },
		}); err != nil {
			b.Fatal(err)
		}
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		b.Fatal("the trace's cache did not sync")
	}
	return t
}

// begin traces pool from now on.
func (t *scaleTrace) begin(pool string) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.pool, t.start, t.lines, t.seen = pool, time.Now(), nil, map[string]string{}
}

// end stops tracing and writes the trace to standard error as progress
// lines headed by what.
func (t *scaleTrace) end(what string) {
	if t == nil {
		return
	}
	t.mu.Lock()
	lines := t.lines
	t.pool, t.lines = "", nil
	t.mu.Unlock()
	progressf("trace of %s:", what)
	for _, l := range lines {
		progressf("  %s", l)
	}
}

// observe records obj when it belongs to the traced pool and what the
// trace reads of it changed.
func (t *scaleTrace) observe(obj any) {
	at := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.pool == "" {
		return
	}
	var key, line string
	switch o := obj.(type) {
	case *clusterv1.MachinePool:
		if o.Name != t.pool {
			return
		}
		key = "MachinePool"
		line = fmt.Sprintf("gen %d/%d replicas %d status %d ready %d available %d upToDate %d phase %s providerIDs %d",
			o.Generation, o.Status.ObservedGeneration, ptr.Deref(o.Spec.Replicas, 0), ptr.Deref(o.Status.Replicas, 0),
			ptr.Deref(o.Status.ReadyReplicas, 0), ptr.Deref(o.Status.AvailableReplicas, 0), ptr.Deref(o.Status.UpToDateReplicas, 0),
			o.Status.Phase, len(o.Spec.ProviderIDList))
	case *infrav1.LocalMachinePool:
		if o.Name != t.pool {
			return
		}
		key = "LocalMachinePool"
		line = fmt.Sprintf("gen %d replicas %d ready %v providerIDs %d", o.Generation, o.Status.Replicas, o.Status.Ready, len(o.Spec.ProviderIDList))
	case *corev1.Node:
		if !strings.Contains(o.Name, "-"+t.pool+"-") {
			return
		}
		ready := "NotReady"
		if testenv.NodeReady(o) {
			ready = "Ready"
		}
		key = "Node " + o.Name[strings.LastIndex(o.Name, "-")+1:]
		line = fmt.Sprintf("%s annotations %d taints %d", ready, len(o.Annotations), len(o.Spec.Taints))
	default:
		return
	}
	if t.seen[key] == line {
		return
	}
	t.seen[key] = line
	t.lines = append(t.lines, fmt.Sprintf("%7.1f ms  %-16s %s", float64(at.Sub(t.start).Microseconds())/1000, key, line))
}
