package rollout

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

func TestResolveBudgets(t *testing.T) {
	tests := []struct {
		name            string // and why the case exists
		desired         int32
		strategy        Strategy
		wantSurge       int32
		wantUnavailable int32
		wantErr         string
	}{
		{name: "unset budgets default to surge 1, unavailable 0", desired: 3, strategy: Strategy{},
			wantSurge: 1, wantUnavailable: 0},
		{name: "integers are taken as they are", desired: 3, strategy: strategy("2", "1"),
			wantSurge: 2, wantUnavailable: 1},
		{name: "integers may exceed desired", desired: 2, strategy: strategy("5", "4"),
			wantSurge: 5, wantUnavailable: 4},
		{name: "surge percentage rounds up, unavailable rounds down", desired: 10, strategy: strategy("25%", "25%"),
			wantSurge: 3, wantUnavailable: 2},
		{name: "the seeds' 25%/1 on four replicas", desired: 4, strategy: strategy("25%", "1"),
			wantSurge: 1, wantUnavailable: 1},
		{name: "a small surge percentage still surges one", desired: 3, strategy: strategy("1%", "1%"),
			wantSurge: 1, wantUnavailable: 0},
		{name: "100% unavailable is the whole pool", desired: 3, strategy: strategy("0", "100%"),
			wantSurge: 0, wantUnavailable: 3},
		{name: "budgets that only round to zero leave unavailable 1 so the pool can roll", desired: 0,
			strategy: strategy("25%", "25%"), wantSurge: 0, wantUnavailable: 1},
		{name: "zero surge and a rounded-down percentage also leave unavailable 1", desired: 5,
			strategy: strategy("0", "10%"), wantSurge: 0, wantUnavailable: 1},
		{name: "only unavailable set keeps the default surge", desired: 3,
			strategy: Strategy{MaxUnavailable: ptr.To(intstr.FromInt32(1))}, wantSurge: 1, wantUnavailable: 1},
		{name: "both zero is invalid", desired: 3, strategy: strategy("0", "0"), wantErr: "both be zero"},
		{name: "both zero percent is invalid", desired: 3, strategy: strategy("0%", "0%"), wantErr: "both be zero"},
		{name: "zero and zero percent is invalid", desired: 3, strategy: strategy("0", "0%"), wantErr: "both be zero"},
		{name: "unset surge with unavailable zero is the default, valid", desired: 3,
			strategy: strategy("", "0"), wantSurge: 1, wantUnavailable: 0},
		{name: "negative surge", desired: 3, strategy: strategy("-1", "0"), wantErr: "maxSurge: -1 is negative"},
		{name: "negative unavailable", desired: 3, strategy: strategy("1", "-1"), wantErr: "maxUnavailable: -1 is negative"},
		{name: "negative percentage", desired: 3, strategy: strategy("-5%", "0"), wantErr: "outside"},
		{name: "percentage above 100", desired: 3, strategy: strategy("1", "150%"), wantErr: "outside"},
		{name: "string that is not a percentage", desired: 3, strategy: strategy("abc", "0"), wantErr: "neither"},
		{name: "percentage that is not a number", desired: 3, strategy: strategy("1", "x%"), wantErr: "not a valid percentage"},
		{name: "negative desired", desired: -1, strategy: Strategy{}, wantErr: "negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			surge, unavailable, err := ResolveBudgets(tt.desired, tt.strategy)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if surge != tt.wantSurge || unavailable != tt.wantUnavailable {
				t.Errorf("got surge %d, unavailable %d; want %d, %d", surge, unavailable, tt.wantSurge, tt.wantUnavailable)
			}
		})
	}
}

func TestAvailableAt(t *testing.T) {
	tests := []struct {
		name          string // and why the case exists
		readySince    *time.Time
		minReady      time.Duration
		wantAvailable bool
		wantWait      time.Duration
	}{
		{name: "not Ready is never available and nothing to wait for", readySince: nil, minReady: time.Minute},
		{name: "Ready with no minReadySeconds is available at once", readySince: ptr.To(t0), wantAvailable: true},
		{name: "Ready for less than minReadySeconds waits for the rest", readySince: ptr.To(t0.Add(-20 * time.Second)),
			minReady: time.Minute, wantWait: 40 * time.Second},
		{name: "Ready for exactly minReadySeconds is available", readySince: ptr.To(t0.Add(-time.Minute)),
			minReady: time.Minute, wantAvailable: true},
		{name: "Ready since a skewed future time waits the whole period", readySince: ptr.To(t0.Add(10 * time.Second)),
			minReady: time.Minute, wantWait: 70 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			available, wait := availableAt(tt.readySince, t0, tt.minReady)
			if available != tt.wantAvailable || wait != tt.wantWait {
				t.Errorf("got (%v, %v), want (%v, %v)", available, wait, tt.wantAvailable, tt.wantWait)
			}
		})
	}
}

func TestCanDeleteAvailable(t *testing.T) {
	tests := []struct {
		name                 string // and why the case exists
		available            int64
		desired, unavailable int32
		want                 bool
	}{
		{name: "surge instance available: one may go with maxUnavailable 0", available: 4, desired: 3, unavailable: 0, want: true},
		{name: "at desired with maxUnavailable 0 nothing may go", available: 3, desired: 3, unavailable: 0, want: false},
		{name: "maxUnavailable 1 lets one go at desired", available: 3, desired: 3, unavailable: 1, want: true},
		{name: "already one short with maxUnavailable 1", available: 2, desired: 3, unavailable: 1, want: false},
		{name: "maxUnavailable above desired never limits", available: 1, desired: 2, unavailable: 5, want: true},
		{name: "scaling to zero may delete the last one", available: 1, desired: 0, unavailable: 0, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := canDeleteAvailable(tt.available, minAvailable(tt.desired, tt.unavailable)); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}
