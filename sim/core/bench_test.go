package core

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkApplyAndBoot1000 measures the core alone: a group of 1,000 with
// zero boot delay until all instances are Running (no join, no HTTP).
func BenchmarkApplyAndBoot1000(b *testing.B) {
	c, err := NewCloud(context.Background(), Options{DefaultSimulation: &Simulation{}})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Stop()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		name := fmt.Sprintf("g%d", i)
		if _, err := c.ApplyGroup(name, GroupSpec{Capacity: 1000}); err != nil {
			b.Fatal(err)
		}
		for {
			g, err := c.GetGroup(name)
			if err != nil {
				b.Fatal(err)
			}
			if countStates(g)[StateRunning] == 1000 {
				break
			}
		}
		b.StopTimer()
		_, _ = c.DeleteGroup(name)
		b.StartTimer()
	}
}

// BenchmarkFlush10000 measures one state write with 10,000 instances (each
// 200ms batch of changes costs at most one of these).
func BenchmarkFlush10000(b *testing.B) {
	c, err := NewCloud(context.Background(), Options{DataDir: b.TempDir(), DefaultSimulation: &Simulation{}})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Stop()
	if _, err := c.ApplyGroup("big", GroupSpec{Capacity: 10000, Model: Model{CustomData: make([]byte, 4096), Zones: []string{"a", "b", "c"}}}); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c.mu.Lock()
		c.dirty = true
		c.mu.Unlock()
		if err := c.Flush(); err != nil {
			b.Fatal(err)
		}
	}
}
