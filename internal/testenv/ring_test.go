package testenv

import (
	"fmt"
	"strings"
	"testing"
)

func TestRingKeepsTheLastMatchingLines(t *testing.T) {
	r := NewRing(4)
	if got := r.Last(10, nil); got != "" {
		t.Fatalf("empty ring: %q", got)
	}
	fmt.Fprint(r, "a 1\nb 2\n")
	fmt.Fprint(r, "a 3\nb ")
	if got, want := r.Last(10, nil), "a 1\nb 2\na 3"; got != want {
		t.Fatalf("before wrapping: %q, want %q", got, want)
	}
	fmt.Fprint(r, "4\na 5\na 6\n")
	if got, want := r.Last(10, nil), "a 3\nb 4\na 5\na 6"; got != want {
		t.Fatalf("after wrapping: %q, want %q", got, want)
	}
	if got, want := r.Last(2, func(l string) bool { return strings.HasPrefix(l, "a") }), "a 5\na 6"; got != want {
		t.Fatalf("the last 2 with a: %q, want %q", got, want)
	}
	if got, want := r.Last(10, func(l string) bool { return strings.Contains(l, "4") }), "b 4"; got != want {
		t.Fatalf("with b and 4: %q, want %q", got, want)
	}
}

func TestGoroutinesFindsABlockedOne(t *testing.T) {
	block := make(chan struct{})
	started := make(chan struct{})
	go blockedForTheTest(started, block)
	<-started
	defer close(block)
	got := Goroutines("testenv.blockedForTheTest", 5)
	if !strings.Contains(got, "[chan receive]") || strings.Count("\n"+got, "\ngoroutine ") != 1 {
		t.Fatalf("Goroutines returned:\n%s", got)
	}
}

func blockedForTheTest(started chan<- struct{}, block <-chan struct{}) {
	close(started)
	<-block
}
