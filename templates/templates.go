// Package templates embeds mpool's cluster templates, the flavors of
// `mpool generate cluster`: one directory per infrastructure provider, each
// flavor a file named as clusterctl names them,
// <infrastructure>/cluster-template-<flavor>.yaml. The templates use
// clusterctl's variable syntax (${VAR}, ${VAR:=default}, ...) and the
// variable names of the Cluster API providers they follow, and today's
// versions, as the providers' current templates do: Cluster API's own kinds
// in cluster.x-k8s.io/v1beta2 and bootstrap.cluster.x-k8s.io/v1beta2 (so
// applying them draws no deprecation warning), mpool's infrastructure kinds
// in infrastructure.cluster.x-k8s.io/v1beta1. They contain only
// the kinds mpool serves; each Flavor lists what the provider's own flavor
// of that name also contains and why it was left out.
package templates

import (
	"embed"
	"fmt"
	"path"
	"sort"
	"strings"
)

//go:embed local/*.yaml azure/*.yaml aws/*.yaml gcp/*.yaml
var files embed.FS

// Flavor is one embedded cluster template.
type Flavor struct {
	// Infrastructure is the provider: local, azure, aws or gcp.
	Infrastructure string
	// Name is the flavor, as clusterctl's --flavor names it.
	Name string
	// LeftOut says, one line each, what a full clusterctl flavor of this
	// name also contains and why mpool does not emit it.
	LeftOut []string
}

// The reasons shared by several flavors.
const (
	controlPlaneLeftOut = "mpool manages worker pools for a control plane that exists"
	kubeconfigLeftOut   = "Secret ${CLUSTER_NAME}-kubeconfig: the control plane writes it (under `mpool up`, mpool writes it for its own API server); " +
		"for a cluster that exists, create it (key \"value\": the workload cluster's kubeconfig) before the pool can join"
)

var flavors = []Flavor{
	{Infrastructure: "local", Name: "machinepool", LeftOut: []string{
		"Cluster: the pool joins a Cluster that exists, LOCAL_CLUSTER_NAME (default \"local\": the Cluster default/local that `mpool up` " +
			"registers for its own API server); a new Cluster would need a <name>-kubeconfig Secret that generate cannot write",
		"KubeadmControlPlane: " + controlPlaneLeftOut,
	}},
	{Infrastructure: "azure", Name: "machinepool", LeftOut: azureLeftOut},
	{Infrastructure: "azure", Name: "machinepool-flex", LeftOut: azureLeftOut},
	{Infrastructure: "azure", Name: "aks", LeftOut: []string{
		"the AzureManagedControlPlane's oidcIssuerProfile and sshPublicKey (AZURE_SSH_PUBLIC_KEY_B64) and the AKS cluster it creates: " +
			controlPlaneLeftOut + " (the AzureManagedControlPlane names it, ${CLUSTER_NAME} in AZURE_RESOURCE_GROUP; KUBERNETES_VERSION is the pools' version, at most the cluster's)",
		"Secret ${CLUSTER_NAME}-kubeconfig: AKS writes it in CAPZ's; under `mpool up`, mpool writes it for its own API server; " +
			"for a cluster that exists, create it (key \"value\": the AKS cluster's kubeconfig) before the pools' nodes are watched",
	}},
	{Infrastructure: "aws", Name: "machinepool", LeftOut: []string{
		"the Cluster's controlPlaneRef, KubeadmControlPlane, AWSMachineTemplate (AWS_CONTROL_PLANE_MACHINE_TYPE, CONTROL_PLANE_MACHINE_COUNT): " + controlPlaneLeftOut,
		kubeconfigLeftOut,
	}},
	{Infrastructure: "gcp", Name: "machinepool", LeftOut: []string{
		"the Cluster's controlPlaneRef, KubeadmControlPlane, GCPMachineTemplate (GCP_CONTROL_PLANE_MACHINE_TYPE, CONTROL_PLANE_MACHINE_COUNT): " + controlPlaneLeftOut,
		"MachineDeployment, GCPMachineTemplate and KubeadmConfigTemplate of the workers: the MachinePool, GCPMachinePool and KubeadmConfig replace them",
		kubeconfigLeftOut,
	}},
	{Infrastructure: "aws", Name: "eks-managedmachinepool", LeftOut: []string{
		"AWSManagedCluster, the Cluster's infrastructureRef in CAPA's: mpool's Cluster names the AWSManagedControlPlane as its infrastructureRef instead",
		"the Cluster's controlPlaneRef, and the AWSManagedControlPlane's sshKeyName and the EKS cluster it creates: " + controlPlaneLeftOut +
			" (the AWSManagedControlPlane names it, EKS_CLUSTER_NAME; KUBERNETES_VERSION is its version, which mpool does not change)",
		kubeconfigLeftOut,
	}},
}

var azureLeftOut = []string{
	"the Cluster's controlPlaneRef, KubeadmControlPlane, AzureMachineTemplate (AZURE_CONTROL_PLANE_MACHINE_TYPE, CONTROL_PLANE_MACHINE_COUNT): " + controlPlaneLeftOut,
	"the KubeadmConfig's /etc/kubernetes/azure.json and its Secret ${CLUSTER_NAME}-mp-0-azure-json: " +
		"CAPZ's controllers write it for the external cloud provider, which runs with the control plane",
	kubeconfigLeftOut,
}

// Infrastructures are the providers with embedded flavors, sorted.
func Infrastructures() []string {
	seen := map[string]bool{}
	var out []string
	for _, f := range flavors {
		if !seen[f.Infrastructure] {
			seen[f.Infrastructure] = true
			out = append(out, f.Infrastructure)
		}
	}
	sort.Strings(out)
	return out
}

// Flavors returns every embedded flavor, by infrastructure then name.
func Flavors() []Flavor {
	out := append([]Flavor(nil), flavors...)
	sort.Slice(out, func(i, j int) bool {
		if out[i].Infrastructure != out[j].Infrastructure {
			return out[i].Infrastructure < out[j].Infrastructure
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// Lookup returns the flavor name of infrastructure infra, or an error
// naming the flavors there are.
func Lookup(infra, name string) (Flavor, error) {
	var names []string
	for _, f := range Flavors() {
		if f.Infrastructure != infra {
			continue
		}
		if f.Name == name {
			return f, nil
		}
		names = append(names, f.Name)
	}
	if len(names) == 0 {
		return Flavor{}, fmt.Errorf("no flavors for infrastructure %q; there are flavors for %s", infra, strings.Join(Infrastructures(), ", "))
	}
	return Flavor{}, fmt.Errorf("infrastructure %s has no flavor %q; its flavors: %s", infra, name, strings.Join(names, ", "))
}

// Path is the flavor's file in this package.
func (f Flavor) Path() string {
	return path.Join(f.Infrastructure, "cluster-template-"+f.Name+".yaml")
}

// Template returns the flavor's template text.
func (f Flavor) Template() ([]byte, error) {
	b, err := files.ReadFile(f.Path())
	if err != nil {
		return nil, fmt.Errorf("reading the %s flavor %s: %w", f.Infrastructure, f.Name, err)
	}
	return b, nil
}
