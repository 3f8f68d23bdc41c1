package flexibleversion

import (
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/utils/ptr"
)

func TestAtLeast126(t *testing.T) {
	for v, want := range map[string]bool{
		"v1.26.0": true, "v1.31.2": true, "v1.27.0-rc.1": true, "v2.0.0": true, "1.30.1": true,
		"v1.25.9": false, "v1.22.0": false, "v0.30.0": false,
		// Unreadable: left to the MachinePool's own validation.
		"latest": true, "v1": true, "": true,
	} {
		if got := atLeast126(v); got != want {
			t.Errorf("atLeast126(%q) = %v, want %v", v, got, want)
		}
	}
}

func TestPoolRefAtEitherVersion(t *testing.T) {
	for _, ref := range []map[string]any{
		{"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "AzureMachinePool", "name": "amp"}, // v1beta1
		{"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "AzureMachinePool", "name": "amp"},           // v1beta2
	} {
		mp := map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"infrastructureRef": ref, "version": "v1.25.0"}}}}
		if got := poolRef(mp); got != (infraRef{kind: "AzureMachinePool", name: "amp", version: "v1.25.0"}) {
			t.Errorf("poolRef = %+v", got)
		}
	}
}

// TestWebhookConfiguration: both creations, and only creations, reach the
// webhook, and only for Azure pools; a webhook that cannot be reached lets
// them through.
func TestWebhookConfiguration(t *testing.T) {
	w := WebhookConfiguration(admissionregistrationv1.WebhookClientConfig{URL: ptr.To("https://127.0.0.1:1" + Path)})
	if w.Name != Name || len(w.Webhooks) != 2 {
		t.Fatalf("configuration %s with %d webhooks", w.Name, len(w.Webhooks))
	}
	for i, res := range []string{"machinepools", "azuremachinepools"} {
		h := w.Webhooks[i]
		if len(h.Rules) != 1 || h.Rules[0].Resources[0] != res || len(h.Rules[0].Operations) != 1 || h.Rules[0].Operations[0] != admissionregistrationv1.Create {
			t.Errorf("webhook %s rules %+v, want CREATE of %s", h.Name, h.Rules, res)
		}
		if *h.FailurePolicy != admissionregistrationv1.Ignore || *h.SideEffects != admissionregistrationv1.SideEffectClassNone {
			t.Errorf("webhook %s failurePolicy %s, sideEffects %s", h.Name, *h.FailurePolicy, *h.SideEffects)
		}
		if len(h.MatchConditions) != 1 || !strings.Contains(h.MatchConditions[0].Expression, "Flexible") && !strings.Contains(h.MatchConditions[0].Expression, "'AzureMachinePool'") {
			t.Errorf("webhook %s matchConditions %+v", h.Name, h.MatchConditions)
		}
		if *h.ClientConfig.URL != "https://127.0.0.1:1"+Path {
			t.Errorf("webhook %s clientConfig %+v", h.Name, h.ClientConfig)
		}
	}
}
