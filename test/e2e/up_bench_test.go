package e2e

import (
	"regexp"
	"testing"
	"time"
)

// BenchmarkUpWarmStart measures `mpool up` from process start to its ready
// line on a data directory that already exists (binaries cached, CRDs
// installed). Target: under 10 s.
//
//	go test -run '^$' -bench BenchmarkUpWarmStart -benchtime 3x ./test/e2e/
func BenchmarkUpWarmStart(b *testing.B) {
	bin := buildMpool(b)
	dir := b.TempDir()
	first, _ := startUp(b, bin, "--data-dir", dir, "--empty")
	first.stop(b)
	b.ResetTimer()
	var total time.Duration
	for i := 0; i < b.N; i++ {
		p, took := startUp(b, bin, "--data-dir", dir, "--empty")
		total += took
		b.StopTimer()
		p.stop(b)
		b.StartTimer()
	}
	b.ReportMetric(total.Seconds()/float64(b.N), "s/start")
}

// BenchmarkUpToRunningSample measures `mpool up` on a fresh data directory
// (binaries cached) from process start until its sample 3-replica pool is
// Running: control plane, CRDs, cloud, manager, three simulated VMs booting
// (2s ± 1s), joining through the bootstrap token and becoming Ready.
// Target: under 20 s.
//
//	go test -run '^$' -bench BenchmarkUpToRunningSample -benchtime 3x ./test/e2e/
func BenchmarkUpToRunningSample(b *testing.B) {
	bin := buildMpool(b)
	running := regexp.MustCompile(`sample pool default/local-mp-0: phase Running`)
	var total time.Duration
	for i := 0; i < b.N; i++ {
		start := time.Now()
		p, _ := startUp(b, bin, "--data-dir", b.TempDir())
		p.waitLine(b, running, 5*time.Minute)
		total += time.Since(start)
		b.StopTimer()
		p.stop(b)
		b.StartTimer()
	}
	b.ReportMetric(total.Seconds()/float64(b.N), "s/running")
}
