package preview

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestMaintenanceWindowAt(t *testing.T) {
	day := func(h, m int) time.Time { return time.Date(2030, 1, 2, h, m, 0, 0, time.UTC) }
	tests := []struct {
		schedule, duration string
		now                time.Time
		open               bool
		until              time.Time
	}{
		{"0 2 * * *", "4h", day(1, 59), false, day(2, 0)},
		{"0 2 * * *", "4h", day(2, 0), true, day(6, 0)},
		{"0 2 * * *", "4h", day(5, 59), true, day(6, 0)},
		{"0 2 * * *", "4h", day(6, 0), false, day(2, 0).AddDate(0, 0, 1)},
		{"@daily", "1h", day(0, 30), true, day(1, 0)},
		{"@daily", "1h", day(12, 0), false, day(0, 0).AddDate(0, 0, 1)},
		// Overlapping windows: the latest one's end.
		{"0 * * * *", "90m", day(10, 45), true, day(12, 0).Add(-30 * time.Minute)},
		// Weekdays only: 2030-01-05 is a Saturday.
		{"0 9 * * 1-5", "8h", time.Date(2030, 1, 5, 10, 0, 0, 0, time.UTC), false, time.Date(2030, 1, 7, 9, 0, 0, 0, time.UTC)},
		{"CRON_TZ=Europe/Paris 0 2 * * *", "1h", day(1, 30), true, day(2, 0)},
	}
	for _, tt := range tests {
		w, err := ParseMaintenanceWindow(tt.schedule, tt.duration)
		if err != nil {
			t.Fatalf("%s %s: %v", tt.schedule, tt.duration, err)
		}
		open, until := w.At(tt.now)
		if open != tt.open || !until.Equal(tt.until) {
			t.Errorf("%q %s at %s: open %v until %s, want %v until %s", tt.schedule, tt.duration, tt.now, open, until, tt.open, tt.until)
		}
		if hold := w.Hold(tt.now); (hold == "") != tt.open {
			t.Errorf("%q at %s: Hold %q with open %v", tt.schedule, tt.now, hold, tt.open)
		}
	}
}

func TestParseMaintenanceWindowErrors(t *testing.T) {
	tests := []struct{ schedule, duration, want string }{
		{"0 2 * *", "4h", "is not a cron schedule"},
		{"61 2 * * *", "4h", "is not a cron schedule"},
		{"0 2 * * *", "4 hours", "is not a duration"},
		{"0 2 * * *", "30s", "at least a minute"},
		{"0 2 * * *", "", "set both"},
		{"", "4h", "set both"},
	}
	for _, tt := range tests {
		_, err := ParseMaintenanceWindow(tt.schedule, tt.duration)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q %q: error %v, want one containing %q", tt.schedule, tt.duration, err, tt.want)
		}
	}
	if w, err := ParseMaintenanceWindow("", ""); w != nil || err != nil {
		t.Errorf("unset: %v, %v; want no window", w, err)
	}
}

func TestReadWindowAndBehaviorPoolWins(t *testing.T) {
	mp := &metav1.ObjectMeta{Annotations: map[string]string{
		MaintenanceWindowScheduleAnnotation: "0 2 * * *", MaintenanceWindowDurationAnnotation: "4h",
		UndrainableNodeBehaviorAnnotation: "Schedule",
	}}
	pool := &metav1.ObjectMeta{Annotations: map[string]string{MaintenanceWindowScheduleAnnotation: "@daily", MaintenanceWindowDurationAnnotation: "1h", UndrainableNodeBehaviorAnnotation: "Cordon"}}
	w, err := ReadMaintenanceWindow(mp, pool)
	if err != nil || w.Schedule != "@daily" || w.Duration != time.Hour {
		t.Errorf("window %+v, %v; want the pool's", w, err)
	}
	if w, err := ReadMaintenanceWindow(mp, &metav1.ObjectMeta{}); err != nil || w.Schedule != "0 2 * * *" || w.Duration != 4*time.Hour {
		t.Errorf("window %+v, %v; want the MachinePool's", w, err)
	}
	if _, err := ReadMaintenanceWindow(mp, &metav1.ObjectMeta{Annotations: map[string]string{MaintenanceWindowDurationAnnotation: "1h"}}); err == nil {
		t.Error("a pool with a duration alone: no error; want one (its window replaces the MachinePool's)")
	}
	b, err := ReadUndrainableNodeBehavior(mp, pool)
	if err != nil || b != UndrainableCordon {
		t.Errorf("behavior %q, %v; want Cordon", b, err)
	}
	if b, err := ReadUndrainableNodeBehavior(mp, nil); err != nil || b != UndrainableSchedule {
		t.Errorf("behavior %q, %v; want Schedule", b, err)
	}
	if b, err := ReadUndrainableNodeBehavior(); err != nil || b != UndrainableDelete {
		t.Errorf("default behavior %q, %v; want Delete", b, err)
	}
	if b, err := ReadUndrainableNodeBehavior(&metav1.ObjectMeta{Annotations: map[string]string{UndrainableNodeBehaviorAnnotation: "pause"}}); err == nil || b != UndrainableDelete {
		t.Errorf("unknown behavior: %q, %v; want Delete and an error", b, err)
	}
}
