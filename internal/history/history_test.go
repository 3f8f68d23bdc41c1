package history

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

func TestChanges(t *testing.T) {
	prev := Snapshot{
		Template:       json.RawMessage(`{"spec":{"version":"v1.31.2","bootstrap":{"configRef":{"name":"a"}}}}`),
		Infrastructure: Object{Kind: "AzureMachinePool", Name: "p", Spec: json.RawMessage(`{"template":{"vmSize":"Standard_D2s_v3","image":{"id":"x"}},"zones":["1","2"]}`)},
		Bootstrap:      &Object{Kind: "KubeadmConfig", Name: "a", Spec: json.RawMessage(`{"files":[{"path":"/a"}]}`)},
	}
	cur := Snapshot{
		Template:       json.RawMessage(`{"spec":{"version":"v1.32.0","bootstrap":{"configRef":{"name":"a"}}}}`),
		Infrastructure: Object{Kind: "AzureMachinePool", Name: "p", Spec: json.RawMessage(`{"template":{"vmSize":"Standard_D4s_v3"},"zones":["1"]}`)},
		Bootstrap:      &Object{Kind: "KubeadmConfig", Name: "a", Spec: json.RawMessage(`{"files":[{"path":"/a"}]}`)},
	}
	got := Changes(prev, cur)
	want := []string{
		"MachinePool spec.template.spec.version: v1.31.2 → v1.32.0",
		"AzureMachinePool spec.template.image.id: x → (unset)",
		"AzureMachinePool spec.template.vmSize: Standard_D2s_v3 → Standard_D4s_v3",
		"AzureMachinePool spec.zones[1]: 2 → (unset)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("Changes:\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	if got := Changes(cur, cur); len(got) != 0 {
		t.Errorf("no change expected, got %v", got)
	}
	long := cur
	long.Bootstrap = &Object{Kind: "KubeadmConfig", Name: "b", Spec: json.RawMessage(`{"preKubeadmCommands":["` + strings.Repeat("x", 100) + `"]}`)}
	got = Changes(cur, long)
	if len(got) != 3 || got[0] != "KubeadmConfig: a → b" || !strings.HasSuffix(got[2], "...") {
		t.Errorf("bootstrap config renamed and a long value cut: %v", got)
	}
}

func TestHistoryLimit(t *testing.T) {
	for v, want := range map[string]int{"": DefaultHistoryLimit, "2": 2, "25": 25, "1": DefaultHistoryLimit, "x": DefaultHistoryLimit} {
		mp := &clusterv1.MachinePool{}
		if v != "" {
			mp.Annotations = map[string]string{RevisionHistoryLimitAnnotation: v}
		}
		got, err := HistoryLimit(mp)
		if got != want || (err != nil) != (v == "1" || v == "x") {
			t.Errorf("limit %q: %d, %v; want %d", v, got, err, want)
		}
	}
}

func TestNameIsStableAndBounded(t *testing.T) {
	a, b := Name("pool", "hash-a"), Name("pool", "hash-b")
	if a == b || a != Name("pool", "hash-a") || !strings.HasPrefix(a, "pool-") {
		t.Errorf("names %q %q", a, b)
	}
	if n := Name(strings.Repeat("p", 253), "h"); len(n) > 63 {
		t.Errorf("name of %d characters", len(n))
	}
}

func TestTakeSnapshotLeavesOutWhatIsNotTheModel(t *testing.T) {
	mp := &clusterv1.MachinePool{ObjectMeta: metav1.ObjectMeta{Name: "mp"}}
	mp.Spec.Template.Spec.Version = "v1.32.0"
	mp.Spec.Template.Spec.Bootstrap.DataSecretName = ptr("secret")
	pool := &clusterv1.MachinePool{ObjectMeta: metav1.ObjectMeta{Name: "pool"}} // any object with a spec
	pool.Spec.ProviderIDList = []string{"a"}
	pool.Spec.ClusterName = "c"
	pool.SetGroupVersionKind(clusterv1.GroupVersion.WithKind("MachinePool"))
	s, err := TakeSnapshot(mp, pool, nil)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(s.Template), "secret") || !strings.Contains(string(s.Template), "v1.32.0") {
		t.Errorf("template %s", s.Template)
	}
	if strings.Contains(string(s.Infrastructure.Spec), "providerIDList") || !strings.Contains(string(s.Infrastructure.Spec), `"clusterName":"c"`) {
		t.Errorf("infrastructure spec %s", s.Infrastructure.Spec)
	}
	if s.Infrastructure.Kind != "MachinePool" || s.Infrastructure.APIVersion != clusterv1.GroupVersion.String() || s.Bootstrap != nil {
		t.Errorf("snapshot %+v", s)
	}
}

func ptr[T any](v T) *T { return &v }

// TestCanonicalDataSurvivesAPatch: the data Record writes is what the API
// server writes back when it applies the garbage collector's strategic
// merge patch to a revision (removing an owner reference), byte for byte:
// the API server refuses any change of a ControllerRevision's data, so a
// revision written in another form could never be orphaned or labelled.
func TestCanonicalDataSurvivesAPatch(t *testing.T) {
	s := Snapshot{
		Template:       json.RawMessage(`{"spec":{"version":"v1.31.2","clusterName":"c1","bootstrap":{"configRef":{"name":"a"}}}}`),
		Infrastructure: Object{APIVersion: "infrastructure.cluster.x-k8s.io/v1beta1", Kind: "LocalMachinePool", Name: "p", Spec: json.RawMessage(`{"template":{"image":"x<y & z","instanceType":"sim.small"},"diskSizeGB":128,"weight":0.5}`)},
		Bootstrap:      &Object{Kind: "KubeadmConfig", Name: "a", Spec: json.RawMessage(`{"files":[{"path":"/a","content":"{{ ds.meta_data[\"local_hostname\"] }}"}]}`)},
	}
	data, err := Canonical(s)
	if err != nil {
		t.Fatal(err)
	}
	cr := &appsv1.ControllerRevision{
		TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "ControllerRevision"},
		ObjectMeta: metav1.ObjectMeta{Name: "p-0123456789", Namespace: "ns", OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "cluster.x-k8s.io/v1beta2", Kind: "MachinePool", Name: "p", UID: "u1",
		}}},
		Data:     runtime.RawExtension{Raw: data},
		Revision: 1,
	}
	orig, err := json.Marshal(cr)
	if err != nil {
		t.Fatal(err)
	}
	// The garbage collector's patch when it orphans a dependent.
	patch := []byte(`{"metadata":{"ownerReferences":[{"$patch":"delete","uid":"u1"}],"uid":"` + string(cr.UID) + `"}}`)
	out, err := strategicpatch.StrategicMergePatch(orig, patch, &appsv1.ControllerRevision{})
	if err != nil {
		t.Fatal(err)
	}
	var got appsv1.ControllerRevision
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if string(got.Data.Raw) != string(data) {
		t.Errorf("the data after a patch:\n  %s\nwritten:\n  %s", got.Data.Raw, data)
	}
	if len(got.OwnerReferences) != 0 {
		t.Errorf("the patch left owner references %v", got.OwnerReferences)
	}
	var back Snapshot
	if err := json.Unmarshal(data, &back); err != nil || back.Infrastructure.Name != "p" || back.Bootstrap == nil {
		t.Errorf("the canonical data reads back as %+v (%v)", back, err)
	}
	// The form before: the snapshot's struct order, which the patch reorders.
	raw, _ := json.Marshal(s)
	if string(raw) == string(data) {
		t.Error("the struct's encoding is already canonical: the test no longer shows the difference")
	}
}
