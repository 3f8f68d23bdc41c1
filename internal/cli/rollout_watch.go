package cli

import (
	"context"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/mpool-dev/mpool/internal/capi"
)

// watchRollout reports the rollout status of the MachinePool ns/name through
// report each time it changes, until the rollout is complete (nil) or ctx
// ends (ctx's error). It watches the MachinePool, its infrastructure pool
// and the per-instance objects, and reads them again after each event; the
// watches are opened before each read, so no change is missed.
func watchRollout(ctx context.Context, c client.WithWatch, ns, name string, report func(RolloutStatusView) error) error {
	s, err := collectPool(ctx, c, ns, name, collectOptions{})
	if err != nil {
		return err
	}
	var (
		w    *watchSet
		last string
	)
	defer func() {
		if w != nil {
			w.stop()
		}
	}()
	for {
		if w == nil || w.key != watchKeyOf(s) {
			if w != nil {
				w.stop()
			}
			if w, err = openWatches(ctx, c, ns, name, watchKeyOf(s)); err != nil {
				return err
			}
		}
		// Read after the watches are open: a change from now on wakes us.
		if s, err = collectPool(ctx, c, ns, name, collectOptions{}); err != nil {
			return err
		}
		if w.key != watchKeyOf(s) {
			continue
		}
		v := rolloutStatus(s)
		if text := formatRolloutStatus(v, "json"); text != last {
			last = text
			if err := report(v); err != nil {
				return err
			}
		}
		if v.Complete {
			return nil
		}
		if v.Stopped != "" {
			// As kubectl's rollout status ends on a Deployment past its
			// progress deadline: nothing will change until someone acts.
			return fmt.Errorf("the engine stopped the rollout of machinepool %s/%s (%s): fix or change the template, or resume with 'mpool rollout resume %s'", ns, name, v.Stopped, name)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-w.ended:
			// A watch ended (expired, or the server closed it): reopen.
			w.stop()
			w = nil
		case <-w.changed:
		}
	}
}

// watchKey identifies what a watchSet watches.
type watchKey struct {
	infra        schema.GroupVersionKind
	infraName    string
	instanceKind string
}

// watchKeyOf is what to watch for s: its infrastructure pool at the version
// it was read at (none when its kind could not be resolved) and its
// per-instance objects.
func watchKeyOf(s *poolState) watchKey {
	v := s.infra.view
	k := watchKey{infraName: v.Name, instanceKind: v.InstanceKind}
	if v.APIVersion != "" {
		k.infra = schema.FromAPIVersionAndKind(v.APIVersion, v.Kind)
	}
	return k
}

// watchSet is the open watches of one rollout. changed holds a signal
// when an event arrived since the last read (events coalesce: one read
// covers them all); ended is closed when a watch ends.
type watchSet struct {
	key     watchKey
	changed chan struct{}
	ended   chan struct{}
	endOnce sync.Once
	cancel  context.CancelFunc
	watches []watch.Interface
	wg      sync.WaitGroup
}

func openWatches(ctx context.Context, c client.WithWatch, ns, name string, key watchKey) (*watchSet, error) {
	ctx, cancel := context.WithCancel(ctx)
	w := &watchSet{key: key, changed: make(chan struct{}, 1), ended: make(chan struct{}), cancel: cancel}
	open := func(list client.ObjectList, what string, opts ...client.ListOption) error {
		wi, err := c.Watch(ctx, list, append(opts, client.InNamespace(ns))...)
		if err != nil {
			return fmt.Errorf("watching %s: %w", what, err)
		}
		w.watches = append(w.watches, wi)
		return nil
	}
	byName := client.MatchingFields{"metadata.name": name}
	err := open(&clusterv1.MachinePoolList{}, "machinepool "+ns+"/"+name, byName)
	if err == nil && key.infra.Kind != "" {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(key.infra.GroupVersion().WithKind(key.infra.Kind + "List"))
		err = open(list, key.infra.Kind+" "+ns+"/"+key.infraName, client.MatchingFields{"metadata.name": key.infraName})
	}
	if err == nil && key.instanceKind != "" {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(key.infra.GroupVersion().WithKind(key.instanceKind + "List"))
		err = open(list, key.instanceKind+"s of machinepool "+ns+"/"+name, client.MatchingLabels{clusterv1.MachinePoolNameLabel: capi.LabelValue(name)})
	}
	if err != nil {
		w.stop()
		return nil, err
	}
	for _, wi := range w.watches {
		w.wg.Add(1)
		go w.forward(ctx, wi)
	}
	return w, nil
}

// forward signals each event of wi, and its end.
func (w *watchSet) forward(ctx context.Context, wi watch.Interface) {
	defer w.wg.Done()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-wi.ResultChan():
			if !ok || ev.Type == watch.Error {
				w.endOnce.Do(func() { close(w.ended) })
				return
			}
			select {
			case w.changed <- struct{}{}:
			default: // a signal is pending already
			}
		}
	}
}

func (w *watchSet) stop() {
	w.cancel()
	for _, wi := range w.watches {
		wi.Stop()
	}
	w.wg.Wait()
}
