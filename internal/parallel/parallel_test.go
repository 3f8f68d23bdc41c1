package parallel

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
)

func TestForEach(t *testing.T) {
	tests := []struct {
		name, wantErr   string
		workers, n      int
		failing         map[int]bool
		wantMaxInFlight int32
	}{
		{name: "nothing to do", workers: 4, n: 0},
		{name: "every item runs once", workers: 3, n: 50, wantMaxInFlight: 3},
		{name: "zero workers still runs", workers: 0, n: 5, wantMaxInFlight: 1},
		{name: "failures are joined and do not stop the rest", workers: 2, n: 10,
			failing: map[int]bool{2: true, 7: true}, wantErr: "item 2\nitem 7", wantMaxInFlight: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var (
				ran           = make([]atomic.Int32, tt.n)
				inFlight, top atomic.Int32
				release       = make(chan struct{})
			)
			// The first wave blocks until every worker holds an item, so
			// the bound is observed, not assumed.
			var started atomic.Int32
			err := ForEach(context.Background(), tt.workers, tt.n, func(_ context.Context, i int) error {
				cur := inFlight.Add(1)
				defer inFlight.Add(-1)
				for {
					old := top.Load()
					if cur <= old || top.CompareAndSwap(old, cur) {
						break
					}
				}
				if started.Add(1) == int32(max(1, min(tt.workers, tt.n))) {
					close(release)
				}
				<-release
				ran[i].Add(1)
				if tt.failing[i] {
					return fmt.Errorf("item %d", i)
				}
				return nil
			})
			for i := range ran {
				if got := ran[i].Load(); got != 1 {
					t.Errorf("item %d ran %d times, want 1", i, got)
				}
			}
			if got := top.Load(); got != tt.wantMaxInFlight {
				t.Errorf("at most %d calls in flight, want %d", got, tt.wantMaxInFlight)
			}
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("error %v, want none", err)
			case tt.wantErr != "":
				var joined interface{ Unwrap() []error }
				if !errors.As(err, &joined) || len(joined.Unwrap()) != len(tt.failing) {
					t.Errorf("error %v, want the %d failures joined", err, len(tt.failing))
				}
			}
		})
	}
}
