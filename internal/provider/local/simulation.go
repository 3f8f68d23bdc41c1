package local

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mpool-dev/mpool/sim/wire/localapi"
)

// Simulation is the local provider's in-place part of the model
// (scalegroup.Model.InPlace): the simulated cloud's knobs for a group's
// instances. Nil fields keep the group's (or the cloud's default) value.
// Changing them replaces no instance.
type Simulation struct {
	// ProvisionDelay is how long an instance stays Creating.
	ProvisionDelay *time.Duration `json:"provisionDelay,omitempty"`
	// BootDelay is how long an instance boots before it is Running.
	BootDelay *time.Duration `json:"bootDelay,omitempty"`
	// BootJitter is the maximum random deviation (±) from BootDelay.
	BootJitter *time.Duration `json:"bootJitter,omitempty"`
	// DeleteDelay is how long an instance stays Deleting.
	DeleteDelay *time.Duration `json:"deleteDelay,omitempty"`
	// FailureRate is the probability in [0, 1] that an instance fails to
	// boot.
	FailureRate *float64 `json:"failureRate,omitempty"`
}

// wire returns s in the simulated cloud's wire form, nil when s sets
// nothing.
func (s Simulation) wire() *localapi.Simulation {
	d := func(v *time.Duration) *metav1.Duration {
		if v == nil {
			return nil
		}
		return &metav1.Duration{Duration: *v}
	}
	out := &localapi.Simulation{
		ProvisionDelay: d(s.ProvisionDelay),
		BootDelay:      d(s.BootDelay),
		BootJitter:     d(s.BootJitter),
		DeleteDelay:    d(s.DeleteDelay),
		FailureRate:    s.FailureRate,
	}
	if *out == (localapi.Simulation{}) {
		return nil
	}
	return out
}
