package cli

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/mpool-dev/mpool/examples"
)

// TestGenerateFromUpstreamShape: a provider's own template, run through
// `generate --from` with the same variables, gives the same pool objects as
// the embedded flavor of that name — so the flavors use the providers'
// variable names, object names and defaults — and the documents mpool does
// not serve come with a note. The templates are stand-ins in the providers'
// shape (testdata/upstream/README.md).
func TestGenerateFromUpstreamShape(t *testing.T) {
	// Values other than the flavors' defaults, so that a flavor ignoring
	// a variable shows.
	env := map[string]string{
		"AWS_REGION": "eu-west-1", "AWS_AVAILABILITY_ZONE": "eu-west-1b",
		"AZURE_SUBSCRIPTION_ID": "00000000-0000-0000-0000-000000000000", "AZURE_TENANT_ID": "11111111-0000-0000-0000-000000000000",
		"AZURE_CLIENT_ID": "22222222-0000-0000-0000-000000000000", "AZURE_RESOURCE_GROUP": "my-rg",
		"CLUSTER_IDENTITY_NAME": "cluster-identity", "AZURE_CLUSTER_IDENTITY_SECRET_NAME": "cluster-identity-secret",
		"AZURE_CLUSTER_IDENTITY_SECRET_NAMESPACE": "default",
	}
	for k, v := range flavorEnv {
		env[k] = v
	}
	tests := []struct {
		name, file, infrastructure, flavor string
		// same are the kinds whose objects must be equal. The Cluster is
		// never among them: the flavors' Cluster drops its controlPlaneRef
		// (mpool serves no control plane); its infrastructureRef is
		// compared instead.
		same []string
		// notServed are the kinds --from must note.
		notServed []string
		// infrastructureRef: the Clusters' spec.infrastructureRef must be
		// equal.
		infrastructureRef bool
		// controlPlane: the AWSManagedControlPlanes' name, region and
		// version must be equal.
		controlPlane bool
		// flavorOnly are fields the flavor adds to the provider's objects
		// (by kind), left out of the comparison.
		flavorOnly map[string][]string
	}{
		{name: "CAPZ machinepool", file: "azure-machinepool.yaml", infrastructure: "azure", flavor: "machinepool",
			same: []string{"AzureCluster", "AzureClusterIdentity", "MachinePool", "AzureMachinePool", "KubeadmConfig"}, infrastructureRef: true},
		{name: "CAPA machinepool", file: "aws-machinepool.yaml", infrastructure: "aws", flavor: "machinepool",
			same: []string{"AWSCluster", "MachinePool", "AWSMachinePool", "KubeadmConfig"}, infrastructureRef: true},
		// The embedded EKS flavor sets the node group's instance type, subnet
		// and SSH key (AWS_NODE_MACHINE_TYPE, AWS_SUBNET_ID, AWS_SSH_KEY_NAME),
		// which CAPA's leaves to EKS's defaults and the cluster it creates, and
		// its AWSManagedControlPlane is mpool's subset, in another group: only
		// the MachinePools match, and the control planes' region and version.
		// Its MachinePool also names the cluster's version (CAPA's names
		// none), so that `kubectl get machinepools` shows it.
		{name: "CAPA eks-managedmachinepool", file: "aws-eks-managedmachinepool.yaml", infrastructure: "aws", flavor: "eks-managedmachinepool",
			same: []string{"MachinePool"}, notServed: []string{"AWSManagedControlPlane"}, controlPlane: true,
			flavorOnly: map[string][]string{"MachinePool": {"spec", "template", "spec", "version"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			common := []string{"generate", "cluster", "my-cluster", "--kubernetes-version", "v1.22.0", "--worker-machine-count", "2"}
			from := runGenerate(t, env, "", append(common, "--from", filepath.Join("testdata", "upstream", tt.file))...)
			if from.err != nil {
				t.Fatalf("--from: %v", from.err)
			}
			flavor := runGenerate(t, env, "", append(common, "-i", tt.infrastructure, "-f", tt.flavor)...)
			if flavor.err != nil {
				t.Fatalf("--flavor: %v", flavor.err)
			}
			got, want := objectsByKind(t, from.stdout), objectsByKind(t, flavor.stdout)
			for kind, field := range tt.flavorOnly {
				if want[kind] != nil {
					if _, found, _ := unstructured.NestedFieldNoCopy(want[kind].Object, field...); !found {
						t.Errorf("the flavor's %s has no %s", kind, strings.Join(field, "."))
					}
					unstructured.RemoveNestedField(want[kind].Object, field...)
				}
			}
			for _, kind := range tt.same {
				if got[kind] == nil || want[kind] == nil {
					t.Errorf("%s: --from gave %v, the flavor %v", kind, got[kind] != nil, want[kind] != nil)
					continue
				}
				if !reflect.DeepEqual(got[kind].Object, want[kind].Object) {
					g, _ := yaml.Marshal(got[kind].Object)
					w, _ := yaml.Marshal(want[kind].Object)
					t.Errorf("%s differs:\n--- from the provider's template:\n%s--- from the flavor:\n%s", kind, g, w)
				}
			}
			if tt.infrastructureRef {
				g, _, _ := unstructured.NestedMap(got["Cluster"].Object, "spec", "infrastructureRef")
				w, _, _ := unstructured.NestedMap(want["Cluster"].Object, "spec", "infrastructureRef")
				if g == nil || !reflect.DeepEqual(g, w) {
					t.Errorf("the Clusters' infrastructureRef differ: from the provider's template %v, from the flavor %v", g, w)
				}
			}
			if tt.controlPlane {
				for _, f := range [][]string{{"metadata", "name"}, {"spec", "region"}, {"spec", "version"}} {
					g, _, _ := unstructured.NestedString(got["AWSManagedControlPlane"].Object, f...)
					w, _, _ := unstructured.NestedString(want["AWSManagedControlPlane"].Object, f...)
					if g == "" || g != w {
						t.Errorf("the AWSManagedControlPlanes' %s differ: from the provider's template %q, from the flavor %q", strings.Join(f, "."), g, w)
					}
				}
			}
			for _, kind := range tt.notServed {
				if !strings.Contains(from.stderr, "note: "+kind+" ") {
					t.Errorf("no note that %s is not served:\n%s", kind, from.stderr)
				}
			}
		})
	}
}

func objectsByKind(t *testing.T, manifest string) map[string]*unstructured.Unstructured {
	t.Helper()
	objs, err := examples.Objects([]byte(manifest), "")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*unstructured.Unstructured{}
	for _, u := range objs {
		out[u.GetKind()] = u
	}
	return out
}
