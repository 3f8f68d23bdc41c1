// Package parallel runs a bounded number of independent calls at once, the
// way the controllers fan out per-instance API writes within one reconcile.
package parallel

import (
	"context"
	"errors"
	"sync"
)

// ForEach calls fn(ctx, i) for every i in [0, n) on at most workers
// goroutines (at least one) and returns the errors joined. Every call runs:
// one failing item does not stop the others, since each is an independent
// object whose failure the next reconcile retries.
func ForEach(ctx context.Context, workers, n int, fn func(context.Context, int) error) error {
	if n == 0 {
		return nil
	}
	workers = max(1, min(workers, n))
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
		next = make(chan int)
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := fn(ctx, i); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return errors.Join(errs...)
}
