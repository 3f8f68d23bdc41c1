package e2e

import (
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
	first, _ := startUp(b, bin, "--data-dir", dir)
	first.stop(b)
	b.ResetTimer()
	var total time.Duration
	for i := 0; i < b.N; i++ {
		p, took := startUp(b, bin, "--data-dir", dir)
		total += took
		b.StopTimer()
		p.stop(b)
		b.StartTimer()
	}
	b.ReportMetric(total.Seconds()/float64(b.N), "s/start")
}
