package nodeagent

import (
	"testing"

	bootstraputil "k8s.io/cluster-bootstrap/token/util"
)

func TestWrongToken(t *testing.T) {
	tests := []struct {
		name  string
		token string
		same  bool // returned unchanged
	}{
		{name: "digits and letters", token: "abcdef.0123456789abcdef"},
		{name: "edge characters rotate", token: "zz9z99.z9z9z9z9z9z9z9z9"},
		{name: "malformed stays", token: "not-a-token", same: true},
		{name: "short secret stays", token: "abcdef.0123", same: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := wrongToken(tt.token)
			if tt.same {
				if got != tt.token {
					t.Fatalf("wrongToken(%q) = %q, want it unchanged", tt.token, got)
				}
				return
			}
			if !bootstraputil.IsValidBootstrapToken(got) {
				t.Fatalf("wrongToken(%q) = %q, not a well-formed token", tt.token, got)
			}
			if got[:7] != tt.token[:7] {
				t.Fatalf("wrongToken(%q) = %q changed the token ID", tt.token, got)
			}
			for i := 7; i < len(got); i++ {
				if got[i] == tt.token[i] {
					t.Fatalf("wrongToken(%q) = %q keeps secret character %d", tt.token, got, i-7)
				}
			}
		})
	}
}
