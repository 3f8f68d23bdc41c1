package kubeenv

import (
	"os"
	"testing"
)

// TestReadUsage reads this test's own usage: some CPU time, a peak RSS of
// more than a megabyte.
func TestReadUsage(t *testing.T) {
	u, err := ReadUsage(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if u.CPUSeconds <= 0 || u.PeakRSSBytes < 1<<20 {
		t.Errorf("usage %+v, want CPU time and a peak RSS above 1 MiB", u)
	}
}
