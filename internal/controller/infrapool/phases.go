package infrapool

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/utils/clock"
)

// phaseTimes records how long each phase of one reconcile took, for the
// "Reconciled" log line (verbosity 1): where a slow reconcile spends its
// time.
type phaseTimes []phaseTime

type phaseTime struct {
	name string
	took time.Duration
}

// time runs fn as the phase name and records its duration.
func (p *phaseTimes) time(c clock.PassiveClock, name string, fn func() error) error {
	start := c.Now()
	err := fn()
	*p = append(*p, phaseTime{name: name, took: c.Since(start)})
	return err
}

// String lists the phases in the order they ran, "observe=12ms plan=1ms ...".
func (p phaseTimes) String() string {
	parts := make([]string, 0, len(p))
	for _, t := range p {
		parts = append(parts, fmt.Sprintf("%s=%s", t.name, t.took.Round(time.Millisecond)))
	}
	return strings.Join(parts, " ")
}
