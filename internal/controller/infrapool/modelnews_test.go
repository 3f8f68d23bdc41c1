package infrapool

import (
	"testing"

	"github.com/mpool-dev/mpool/internal/provider/contract"
)

// TestModelNews: a reported instance whose model changes (a rollout marks it
// stale, or it is brought up to date) is news for the pass with work; an
// unreported one, or one whose model did not change, is bookkeeping.
func TestModelNews(t *testing.T) {
	for _, tc := range []struct {
		name               string
		reported, upToDate bool
		latest             bool
		want               bool
	}{
		{"rollout marks it stale", true, true, false, true},
		{"brought up to date", true, false, true, true},
		{"still up to date", true, true, true, false},
		{"still stale", true, false, false, false},
		{"never reported", false, false, true, false},
	} {
		v := contract.InstanceView{Reported: tc.reported, UpToDate: tc.upToDate}
		if got := modelNews(v, contract.InstanceReport{LatestModelApplied: tc.latest}); got != tc.want {
			t.Errorf("%s: modelNews = %v, want %v", tc.name, got, tc.want)
		}
	}
}
