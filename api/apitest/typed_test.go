package apitest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
)

// newMachinePool is a small factory for a valid MachinePool.
func newMachinePool(ns, name string, replicas int32) *clusterv1.MachinePool {
	return &clusterv1.MachinePool{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: clusterv1.MachinePoolSpec{
			ClusterName: "demo",
			Replicas:    ptr.To(replicas),
			Template: clusterv1.MachineTemplateSpec{
				Spec: clusterv1.MachineSpec{
					ClusterName: "demo",
					Bootstrap: clusterv1.Bootstrap{ConfigRef: clusterv1.ContractVersionedObjectReference{
						APIGroup: "bootstrap.cluster.x-k8s.io", Kind: "KubeadmConfig", Name: name,
					}},
					InfrastructureRef: clusterv1.ContractVersionedObjectReference{
						APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "LocalMachinePool", Name: name,
					},
					Version: "v1.31.2",
				},
			},
		},
	}
}

// TestMachinePoolScaleSubresource does what `kubectl scale machinepool --replicas 3` does.
func TestMachinePoolScaleSubresource(t *testing.T) {
	ns := env.NewNamespace(t)
	mp := newMachinePool(ns, "scaled", 1)
	if err := env.Client.Create(ctx(), mp); err != nil {
		t.Fatalf("creating MachinePool: %v", err)
	}

	scale := &autoscalingv1.Scale{}
	if err := env.Client.SubResource("scale").Get(ctx(), mp, scale); err != nil {
		t.Fatalf("reading /scale: %v", err)
	}
	if scale.Spec.Replicas != 1 {
		t.Fatalf("/scale spec.replicas = %d, want 1", scale.Spec.Replicas)
	}
	scale.Spec.Replicas = 3
	if err := env.Client.SubResource("scale").Update(ctx(), mp, client.WithSubResourceBody(scale)); err != nil {
		t.Fatalf("updating /scale: %v", err)
	}

	got := &clusterv1.MachinePool{}
	if err := env.Client.Get(ctx(), client.ObjectKeyFromObject(mp), got); err != nil {
		t.Fatalf("reading MachinePool: %v", err)
	}
	if got.Spec.Replicas == nil || *got.Spec.Replicas != 3 {
		t.Fatalf("spec.replicas = %v after scaling, want 3", got.Spec.Replicas)
	}

	scale.Spec.Replicas = -1
	if err := env.Client.SubResource("scale").Update(ctx(), mp, client.WithSubResourceBody(scale)); err == nil {
		t.Fatal("scaling to -1 was accepted")
	}
}

// TestMachinePoolPrinterColumns reads MachinePools as a server-side Table, as
// `kubectl get machinepools` does.
func TestMachinePoolPrinterColumns(t *testing.T) {
	ns := env.NewNamespace(t)
	mp := newMachinePool(ns, "printed", 2)
	if err := env.Client.Create(ctx(), mp); err != nil {
		t.Fatalf("creating MachinePool: %v", err)
	}
	mp.Status.ReadyReplicas = ptr.To[int32](1)
	mp.Status.Phase = string(clusterv1.MachinePoolPhaseScalingUp)
	if err := env.Client.Status().Update(ctx(), mp); err != nil {
		t.Fatalf("updating status: %v", err)
	}

	// kubectl reads the preferred (storage) version, v1beta2; the server returns every
	// column, including those kubectl shows only with -o wide (priority > 0).
	table := getTable(t, fmt.Sprintf("/apis/cluster.x-k8s.io/v1beta2/namespaces/%s/machinepools", ns))
	var names []string
	for _, c := range table.ColumnDefinitions {
		names = append(names, c.Name)
	}
	wantNames := []string{"Name", "Cluster", "Desired", "Current", "Ready", "Available", "Up-to-date", "Paused", "Phase", "Age", "Version"}
	if !reflect.DeepEqual(names, wantNames) {
		t.Fatalf("columns = %v, want %v", names, wantNames)
	}
	if len(table.Rows) != 1 {
		t.Fatalf("got %d rows, want 1", len(table.Rows))
	}
	cells := table.Rows[0].Cells
	want := map[int]any{0: "printed", 1: "demo", 2: float64(2), 4: float64(1), 8: "ScalingUp", 10: "v1.31.2"}
	for i, w := range want {
		if !reflect.DeepEqual(cells[i], w) {
			t.Errorf("column %s = %#v, want %#v", wantNames[i], cells[i], w)
		}
	}
}

func getTable(t *testing.T, path string) *metav1.Table {
	t.Helper()
	hc, err := rest.HTTPClientFor(env.Config)
	if err != nil {
		t.Fatalf("creating HTTP client: %v", err)
	}
	req, err := http.NewRequestWithContext(ctx(), http.MethodGet, env.Config.Host+path, nil)
	if err != nil {
		t.Fatalf("building request: %v", err)
	}
	req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("listing as table: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("listing as table: status %d, %v: %s", resp.StatusCode, err, body)
	}
	table := &metav1.Table{}
	if err := json.Unmarshal(body, table); err != nil {
		t.Fatalf("decoding table: %v", err)
	}
	return table
}

// TestSchemaDefaults checks the defaults the schema applies to infra pools written with
// the Go types and no strategy.
func TestSchemaDefaults(t *testing.T) {
	ns := env.NewNamespace(t)
	amp := &infrav1.AzureMachinePool{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "defaults"},
		Spec: infrav1.AzureMachinePoolSpec{
			Location: "westus2",
			Template: infrav1.AzureMachinePoolMachineTemplate{
				VMSize: "Standard_D2s_v3",
				OSDisk: infrav1.OSDisk{OSType: "Linux", DiskSizeGB: ptr.To[int32](30)},
			},
		},
	}
	if err := env.Client.Create(ctx(), amp); err != nil {
		t.Fatalf("creating AzureMachinePool: %v", err)
	}
	wantStrategy := infrav1.MachinePoolDeploymentStrategy{
		Type: infrav1.RollingUpdateMachinePoolDeploymentStrategyType,
		RollingUpdate: &infrav1.MachineRollingUpdateDeployment{
			MaxUnavailable: ptr.To(intstr.FromInt32(0)),
			MaxSurge:       ptr.To(intstr.FromInt32(1)),
			DeletePolicy:   infrav1.OldestDeletePolicyType,
		},
	}
	if !reflect.DeepEqual(amp.Spec.Strategy, wantStrategy) {
		t.Errorf("azure strategy = %s, want %s", mustJSON(amp.Spec.Strategy), mustJSON(wantStrategy))
	}
	if amp.Spec.OrchestrationMode != infrav1.UniformOrchestrationMode {
		t.Errorf("orchestrationMode = %q, want Uniform", amp.Spec.OrchestrationMode)
	}
	if amp.Spec.Identity != infrav1.VMIdentityNone {
		t.Errorf("identity = %q, want None", amp.Spec.Identity)
	}

	lmp := &infrav1.LocalMachinePool{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "defaults"},
		Spec: infrav1.LocalMachinePoolSpec{
			// A strategy without rollingUpdate still gets the default budgets.
			Strategy: infrav1.MachinePoolDeploymentStrategy{Type: infrav1.RollingUpdateMachinePoolDeploymentStrategyType},
		},
	}
	if err := env.Client.Create(ctx(), lmp); err != nil {
		t.Fatalf("creating LocalMachinePool: %v", err)
	}
	if !reflect.DeepEqual(lmp.Spec.Strategy, wantStrategy) {
		t.Errorf("local strategy = %s, want %s", mustJSON(lmp.Spec.Strategy), mustJSON(wantStrategy))
	}

	// Absent fields (as in a YAML manifest) get CAPA's defaults.
	awsmp := fromYAML(t, bases["AWSMachinePool"])
	awsmp.SetNamespace(ns)
	awsmp.SetName("defaults")
	mergePatch(t, awsmp.Object, "spec: {minSize: null}")
	if err := env.Client.Create(ctx(), awsmp); err != nil {
		t.Fatalf("creating AWSMachinePool: %v", err)
	}
	for field, want := range map[string]any{"minSize": int64(1), "defaultCoolDown": "300s", "defaultInstanceWarmup": "300s"} {
		if got := awsmp.Object["spec"].(map[string]any)[field]; got != want {
			t.Errorf("spec.%s = %#v, want %#v", field, got, want)
		}
	}
}

// TestAWSSubnetsDecodeFromStrings checks that subnets written as plain strings (as CAPA's
// book does) decode into AWSResourceReference IDs through the typed client.
func TestAWSSubnetsDecodeFromStrings(t *testing.T) {
	ns := env.NewNamespace(t)
	u := fromYAML(t, bases["AWSMachinePool"])
	u.SetNamespace(ns)
	u.SetName("subnets")
	mergePatch(t, u.Object, "spec: {subnets: [subnet-1, {id: subnet-2}]}")
	if err := env.Client.Create(ctx(), u); err != nil {
		t.Fatalf("creating AWSMachinePool: %v", err)
	}
	got := &infrav1.AWSMachinePool{}
	if err := env.Client.Get(ctx(), client.ObjectKey{Namespace: ns, Name: "subnets"}, got); err != nil {
		t.Fatalf("reading AWSMachinePool: %v", err)
	}
	var ids []string
	for _, s := range got.Spec.Subnets {
		ids = append(ids, ptr.Deref(s.ID, ""))
	}
	if want := []string{"subnet-1", "subnet-2"}; !reflect.DeepEqual(ids, want) {
		t.Fatalf("subnet IDs = %v, want %v", ids, want)
	}
}
