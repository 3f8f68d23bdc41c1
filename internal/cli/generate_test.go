package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/mpool-dev/mpool/examples"
	"github.com/mpool-dev/mpool/sim/face/awsface"
	"github.com/mpool-dev/mpool/sim/face/azureface"
	"github.com/mpool-dev/mpool/sim/face/eksface"
	"github.com/mpool-dev/mpool/templates"
)

// flavorEnv is the environment of the golden outputs: the variables the
// cloud flavors require, with the seeds' sample values.
var flavorEnv = map[string]string{
	"AZURE_LOCATION":          "westus2",
	"AZURE_NODE_MACHINE_TYPE": "Standard_D2s_v3",
	"AWS_NODE_MACHINE_TYPE":   "m5.large",
	"AWS_SSH_KEY_NAME":        "default",
}

// flavorArgs are the flags of each flavor's golden output, as the seeds run
// clusterctl: the cloud flavors with a --kubernetes-version, the local one
// with none.
func flavorArgs(f templates.Flavor) []string {
	args := []string{"generate", "cluster", "my-cluster", "--infrastructure", f.Infrastructure, "--flavor", f.Name}
	switch {
	case f.Name == "machinepool-flex":
		// Flexible orchestration needs v1.26 (refused at admission below).
		args = append(args, "--kubernetes-version", "v1.26.0")
	case f.Infrastructure == "gcp":
		// The version of the flavor's default image (CAPG's family).
		args = append(args, "--kubernetes-version", "v1.30.4")
	case f.Infrastructure != "local":
		args = append(args, "--kubernetes-version", "v1.22.0")
	}
	return args
}

type generateRun struct {
	stdout, stderr string
	err            error
}

// runGenerate runs `mpool generate ARGS...` with the environment env and,
// without --config, the clusterctl config file defaultConfig.
func runGenerate(t *testing.T, env map[string]string, defaultConfig string, args ...string) generateRun {
	t.Helper()
	var stdout, stderr syncBuffer
	root := &cobra.Command{Use: "mpool", SilenceUsage: true, SilenceErrors: true}
	root.AddCommand(newGenerateCommandWith(generateOptions{
		env: func(k string) (string, bool) {
			v, ok := env[k]
			return v, ok
		},
		defaultConfig:    defaultConfig,
		currentNamespace: func() string { return "default" },
	}))
	root.SetArgs(args)
	root.SetOut(&stdout)
	root.SetErr(&stderr)
	err := root.ExecuteContext(context.Background())
	return generateRun{stdout: stdout.String(), stderr: stderr.String(), err: err}
}

func goldenName(f templates.Flavor, suffix string) string {
	return "generate_" + f.Infrastructure + "_" + strings.ReplaceAll(f.Name, "-", "_") + suffix
}

// TestGenerateFlavors: every flavor's output, what it says it left out, and
// its variables, against the golden files (-update rewrites them).
func TestGenerateFlavors(t *testing.T) {
	for _, f := range templates.Flavors() {
		t.Run(f.Infrastructure+"/"+f.Name, func(t *testing.T) {
			r := runGenerate(t, flavorEnv, "", flavorArgs(f)...)
			if r.err != nil {
				t.Fatalf("generate: %v", r.err)
			}
			golden(t, goldenName(f, ""), r.stdout)
			golden(t, goldenName(f, "_stderr"), r.stderr)
			if n := strings.Count(r.stderr, "mpool generate: left out "); n != len(f.LeftOut) {
				t.Errorf("%d left-out lines on stderr, want %d:\n%s", n, len(f.LeftOut), r.stderr)
			}

			r = runGenerate(t, nil, "", "generate", "cluster", "my-cluster", "-i", f.Infrastructure, "-f", f.Name, "--list-variables")
			if r.err != nil {
				t.Fatalf("--list-variables: %v", r.err)
			}
			golden(t, goldenName(f, "_variables"), r.stdout)
		})
	}
}

// TestGenerateLocalNeedsNoVariables: the local flavor generates with nothing
// set, and for the cluster name "local" it is the sample pool of `mpool up`,
// examples/v1beta2/local-machinepool.yaml (upstream's conversion of
// examples/local/machinepool.yaml to v1beta2).
func TestGenerateLocalNeedsNoVariables(t *testing.T) {
	r := runGenerate(t, nil, "", "generate", "cluster", "local")
	if r.err != nil {
		t.Fatalf("generate: %v", r.err)
	}
	got, err := examples.Objects([]byte(r.stdout), "")
	if err != nil {
		t.Fatal(err)
	}
	want, err := examples.Objects(examples.LocalMachinePool, "default")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the local flavor for cluster name local differs from examples/v1beta2/local-machinepool.yaml:\n%s", r.stdout)
	}
	sample, err := samples["local"].objects()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(sample, want) {
		t.Errorf("mpool up's sample differs from examples/v1beta2/local-machinepool.yaml")
	}
}

func TestGenerateVariables(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	config := write("clusterctl.yaml", "AZURE_LOCATION: northeurope\nazure_node_machine_type: Standard_B2s\nWORKER_MACHINE_COUNT: 5\n"+
		"providers:\n- name: azure\n  type: InfrastructureProvider\n")
	from := write("template.yaml", `apiVersion: cluster.x-k8s.io/v1beta1
kind: MachinePool
metadata:
  name: ${CLUSTER_NAME}-${POOL_SUFFIX:=pool}
  labels:
    team: ${TEAM:-platform}
    prefixed: ${PREFIXED/#pool/mp}
spec:
  clusterName: ${CLUSTER_NAME}
  replicas: ${WORKER_MACHINE_COUNT:=1}
  template:
    spec:
      bootstrap:
        dataSecretName: ${SECRET}
      clusterName: ${CLUSTER_NAME}
      infrastructureRef:
        apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
        kind: AzureMachinePool
        name: ${CLUSTER_NAME}
---
apiVersion: controlplane.cluster.x-k8s.io/v1beta1
kind: KubeadmControlPlane
metadata:
  name: ${CLUSTER_NAME}
`)
	azure := []string{"generate", "cluster", "c1", "-i", "azure", "--kubernetes-version", "v1.22.0"}
	tests := []struct {
		name          string
		env           map[string]string
		defaultConfig string
		args          []string
		wantErr       string
		want          []string // substrings of stdout
		wantStderr    []string
	}{
		{
			name:    "a missing variable is an error naming every missing variable, in clusterctl's words",
			args:    []string{"generate", "cluster", "c1", "--from", filepath.Join("testdata", "upstream", "aws-eks-managedmachinepool.yaml")},
			wantErr: "value for variables [AWS_REGION, AWS_SSH_KEY_NAME, KUBERNETES_VERSION, WORKER_MACHINE_COUNT] is not set. Please set the value using os environment variables or the clusterctl config file",
		},
		{
			name: "the config file gives variables, its keys case-insensitive, its sections ignored",
			args: append(azure, "--config", config),
			want: []string{"location: northeurope", "vmSize: Standard_B2s", "replicas: 5"},
		},
		{
			name:          "the default config file is read when it exists",
			defaultConfig: config,
			args:          azure,
			want:          []string{"location: northeurope"},
		},
		{
			name:          "a missing default config file is no error",
			defaultConfig: filepath.Join(dir, "none.yaml"),
			env:           flavorEnv,
			args:          azure,
			want:          []string{"location: westus2"},
		},
		{
			name:    "a missing --config file is an error",
			args:    append(azure, "--config", filepath.Join(dir, "none.yaml")),
			wantErr: "reading the clusterctl config file",
		},
		{
			name: "the environment wins over the config file, flags over both",
			env:  map[string]string{"AZURE_LOCATION": "uksouth", "WORKER_MACHINE_COUNT": "7", "KUBERNETES_VERSION": "v1.1.1"},
			args: append(azure, "--config", config, "--worker-machine-count", "2", "--target-namespace", "team-a"),
			want: []string{"location: uksouth", "vmSize: Standard_B2s", "replicas: 2", "version: v1.22.0", "namespace: team-a"},
		},
		{
			name:    "a WORKER_MACHINE_COUNT that is no count is an error",
			env:     map[string]string{"WORKER_MACHINE_COUNT": "three"},
			args:    []string{"generate", "cluster", "c1"},
			wantErr: `invalid value "three" for WORKER_MACHINE_COUNT`,
		},
		{
			name:    "a Kubernetes version that is no version is an error",
			args:    []string{"generate", "cluster", "c1", "--kubernetes-version", "1.x"},
			wantErr: `invalid --kubernetes-version "1.x"`,
		},
		{
			name:    "a cluster name that is no DNS name is an error",
			args:    []string{"generate", "cluster", "My_Cluster"},
			wantErr: `invalid cluster name "My_Cluster"`,
		},
		{
			name:    "an unknown flavor names the flavors there are",
			args:    []string{"generate", "cluster", "c1", "-i", "azure", "-f", "machinepool-windows"},
			wantErr: "its flavors: aks, machinepool, machinepool-flex",
		},
		{
			name: "--from a file: clusterctl's syntax, the target namespace, a note for kinds mpool does not serve",
			env:  map[string]string{"SECRET": "boot", "PREFIXED": "pool-a"},
			args: []string{"generate", "cluster", "c1", "--from", from},
			want: []string{"name: c1-pool\n  namespace: default\n", "team: platform", "prefixed: mp-a", "dataSecretName: boot", "replicas: 1", "kind: KubeadmControlPlane"},
			wantStderr: []string{"mpool generate: note: KubeadmControlPlane c1 (controlplane.cluster.x-k8s.io/v1beta1) is not served by mpool; " +
				"applying it needs its provider's CRDs"},
		},
		{
			name:    "--from a file with a missing variable",
			args:    []string{"generate", "cluster", "c1", "--from", from},
			wantErr: "value for variables [SECRET] is not set",
		},
		{
			name:    "${VAR/#/prefix}, an empty pattern, is refused as clusterctl's envsubst refuses it",
			args:    []string{"generate", "cluster", "c1", "--from", write("empty-pattern.yaml", "kind: ConfigMap\nmetadata:\n  name: ${CLUSTER_NAME/#/cm-}\n")},
			wantErr: "parsing the template's variables: unable to parse substitution within function",
		},
		{
			name:    "--from and --flavor together are refused",
			args:    []string{"generate", "cluster", "c1", "--from", from, "--flavor", "machinepool"},
			wantErr: "--from and --flavor/--infrastructure choose the template two ways",
		},
		{
			name: "--list-variables of a --from file",
			args: []string{"generate", "cluster", "c1", "--from", from, "--list-variables"},
			want: []string{`Required Variables:
  - SECRET

Optional Variables:
  - CLUSTER_NAME          (defaults to c1)
  - POOL_SUFFIX           (defaults to pool)
  - PREFIXED              (optional)
  - TEAM                  (defaults to platform)
  - WORKER_MACHINE_COUNT  (defaults to 1)
`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runGenerate(t, tt.env, tt.defaultConfig, tt.args...)
			switch {
			case tt.wantErr == "" && r.err != nil:
				t.Fatalf("unexpected error: %v", r.err)
			case tt.wantErr != "" && (r.err == nil || !strings.Contains(r.err.Error(), tt.wantErr)):
				t.Fatalf("error = %v, want one containing %q", r.err, tt.wantErr)
			}
			for _, w := range tt.want {
				if !strings.Contains(r.stdout, w) {
					t.Errorf("stdout does not contain %q:\n%s", w, r.stdout)
				}
			}
			for _, w := range tt.wantStderr {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr does not contain %q:\n%s", w, r.stderr)
				}
			}
		})
	}
}

func TestGenerateWriteTo(t *testing.T) {
	path := filepath.Join(t.TempDir(), "my-cluster.yaml")
	r := runGenerate(t, nil, "", "generate", "cluster", "demo", "--write-to", path)
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.stdout != "" {
		t.Errorf("stdout is not empty with --write-to:\n%s", r.stdout)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "name: demo-mp-0") {
		t.Errorf("%s does not hold the pool:\n%s", path, b)
	}
}

// TestGenerateAppliesToAPIServer: every flavor's output is created as is
// by the real API server, with its admission rules, in a fresh namespace,
// and without a warning: Cluster API's own kinds are generated in today's
// version (v1beta2), as current provider templates have them, so the API
// server has no deprecation to warn of (it warned three times per apply of
// the v1beta1 flavors).
func TestGenerateAppliesToAPIServer(t *testing.T) {
	for _, f := range templates.Flavors() {
		t.Run(f.Infrastructure+"/"+f.Name, func(t *testing.T) {
			ns := env.NewNamespace(t)
			r := runGenerate(t, flavorEnv, "", append(flavorArgs(f), "--target-namespace", ns)...)
			if r.err != nil {
				t.Fatalf("generate: %v", r.err)
			}
			objs, err := examples.Objects([]byte(r.stdout), "")
			if err != nil {
				t.Fatal(err)
			}
			warnings := &warningRecorder{}
			cfg := rest.CopyConfig(env.Config)
			cfg.WarningHandlerWithContext = warnings
			c, err := client.New(cfg, client.Options{Scheme: env.Client.Scheme()})
			if err != nil {
				t.Fatal(err)
			}
			for _, u := range objs {
				if u.GetNamespace() != ns {
					t.Errorf("%s %s is in namespace %q, want %q", u.GetKind(), u.GetName(), u.GetNamespace(), ns)
				}
				if err := c.Create(context.Background(), u); err != nil {
					t.Errorf("creating %s %s: %v", u.GetKind(), u.GetName(), err)
				}
			}
			if w := warnings.all(); len(w) > 0 {
				t.Errorf("the API server warned on creating the %s/%s flavor's objects:\n%s", f.Infrastructure, f.Name, strings.Join(w, "\n"))
			}
		})
	}
}

// TestGenerateCurrentVersions: every flavor writes Cluster API's own kinds
// (cluster.x-k8s.io, bootstrap.cluster.x-k8s.io) in v1beta2, and every
// object it writes decodes strictly (no unknown or duplicate field) into its
// Go type: upstream Cluster API's for Cluster API's kinds, mpool's for its
// infrastructure kinds.
func TestGenerateCurrentVersions(t *testing.T) {
	s := env.Client.Scheme()
	for _, f := range templates.Flavors() {
		t.Run(f.Infrastructure+"/"+f.Name, func(t *testing.T) {
			r := runGenerate(t, flavorEnv, "", flavorArgs(f)...)
			if r.err != nil {
				t.Fatalf("generate: %v", r.err)
			}
			objs, err := examples.Objects([]byte(r.stdout), "")
			if err != nil {
				t.Fatal(err)
			}
			for _, u := range objs {
				gvk := u.GroupVersionKind()
				switch gvk.Group {
				case "cluster.x-k8s.io", "bootstrap.cluster.x-k8s.io":
					if gvk.Version != "v1beta2" {
						t.Errorf("%s %s is %s, want %s/v1beta2", gvk.Kind, u.GetName(), gvk.GroupVersion(), gvk.Group)
					}
				}
				typed, err := s.New(gvk)
				if err != nil {
					t.Errorf("%s %s: no Go type for %s: %v", gvk.Kind, u.GetName(), gvk, err)
					continue
				}
				b, err := json.Marshal(u.Object)
				if err != nil {
					t.Fatal(err)
				}
				if err := yaml.UnmarshalStrict(b, typed); err != nil {
					t.Errorf("%s %s does not decode strictly into %T: %v", gvk.Kind, u.GetName(), typed, err)
				}
			}
		})
	}
}

// warningRecorder keeps the warnings the API server sends.
type warningRecorder struct {
	mu       sync.Mutex
	warnings []string
}

func (w *warningRecorder) HandleWarningHeaderWithContext(_ context.Context, code int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.warnings = append(w.warnings, fmt.Sprintf("%d %s", code, text))
}

func (w *warningRecorder) all() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.warnings)
}

func TestLookupSample(t *testing.T) {
	tests := []struct{ sample, wantPool, wantErr string }{
		{sample: "local", wantPool: "local-mp-0"},
		{sample: "azure", wantPool: "azure-mp-0"},
		{sample: "aws", wantPool: "aws-mp-0"},
		{sample: "eks", wantPool: "eks-pool-0"},
		{sample: "gcp", wantPool: "gcp-mp-0"},
		{sample: "aks", wantPool: "aks-pool0"},
		{sample: "openstack", wantErr: `unknown --sample "openstack": local, azure, aws, gcp, eks or aks`},
	}
	for _, tt := range tests {
		t.Run(tt.sample, func(t *testing.T) {
			s, err := lookupSample(tt.sample)
			if (tt.wantErr == "") != (err == nil) || err != nil && !strings.HasPrefix(err.Error(), tt.wantErr) {
				t.Fatalf("lookupSample(%q) = %v, want %q", tt.sample, err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if s.pool() != tt.wantPool {
				t.Errorf("the sample's pool is %s, want %s", s.pool(), tt.wantPool)
			}
			objs, err := s.objects()
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, u := range objs {
				if u.GetKind() == "MachinePool" && u.GetName() == tt.wantPool && u.GetNamespace() == "default" {
					found = true
					if r, _, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "replicas"); fmt.Sprint(r) != "3" {
						t.Errorf("the sample pool has %v replicas, want 3", r)
					}
					if v, _, _ := unstructured.NestedString(u.Object, "spec", "template", "spec", "version"); s.version != "" && v != s.version {
						t.Errorf("the sample pool's version is %q, want %q", v, s.version)
					}
				}
			}
			if !found {
				t.Errorf("the sample's objects have no MachinePool default/%s", tt.wantPool)
			}
		})
	}
}

// TestCloudFlavorDefaults: with no variables set, the azure and aws
// flavors target the simulated clouds of `mpool up` — their defaults are
// cloudsim's — at a Kubernetes version the simulated AWS has an AMI of, as
// is the version the aws sample's "Try next" lines roll to.
func TestCloudFlavorDefaults(t *testing.T) {
	field := func(objs map[string]*unstructured.Unstructured, kind string, path ...string) string {
		t.Helper()
		if objs[kind] == nil {
			t.Fatalf("no %s", kind)
		}
		v, _, _ := unstructured.NestedString(objs[kind].Object, path...)
		return v
	}
	for _, flavor := range []string{"machinepool", "machinepool-flex"} {
		r := runGenerate(t, nil, "", "generate", "cluster", "c1", "-i", "azure", "-f", flavor)
		if r.err != nil {
			t.Fatalf("azure %s: %v", flavor, r.err)
		}
		objs := objectsByKind(t, r.stdout)
		for _, c := range []struct{ got, want string }{
			{field(objs, "AzureCluster", "spec", "subscriptionID"), azureface.AzureDefaultSubscriptionID},
			{field(objs, "AzureCluster", "spec", "location"), azureface.AzureDefaultLocation},
			{field(objs, "AzureMachinePool", "spec", "location"), azureface.AzureDefaultLocation},
			{field(objs, "AzureClusterIdentity", "spec", "tenantID"), azureface.AzureDefaultTenantID},
			{field(objs, "AzureClusterIdentity", "spec", "clientID"), azureface.AzureDefaultClientID},
			{field(objs, "Secret", "stringData", "clientSecret"), azureface.AzureDefaultClientSecret},
			{field(objs, "AzureClusterIdentity", "spec", "clientSecret", "name"), field(objs, "Secret", "metadata", "name")},
			{field(objs, "AzureCluster", "spec", "identityRef", "name"), field(objs, "AzureClusterIdentity", "metadata", "name")},
			{field(objs, "Cluster", "spec", "infrastructureRef", "name"), field(objs, "AzureCluster", "metadata", "name")},
		} {
			if c.got != c.want {
				t.Errorf("azure %s: %q, want %q", flavor, c.got, c.want)
			}
		}
	}
	r := runGenerate(t, nil, "", "generate", "cluster", "c1", "-i", "aws", "-f", "machinepool")
	if r.err != nil {
		t.Fatalf("aws machinepool: %v", r.err)
	}
	objs := objectsByKind(t, r.stdout)
	if got := field(objs, "AWSCluster", "spec", "region"); got != awsface.AWSDefaultRegion {
		t.Errorf("aws: region %q, want %q", got, awsface.AWSDefaultRegion)
	}
	if got := field(objs, "Cluster", "spec", "infrastructureRef", "name"); got != "c1" {
		t.Errorf("aws: the Cluster's infrastructureRef names %q, want c1", got)
	}
	for _, v := range []string{field(objs, "MachinePool", "spec", "template", "spec", "version"), samples["aws"].nextVersion} {
		if !slices.Contains(awsface.AWSKubernetesVersions, v) {
			t.Errorf("aws: the simulated AWS has no AMI of %s (it has %v)", v, awsface.AWSKubernetesVersions)
		}
	}

	// EKS: the cluster `mpool up` registers, in its region, a subnet of
	// that region's default VPC; the sample one minor version behind the
	// cluster, its "Try next" version the cluster's.
	r = runGenerate(t, nil, "", "generate", "cluster", "c1", "-i", "aws", "-f", "eks-managedmachinepool")
	if r.err != nil {
		t.Fatalf("aws eks-managedmachinepool: %v", r.err)
	}
	objs = objectsByKind(t, r.stdout)
	subnets, _, _ := unstructured.NestedStringSlice(objs["AWSManagedMachinePool"].Object, "spec", "subnetIDs")
	defaultSubnets := awsface.AWSDefaultSubnetIDs(awsface.AWSDefaultAccountID, awsface.AWSDefaultRegion)
	for _, c := range []struct{ what, got, want string }{
		{"eksClusterName", field(objs, "AWSManagedControlPlane", "spec", "eksClusterName"), eksface.EKSDefaultClusterName},
		{"region", field(objs, "AWSManagedControlPlane", "spec", "region"), awsface.AWSDefaultRegion},
		{"version", field(objs, "AWSManagedControlPlane", "spec", "version"), "v" + eksface.EKSDefaultVersion + ".0"},
		{"the MachinePool's version (kubectl's VERSION column)", field(objs, "MachinePool", "spec", "template", "spec", "version"), "v" + eksface.EKSDefaultVersion + ".0"},
		{"infrastructureRef", field(objs, "Cluster", "spec", "infrastructureRef", "name"), field(objs, "AWSManagedControlPlane", "metadata", "name")},
		{"subnetIDs", strings.Join(subnets, ","), defaultSubnets[awsface.AWSDefaultRegion+"a"]},
		{"the sample's next version", strings.TrimSuffix(samples["eks"].nextVersion, ".0"), "v" + eksface.EKSDefaultVersion},
		{"the sample's version", strings.TrimSuffix(samples["eks"].version, ".0"), fmt.Sprintf("v1.%d", eksMinor(t, eksface.EKSDefaultVersion)-1)},
	} {
		if c.got != c.want {
			t.Errorf("eks: %s %q, want %q", c.what, c.got, c.want)
		}
	}

	// AKS: the sample names the AKS cluster `mpool up` registers for it,
	// its pools at the cluster's default version, "Try next" the cluster's.
	sobjs, err := samples["aks"].objects()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*unstructured.Unstructured{}
	for _, u := range sobjs {
		byName[u.GetKind()+"/"+u.GetName()] = u
	}
	str := func(key string, path ...string) string {
		u := byName[key]
		if u == nil {
			return "<no " + key + ">"
		}
		v, _, _ := unstructured.NestedString(u.Object, path...)
		return v
	}
	cp := "AzureManagedControlPlane/" + azureface.AKSSampleClusterName
	for _, c := range []struct{ what, got, want string }{
		{"subscriptionID", str(cp, "spec", "subscriptionID"), azureface.AzureDefaultSubscriptionID},
		{"resourceGroupName", str(cp, "spec", "resourceGroupName"), azureface.AKSSampleClusterName},
		{"location", str(cp, "spec", "location"), azureface.AzureDefaultLocation},
		{"the Cluster's controlPlaneRef (CAPZ's shape)", str("Cluster/"+azureface.AKSSampleClusterName, "spec", "controlPlaneRef", "kind") + "/" +
			str("Cluster/"+azureface.AKSSampleClusterName, "spec", "controlPlaneRef", "name"), cp},
		{"the Cluster's infrastructureRef (CAPZ's shape)", str("Cluster/"+azureface.AKSSampleClusterName, "spec", "infrastructureRef", "kind") + "/" +
			str("Cluster/"+azureface.AKSSampleClusterName, "spec", "infrastructureRef", "name"), "AzureManagedCluster/" + azureface.AKSSampleClusterName},
		{"the AzureManagedCluster", str("AzureManagedCluster/"+azureface.AKSSampleClusterName, "kind"), "AzureManagedCluster"},
		{"the System pool's mode", str("AzureManagedMachinePool/aks-pool0", "spec", "mode"), "System"},
		{"the User pool's mode", str("AzureManagedMachinePool/aks-pool1", "spec", "mode"), "User"},
		{"the pool's version", str("MachinePool/aks-pool0", "spec", "template", "spec", "version"), "v" + azureface.AKSDefaultVersion},
		{"the sample's next version", samples["aks"].nextVersion, "v" + azureface.AKSSampleVersion},
	} {
		if c.got != c.want {
			t.Errorf("aks: %s %q, want %q", c.what, c.got, c.want)
		}
	}
}

// eksMinor is the minor of an EKS version "1.x".
func eksMinor(t *testing.T, v string) int {
	t.Helper()
	var minor int
	if _, err := fmt.Sscanf(v, "1.%d", &minor); err != nil {
		t.Fatalf("EKS version %q: %v", v, err)
	}
	return minor
}

// TestTryNextCommands: the commands `mpool up` prints work as printed.
func TestTryNextCommands(t *testing.T) {
	dir := t.TempDir()
	onPath := filepath.Join(dir, "mpool")
	if err := os.WriteFile(onPath, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "mpool")
	if err := os.WriteFile(other, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	lookPath := func(string) (string, error) { return onPath, nil }
	notOnPath := func(string) (string, error) { return "", os.ErrNotExist }
	tests := []struct {
		name, executable string
		lookPath         func(string) (string, error)
		want             string
	}{
		{name: "go run builds into a go-build directory", executable: "/tmp/go-build123/b001/exe/mpool", lookPath: lookPath, want: "go run ./cmd/mpool"},
		{name: "the binary on PATH", executable: onPath, lookPath: lookPath, want: "mpool"},
		{name: "another mpool on PATH is not this one", executable: other, lookPath: lookPath, want: other},
		{name: "not on PATH: its own path", executable: other, lookPath: notOnPath, want: other},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := mpoolCommand(tt.lookPath, tt.executable); got != tt.want {
				t.Errorf("mpoolCommand = %q, want %q", got, tt.want)
			}
		})
	}
	var out strings.Builder
	nextSteps(&out, samples["local"], "/k", "go run ./cmd/mpool", false)
	for _, w := range []string{"go install ./cmd/mpool", "  go run ./cmd/mpool describe machinepool local-mp-0", "kubectl is not on your PATH"} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("the Try next lines do not contain %q:\n%s", w, out.String())
		}
	}
	out.Reset()
	nextSteps(&out, samples["aws"], "/k", "mpool", true)
	for _, w := range []string{"  mpool describe machinepool aws-mp-0", "kubectl patch machinepool aws-mp-0 ", `"version":"` + samples["aws"].nextVersion + `"`} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("the Try next lines do not contain %q:\n%s", w, out.String())
		}
	}
	out.Reset()
	nextSteps(&out, samples["eks"], "/k", "mpool", true)
	for _, w := range []string{"  mpool describe machinepool eks-pool-0", "  mpool scale machinepool eks-pool-0 ", "kubectl patch machinepool eks-pool-0 ",
		`"version":"v1.31.0"`, "  mpool rollout status eks-pool-0 "} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("the Try next lines do not contain %q:\n%s", w, out.String())
		}
	}
}

// TestGenerateNamespace: without --target-namespace the objects go to the
// kubeconfig context's namespace, as clusterctl's do; the local flavor says
// when that is not where `mpool up`'s Cluster is.
func TestGenerateNamespace(t *testing.T) {
	t.Setenv("KUBECONFIG", kubeconfigFile(t, "team-a"))
	if got := kubeconfigNamespace(); got != "team-a" {
		t.Errorf("kubeconfigNamespace() = %q with a context in team-a", got)
	}
	t.Setenv("KUBECONFIG", kubeconfigFile(t, ""))
	if got := kubeconfigNamespace(); got != "default" {
		t.Errorf("kubeconfigNamespace() = %q with a context without a namespace", got)
	}
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "missing"))
	if got := kubeconfigNamespace(); got != "default" {
		t.Errorf("kubeconfigNamespace() = %q without a kubeconfig", got)
	}

	var stdout, stderr syncBuffer
	cmd := newGenerateCommandWith(generateOptions{currentNamespace: func() string { return "team-a" }})
	cmd.SetArgs([]string{"cluster", "demo"})
	cmd.SetOut(&stdout)
	cmd.SetErr(&stderr)
	if err := cmd.ExecuteContext(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(stdout.String(), "namespace: team-a\n"); n != 3 {
		t.Errorf("%d objects in namespace team-a, want 3:\n%s", n, stdout.String())
	}
	if !strings.Contains(stderr.String(), "note: the pool is in namespace team-a, but the Cluster local of `mpool up` is in default") {
		t.Errorf("no note that the pool is not beside Cluster default/local:\n%s", stderr.String())
	}
}
