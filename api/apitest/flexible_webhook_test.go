package apitest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// azurePoolPair returns a MachinePool at version whose infrastructureRef names the
// AzureMachinePool name, and that AzureMachinePool in orchestration mode mode.
func azurePoolPair(t *testing.T, ns, name, version, mode string) (mp, amp *unstructured.Unstructured) {
	t.Helper()
	mp = fromYAML(t, bases["MachinePool"])
	mergePatch(t, mp.Object, fmt.Sprintf("spec: {template: {spec: {version: %s, infrastructureRef: {name: %s}}}}", version, name))
	mp.SetNamespace(ns)
	mp.SetName(name)
	amp = fromYAML(t, bases["AzureMachinePool"])
	mergePatch(t, amp.Object, "spec: {orchestrationMode: "+mode+"}")
	amp.SetNamespace(ns)
	amp.SetName(name)
	return mp, amp
}

// TestFlexibleNeedsKubernetes126 checks that the validating webhook of
// internal/admission/flexibleversion (served and registered by the test control plane, as by
// `mpool up`) refuses a Flexible AzureMachinePool whose MachinePool runs a Kubernetes version
// below v1.26, whichever of the two is created second, with a message naming the field to
// change, admits every other combination, and leaves updates to the provider.
func TestFlexibleNeedsKubernetes126(t *testing.T) {
	ns := env.NewNamespace(t)

	// The API server loads a webhook configuration from an informer that may lag the
	// control plane's registration of it: retry the first refusal until it comes.
	mp, amp := azurePoolPair(t, ns, "flex-old", "v1.22.0", "Flexible")
	if err := env.Client.Create(ctx(), mp); err != nil {
		t.Fatalf("a MachinePool without its AzureMachinePool must be admitted: %v", err)
	}
	var err error
	deadline := time.Now().Add(60 * time.Second)
	for {
		err = env.Client.Create(ctx(), amp.DeepCopy())
		if err != nil || time.Now().After(deadline) {
			break
		}
		_ = env.Client.Delete(ctx(), amp)
		time.Sleep(200 * time.Millisecond)
	}
	wantRefused(t, err, "AzureMachinePool made Flexible under a v1.22.0 MachinePool",
		"spec.orchestrationMode Flexible needs Kubernetes v1.26 or later", "raise its spec.template.spec.version")

	// The AzureMachinePool first, then its MachinePool.
	mp, amp = azurePoolPair(t, ns, "flex-first", "v1.25.9", "Flexible")
	if err := env.Client.Create(ctx(), amp); err != nil {
		t.Fatalf("a Flexible AzureMachinePool without a MachinePool must be admitted: %v", err)
	}
	waitUntilRefused(t, func() error { return env.Client.Create(ctx(), mp.DeepCopy(), client.DryRunAll) })
	wantRefused(t, env.Client.Create(ctx(), mp), "MachinePool v1.25.9 over a Flexible AzureMachinePool",
		"spec.template.spec.version v1.25.9 is below v1.26", "or orchestrationMode Uniform")

	mp.SetResourceVersion("")
	mergePatch(t, mp.Object, "spec: {template: {spec: {version: v1.26.0}}}")
	if err := env.Client.Create(ctx(), mp); err != nil {
		t.Fatalf("MachinePool v1.26.0 over a Flexible AzureMachinePool must be admitted: %v", err)
	}
	mergePatch(t, mp.Object, "spec: {replicas: 5}")
	if err := env.Client.Update(ctx(), mp); err != nil {
		t.Fatalf("scaling an admitted Flexible pool must be admitted: %v", err)
	}
	// Updates are not judged at admission: the Azure provider refuses such a pool instead
	// (test/integration/azure, TestSeedFlexible).
	mergePatch(t, mp.Object, "spec: {template: {spec: {version: v1.25.0}}}")
	if err := env.Client.Update(ctx(), mp); err != nil {
		t.Fatalf("an update is not judged at admission, but lowering the version was refused: %v", err)
	}

	// Admitted combinations.
	for _, c := range []struct{ name, version, mode string }{
		{"uniform-old", "v1.22.0", "Uniform"},
		{"flex-new", "v1.31.2", "Flexible"},
		{"flex-rc", "v1.27.0-rc.1", "Flexible"},
	} {
		mp, amp := azurePoolPair(t, ns, c.name, c.version, c.mode)
		if err := env.Client.Create(ctx(), mp); err != nil {
			t.Errorf("%s: MachinePool %s: %v", c.name, c.version, err)
		}
		if err := env.Client.Create(ctx(), amp); err != nil {
			t.Errorf("%s: AzureMachinePool %s: %v", c.name, c.mode, err)
		}
	}
}

// waitUntilRefused repeats a dry-run write until admission refuses it, for at
// most a minute: the webhook reads the other object of the pair, just written.
func waitUntilRefused(t *testing.T, dryRun func() error) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for dryRun() == nil && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
}

func wantRefused(t *testing.T, err error, what string, wants ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: admitted, want refused", what)
	}
	for _, w := range wants {
		if !strings.Contains(err.Error(), w) {
			t.Fatalf("%s: refusal %q lacks %q", what, err, w)
		}
	}
	t.Logf("%s: refused as expected: %v", what, err)
}
