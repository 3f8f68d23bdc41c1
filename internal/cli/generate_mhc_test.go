package cli

import (
	"context"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/mpool-dev/mpool/examples"
)

// TestGenerateMachineHealthCheck: --machine-health-check adds one
// MachineHealthCheck per MachinePool, in v1beta2, selecting the pool's
// Machines (in the Cluster the local flavor joins, local), that decodes strictly into upstream's type and that the API
// server accepts.
func TestGenerateMachineHealthCheck(t *testing.T) {
	ns := env.NewNamespace(t)
	r := runGenerate(t, nil, "", "generate", "cluster", "demo", "--machine-health-check", "--target-namespace", ns)
	if r.err != nil {
		t.Fatalf("generate: %v", r.err)
	}
	golden(t, "generate_local_machinepool_mhc", strings.ReplaceAll(r.stdout, ns, "NAMESPACE"))
	objs, err := examples.Objects([]byte(r.stdout), "")
	if err != nil {
		t.Fatal(err)
	}
	var mhcs []*clusterv1.MachineHealthCheck
	for _, u := range objs {
		if u.GetKind() != "MachineHealthCheck" {
			continue
		}
		b, err := yaml.Marshal(u.Object)
		if err != nil {
			t.Fatal(err)
		}
		m := &clusterv1.MachineHealthCheck{}
		if err := yaml.UnmarshalStrict(b, m); err != nil {
			t.Fatalf("the MachineHealthCheck does not decode strictly: %v", err)
		}
		mhcs = append(mhcs, m)
	}
	if len(mhcs) != 1 {
		t.Fatalf("%d MachineHealthChecks, want one for the one MachinePool", len(mhcs))
	}
	m := mhcs[0]
	if m.APIVersion != clusterv1.GroupVersion.String() || m.Namespace != ns || m.Spec.ClusterName != "local" ||
		m.Spec.Selector.MatchLabels[clusterv1.MachinePoolNameLabel] != m.Name || m.Spec.Remediation.TriggerIf.UnhealthyLessThanOrEqualTo.String() != "40%" {
		t.Errorf("MachineHealthCheck: %+v", m)
	}
	for _, u := range objs {
		if err := env.Client.Create(context.Background(), u); err != nil {
			t.Errorf("creating %s %s: %v", u.GetKind(), u.GetName(), err)
		}
	}
}
