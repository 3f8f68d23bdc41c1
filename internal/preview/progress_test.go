package preview

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestReadProgressPolicy(t *testing.T) {
	obj := func(a map[string]string) metav1.Object { return &metav1.ObjectMeta{Annotations: a} }
	def := ProgressPolicy{Deadline: DefaultProgressDeadline, MaxFailed: DefaultMaxFailedReplacements}
	for _, tc := range []struct {
		name    string
		reason  string
		objs    []metav1.Object
		want    ProgressPolicy
		wantErr bool
	}{
		{name: "unset: the defaults", objs: []metav1.Object{obj(nil), nil}, want: def},
		{name: "set on the MachinePool", objs: []metav1.Object{obj(map[string]string{ProgressDeadlineAnnotation: "90s", MaxFailedReplacementsAnnotation: "5"}), obj(nil)},
			want: ProgressPolicy{Deadline: 90 * time.Second, MaxFailed: 5}},
		{name: "the infra pool wins", reason: "as with the remediation cap",
			objs: []metav1.Object{obj(map[string]string{ProgressDeadlineAnnotation: "90s"}), obj(map[string]string{ProgressDeadlineAnnotation: "20m"})},
			want: ProgressPolicy{Deadline: 20 * time.Minute, MaxFailed: DefaultMaxFailedReplacements}},
		{name: "0 turns each off", objs: []metav1.Object{obj(map[string]string{ProgressDeadlineAnnotation: "0", MaxFailedReplacementsAnnotation: "0"})},
			want: ProgressPolicy{}},
		{name: "unreadable: the default, and an error to show", reason: "a typo must not turn the safety off",
			objs: []metav1.Object{obj(map[string]string{ProgressDeadlineAnnotation: "ten minutes", MaxFailedReplacementsAnnotation: "-1"})},
			want: def, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadProgressPolicy(tc.objs...)
			if got != tc.want || (err != nil) != tc.wantErr {
				t.Fatalf("ReadProgressPolicy = %+v, %v; want %+v, error %v", got, err, tc.want, tc.wantErr)
			}
		})
	}
}

func TestRolloutProgressRoundTrip(t *testing.T) {
	r := RolloutProgress{Model: "abc", ProgressAt: time.Date(2030, 1, 1, 12, 0, 0, 500, time.UTC), Stale: 2, Failed: []string{"i-1"}, Paused: "ReplacementsFailing", Message: "m"}
	got, ok := ParseRolloutProgress(r.String())
	if !ok || got.Model != "abc" || !got.ProgressAt.Equal(r.ProgressAt.Truncate(time.Second)) || got.Paused != r.Paused || len(got.Failed) != 1 {
		t.Fatalf("round trip: %+v, %v", got, ok)
	}
	if reason, _ := SelfPaused(map[string]string{RolloutProgressAnnotation: r.String()}); reason != "ReplacementsFailing" {
		t.Fatalf("SelfPaused = %q", reason)
	}
	for _, bad := range []string{"", "{", `{"stale":1}`} {
		if _, ok := ParseRolloutProgress(bad); ok {
			t.Errorf("%q parsed", bad)
		}
	}
}
