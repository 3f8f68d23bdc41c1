package itest

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/manager"
	"github.com/mpool-dev/mpool/internal/provider"
	"github.com/mpool-dev/mpool/internal/provider/aws"
	"github.com/mpool-dev/mpool/internal/provider/aws/eks"
	"github.com/mpool-dev/mpool/internal/provider/azure"
	"github.com/mpool-dev/mpool/internal/provider/azure/aks"
	"github.com/mpool-dev/mpool/internal/provider/contract"
	"github.com/mpool-dev/mpool/internal/provider/gcp"
	"github.com/mpool-dev/mpool/internal/provider/kit"
	"github.com/mpool-dev/mpool/internal/provider/local"
	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/face/awsface"
	"github.com/mpool-dev/mpool/sim/face/azureface"
	"github.com/mpool-dev/mpool/sim/face/eksface"
	"github.com/mpool-dev/mpool/sim/face/gcpface"
	"github.com/mpool-dev/mpool/sim/server"
)

// Provider is what a Fixture needs to know of one provider beside its
// registry entry (the kinds and objects its Adapter gives): the names its
// example uses, how its simulated face is reached and
// prepared, which group and Nodes are the pool's, and what "converged"
// means beyond what every provider shares. Local, Azure, AWS and EKS are
// the providers the integration tests run.
type Provider struct {
	// Name is the provider's name in the registry.
	Name string
	// ClusterName and PoolName are the Cluster's and the pool's names (the
	// MachinePool, infra pool and KubeadmConfig share the pool's).
	ClusterName, PoolName string
	// ClusterManifest is the manifest of the Cluster and its provider's
	// objects (nil: a bare Cluster); SeedManifest the pool's example.
	ClusterManifest, SeedManifest []string
	// Seed is the simulated cloud's default seed.
	Seed uint64
	// Faces are the simulated cloud's faces the provider calls, and
	// Ignored those of their operations that Fixture.Requests does not
	// count (Azure's Entra ID tokens).
	Faces, Ignored []string
	// PrepareCloud, when set, creates what the face needs before a pool
	// (EKS: the cluster).
	PrepareCloud func(*server.Server, CloudOptions) error
	// Configure points the manager's provider at the fixture's cloud.
	Configure func(*Fixture, *manager.Options)
	// GroupKey is the pool's group's key in the simulated cloud (nil: the
	// fixture does not look at the group).
	GroupKey func(*Fixture) core.GroupKey
	// OwnsNode returns whether a Node is one of the pool's instances.
	OwnsNode func(*Fixture) func(*corev1.Node) bool
	// ReadyCondition is the infra pool's own condition that is True once
	// converged ("" for none).
	ReadyCondition string
	// Check, CheckNode and CheckMachine, when set, add the provider's own
	// conditions of convergence for the infra pool, each Node and each
	// per-instance object.
	Check        func(f *Fixture, pool client.Object) error
	CheckNode    func(*corev1.Node) error
	CheckMachine func(client.Object) error
	// Cleanup, when set, deletes what the cluster manifest made outside
	// the fixture's namespace.
	Cleanup func(*Fixture)
}

// Adapter is the provider's Adapter in the registry.
func (p *Provider) Adapter() contract.Adapter {
	for _, r := range provider.All() {
		if r.Name == p.Name {
			return r.Adapter
		}
	}
	panic("no provider " + p.Name + " in the registry")
}

// PoolKind is the infra pool's kind.
func (p *Provider) PoolKind() string { return p.Adapter().Kinds().Pool }

// MachineKind is the per-instance object's kind.
func (p *Provider) MachineKind() string { return p.Adapter().Kinds().Instance }

// Controller is the infra pool controller's name in the metrics.
func (p *Provider) Controller() string { return strings.ToLower(p.PoolKind()) }

// NewPool returns an empty infra pool.
func (p *Provider) NewPool() client.Object { return p.Adapter().NewPool() }

// NewPoolList returns an empty list of infra pools.
func (p *Provider) NewPoolList() client.ObjectList {
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(infrav1.GroupVersion.WithKind(p.PoolKind() + "List"))
	return l
}

// NewMachineList returns an empty list of per-instance objects.
func (p *Provider) NewMachineList() client.ObjectList { return p.Adapter().NewInstanceList() }

// Local is the local provider: a bare Cluster, LocalMachinePools on the
// local face.
var Local = &Provider{
	Name: local.ProviderName, ClusterName: "c1", PoolName: "pool-0",
	Seed:  42,
	Faces: []string{core.LocalFace},
	Configure: func(f *Fixture, o *manager.Options) {
		o.Providers = provider.Configs{local.ProviderName: &local.Config{URL: f.Cloud.URL()}}
	},
	GroupKey: func(f *Fixture) core.GroupKey { return core.LocalKey(LocalGroup(f)) },
	OwnsNode: func(f *Fixture) func(*corev1.Node) bool {
		prefix := "local:///" + LocalGroup(f) + "/"
		return func(n *corev1.Node) bool { return strings.HasPrefix(n.Spec.ProviderID, prefix) }
	},
	// Every instance runs, joined, on the pool's model.
	Check: func(f *Fixture, pool client.Object) error {
		lp := pool.(*infrav1.LocalMachinePool)
		g := f.Group()
		if g == nil {
			return fmt.Errorf("the cloud has no group %s", LocalGroup(f))
		}
		for _, in := range g.Instances {
			if in.State != core.StateRunning || in.Join != core.JoinJoined {
				return fmt.Errorf("instance %s is %s/%s: %s", in.ID, in.State, in.Join, in.Message)
			}
			if in.ModelHash != lp.Status.ModelHash {
				return fmt.Errorf("instance %s runs model %s, pool model is %s", in.ID, in.ModelHash, lp.Status.ModelHash)
			}
		}
		return nil
	},
	CheckMachine: func(m client.Object) error {
		if s := m.(*infrav1.LocalMachinePoolMachine).Status.State; s != infrav1.LocalInstanceRunning {
			return fmt.Errorf("LocalMachinePoolMachine %s is %s", m.GetName(), s)
		}
		return nil
	},
}

// LocalGroup is the name of the local pool's group in the cloud.
func LocalGroup(f *Fixture) string { return contract.GroupName(f.NS, f.Provider.PoolName, 63) }

// Azure is the Azure provider with seed 000's example: the Cluster capz,
// its AzureCluster and AzureClusterIdentity (examples/azure/cluster.yaml)
// and the AzureMachinePool capz-mp-0, on the Azure face.
var Azure = &Provider{
	Name: azure.ProviderName, ClusterName: "capz", PoolName: "capz-mp-0",
	ClusterManifest: []string{"examples", "azure", "cluster.yaml"},
	SeedManifest:    []string{"examples", "seeds", "azure-machinepool.yaml"},
	Seed:            7,
	Faces:           []string{azureface.AzureFaceName},
	Ignored:         []string{azureface.OpAzureToken, azureface.OpAzureDiscovery},
	// As `mpool up` configures it, trusting the face's CA, but with no
	// credentials of its own: pools use their AzureClusterIdentity.
	Configure: func(f *Fixture, o *manager.Options) { o.Providers = Providers(f.Cloud, f.NS, azure.ProviderName) },
	GroupKey: func(f *Fixture) core.GroupKey {
		return azureface.AzureGroupKey(azureface.AzureDefaultSubscriptionID, azureface.AzureDefaultResourceGroup, ScaleSet(f))
	},
	// A Uniform VM of the pool's scale set, or a Flexible VM named after it.
	OwnsNode: func(f *Fixture) func(*corev1.Node) bool {
		base := "azure:///subscriptions/" + azureface.AzureDefaultSubscriptionID + "/resourceGroups/" + azureface.AzureDefaultResourceGroup + "/providers/Microsoft.Compute/"
		uniform, flexible := base+"virtualMachineScaleSets/"+ScaleSet(f)+"/virtualMachines/", base+"virtualMachines/"+ScaleSet(f)+"_"
		return func(n *corev1.Node) bool {
			return strings.HasPrefix(n.Spec.ProviderID, uniform) || strings.HasPrefix(n.Spec.ProviderID, flexible)
		}
	},
	ReadyCondition: infrav1.ScaleSetRunningCondition,
	CheckMachine: func(m client.Object) error {
		if s := m.(*infrav1.AzureMachinePoolMachine).Status.ProvisioningState; s == nil || *s != infrav1.Succeeded {
			return fmt.Errorf("AzureMachinePoolMachine %s provisioning state %v", m.GetName(), s)
		}
		return nil
	},
}

// ScaleSet is the Azure pool's scale set name.
func ScaleSet(f *Fixture) string { return azure.ScaleSetName(f.NS, f.Provider.PoolName) }

// AWS is the AWS provider with seed 004's example: the Cluster capa, its
// AWSCluster, AWSClusterStaticIdentity and Secret
// (examples/aws/cluster.yaml) and the AWSMachinePool capa-mp-0, on the AWS
// face.
var AWS = &Provider{
	Name: aws.ProviderName, ClusterName: "capa", PoolName: "capa-mp-0",
	ClusterManifest: []string{"examples", "aws", "cluster.yaml"},
	SeedManifest:    []string{"examples", "seeds", "aws-machinepool.yaml"},
	Seed:            11,
	Faces:           []string{awsface.AWSFaceName},
	// With no credentials of its own: pools use their
	// AWSClusterStaticIdentity, whose Secret is in the fixture's namespace
	// (the manager's, here). EKS runs beside it, as in a deployed manager.
	Configure: func(f *Fixture, o *manager.Options) {
		o.Providers = Providers(f.Cloud, f.NS, aws.ProviderName, eks.ProviderName)
	},
	GroupKey: func(f *Fixture) core.GroupKey {
		return awsface.AWSGroupKey(awsface.AWSDefaultAccountID, awsface.AWSDefaultRegion, ASG(f))
	},
	// The Nodes whose providerID is one of the group's instances'.
	OwnsNode: func(f *Fixture) func(*corev1.Node) bool {
		ids := map[string]bool{}
		if g := f.Group(); g != nil {
			for _, in := range g.Instances {
				ids[in.ProviderID] = true
			}
		}
		return func(n *corev1.Node) bool { return ids[n.Spec.ProviderID] }
	},
	ReadyCondition: infrav1.ASGReadyCondition,
	Cleanup:        deleteIdentity("capa-static-identity"),
}

// ASG is the AWS pool's Auto Scaling Group name.
func ASG(f *Fixture) string { return aws.GroupName(f.NS, f.Provider.PoolName) }

// EKS is the EKS provider with examples/eks: the Cluster eks, its
// AWSManagedControlPlane and static identity, and the AWSManagedMachinePool
// eks-pool-0, on the EKS face (the simulated EKS cluster created at
// CloudOptions.Version).
var EKS = &Provider{
	Name: eks.ProviderName, ClusterName: "eks", PoolName: "eks-pool-0",
	ClusterManifest: []string{"examples", "eks", "cluster.yaml"},
	SeedManifest:    []string{"examples", "eks", "machinepool.yaml"},
	Seed:            13,
	Faces:           []string{eksface.EKSFaceName, awsface.AWSFaceName},
	PrepareCloud: func(srv *server.Server, o CloudOptions) error {
		return eksface.EKSCreateCluster(srv.Cloud(), awsface.AWSDefaultAccountID, awsface.AWSDefaultRegion, eksface.EKSDefaultClusterName, o.Version)
	},
	// The pools' AWSClusterStaticIdentity only.
	Configure: func(f *Fixture, o *manager.Options) {
		o.Providers = Providers(f.Cloud, f.NS, aws.ProviderName, eks.ProviderName)
	},
	// The Nodes of the pool's node group.
	OwnsNode: func(f *Fixture) func(*corev1.Node) bool {
		ng := Nodegroup(f)
		return func(n *corev1.Node) bool { return n.Labels[eksface.EKSLabelNodegroup] == ng }
	},
	ReadyCondition: infrav1.EKSNodegroupReadyCondition,
	Check: func(_ *Fixture, pool client.Object) error {
		for _, id := range pool.(*infrav1.AWSManagedMachinePool).Spec.ProviderIDList {
			if !strings.HasPrefix(id, "aws:///us-east-1a/i-") {
				return fmt.Errorf("providerID %s is not aws:///<az>/<instance-id>", id)
			}
		}
		return nil
	},
	// EKS's labels, the pool's labels and taint, EKS's providerID.
	CheckNode: func(node *corev1.Node) error {
		l := node.Labels
		if l[eksface.EKSLabelCapacityType] != "ON_DEMAND" || !strings.HasPrefix(l[eksface.EKSLabelNodegroupImage], "ami-") || l["workload"] != "general" {
			return fmt.Errorf("Node %s labels %v: want EKS's and the pool's", node.Name, l)
		}
		if len(node.Spec.Taints) != 1 || node.Spec.Taints[0].Key != "dedicated" || node.Spec.Taints[0].Effect != corev1.TaintEffectPreferNoSchedule {
			return fmt.Errorf("Node %s taints %v: want the pool's", node.Name, node.Spec.Taints)
		}
		if !strings.HasPrefix(node.Spec.ProviderID, "aws:///us-east-1a/i-") {
			return fmt.Errorf("Node %s providerID %s", node.Name, node.Spec.ProviderID)
		}
		return nil
	},
	// Every node group's Nodes go too: EKS names Nodes after their
	// instances' addresses, which the next test's cloud hands out again.
	Cleanup: func(f *Fixture) {
		f.Env.DeleteNodes(f.T, func(n *corev1.Node) bool { _, ok := n.Labels[eksface.EKSLabelNodegroup]; return ok })
		deleteIdentity("eks-static-identity")(f)
	},
}

// AKS is the AKS provider with examples/aks: the Cluster aks, its
// AzureManagedControlPlane mpool-aks and AzureClusterIdentity, and the
// AzureManagedMachinePool pool0, on the Azure face's simulated AKS (the
// cluster created at CloudOptions.Version).
var AKS = &Provider{
	Name: aks.ProviderName, ClusterName: "aks", PoolName: "pool0",
	ClusterManifest: []string{"examples", "aks", "cluster.yaml"},
	SeedManifest:    []string{"examples", "aks", "machinepool.yaml"},
	Seed:            17,
	Faces:           []string{azureface.AzureFaceName},
	Ignored:         []string{azureface.OpAzureToken, azureface.OpAzureDiscovery},
	PrepareCloud: func(srv *server.Server, o CloudOptions) error {
		return azureface.AKSCreateCluster(srv.Cloud(), azureface.AzureDefaultSubscriptionID, azureface.AzureDefaultResourceGroup,
			azureface.AKSDefaultClusterName, azureface.AzureDefaultLocation, o.Version)
	},
	// The pools' AzureClusterIdentity only.
	Configure: func(f *Fixture, o *manager.Options) {
		o.Providers = Providers(f.Cloud, f.NS, azure.ProviderName, aks.ProviderName)
	},
	GroupKey: func(f *Fixture) core.GroupKey { return AKSScaleSet(f) },
	// The Nodes of the pool's agent pool.
	OwnsNode: func(f *Fixture) func(*corev1.Node) bool {
		return func(n *corev1.Node) bool {
			return n.Labels[azureface.AKSLabelAgentPool] == f.Provider.PoolName && n.Labels[azureface.AKSLabelCluster] == AKSNodeResourceGroup
		}
	},
	ReadyCondition: infrav1.ScaleGroupReadyCondition,
	// AKS's providerIDs: VMs of the pool's scale set in the node resource group.
	Check: func(f *Fixture, pool client.Object) error {
		prefix := "azure:///subscriptions/" + azureface.AzureDefaultSubscriptionID + "/resourceGroups/" + strings.ToLower(AKSNodeResourceGroup) +
			"/providers/Microsoft.Compute/virtualMachineScaleSets/" + AKSScaleSet(f).Name + "/virtualMachines/"
		for _, id := range pool.(*infrav1.AzureManagedMachinePool).Spec.ProviderIDList {
			if !strings.HasPrefix(strings.ToLower(id), strings.ToLower(prefix)) {
				return fmt.Errorf("providerID %s is not a VM of %s", id, prefix)
			}
		}
		return nil
	},
	// AKS's labels, the pool's labels and taint.
	CheckNode: func(node *corev1.Node) error {
		l := node.Labels
		if l[azureface.AKSLabelMode] != "system" || l[azureface.AKSLabelNodeImage] != azureface.AKSNodeImageVersion || l["workload"] != "general" ||
			!strings.HasPrefix(node.Name, "aks-pool0-") {
			return fmt.Errorf("Node %s labels %v: want AKS's and the pool's", node.Name, l)
		}
		if len(node.Spec.Taints) != 1 || node.Spec.Taints[0].Key != "dedicated" || node.Spec.Taints[0].Effect != corev1.TaintEffectPreferNoSchedule {
			return fmt.Errorf("Node %s taints %v: want the pool's", node.Name, node.Spec.Taints)
		}
		return nil
	},
	CheckMachine: func(m client.Object) error {
		if s := m.(*infrav1.AzureManagedMachinePoolMachine).Status.ProvisioningState; s != "Succeeded" {
			return fmt.Errorf("AzureManagedMachinePoolMachine %s provisioning state %q", m.GetName(), s)
		}
		return nil
	},
	// AKS names Nodes after the scale set, the same in the next test's cloud.
	Cleanup: func(f *Fixture) {
		f.Env.DeleteNodes(f.T, func(n *corev1.Node) bool { _, ok := n.Labels[azureface.AKSLabelAgentPool]; return ok })
	},
}

// AKSNodeResourceGroup is the node resource group of examples/aks's cluster.
const AKSNodeResourceGroup = "MC_" + azureface.AzureDefaultResourceGroup + "_" + azureface.AKSDefaultClusterName + "_" + azureface.AzureDefaultLocation

// AKSScaleSet is the key of the AKS pool's scale set in the node resource group.
func AKSScaleSet(f *Fixture) core.GroupKey {
	return azureface.AKSScaleSetKey(azureface.AzureDefaultSubscriptionID, azureface.AzureDefaultResourceGroup, azureface.AKSDefaultClusterName,
		AKSNodeResourceGroup, f.Provider.PoolName)
}

// Nodegroup is the EKS pool's node group name.
func Nodegroup(f *Fixture) string {
	return eks.NodegroupName(&infrav1.AWSManagedMachinePool{ObjectMeta: metav1.ObjectMeta{Namespace: f.NS, Name: f.Provider.PoolName}})
}

// deleteIdentity deletes the cluster-scoped AWSClusterStaticIdentity name
// that a cluster manifest created.
func deleteIdentity(name string) func(*Fixture) {
	return func(f *Fixture) {
		_ = f.Env.Client.Delete(context.Background(), &infrav1.AWSClusterStaticIdentity{ObjectMeta: metav1.ObjectMeta{Name: name}})
	}
}

// GCP is the GCP provider with examples/gcp: the Cluster capg, its
// GCPCluster, and the GCPMachinePool capg-mp-0 (a regional managed instance
// group), on the GCP face, reached with the manager's own credentials: the
// simulated default service account's key, as `mpool up` gives it.
var GCP = &Provider{
	Name: gcp.ProviderName, ClusterName: "capg", PoolName: "capg-mp-0",
	ClusterManifest: []string{"examples", "gcp", "cluster.yaml"},
	SeedManifest:    []string{"examples", "gcp", "machinepool.yaml"},
	Seed:            17,
	Faces:           []string{gcpface.GCPFaceName},
	Ignored:         []string{gcpface.OpGCPToken},
	Configure: func(f *Fixture, o *manager.Options) {
		acct := (&gcpface.GCPFace{}).DefaultAccount()
		o.Providers = provider.NewConfigs(gcp.ProviderName).ForSimulatedCloud(kit.Simulated{
			FaceURL: f.Cloud.FaceURL, CAFile: f.Cloud.CAFile(), IdentityNamespace: f.NS,
			Accounts: map[string]kit.Account{gcpface.GCPFaceName: {Tenant: acct.Tenant, ID: acct.ID, Secret: acct.Secret, Region: acct.Region}},
		})
	},
	GroupKey: func(f *Fixture) core.GroupKey {
		return core.GroupKey{Face: gcpface.GCPFaceName, Scope: gcpface.GCPScope(gcpface.GCPDefaultProject, gcpface.GCPDefaultRegion), Name: MIG(f)}
	},
	// The Nodes of the group's instances (gce://<project>/<zone>/<name>).
	OwnsNode: func(f *Fixture) func(*corev1.Node) bool {
		prefix := "gce://" + gcpface.GCPDefaultProject + "/"
		base := MIG(f) + "-"
		return func(n *corev1.Node) bool {
			return strings.HasPrefix(n.Spec.ProviderID, prefix) && strings.HasPrefix(n.Spec.ProviderID[strings.LastIndexByte(n.Spec.ProviderID, '/')+1:], base)
		}
	},
	ReadyCondition: infrav1.InstanceGroupReadyCondition,
}

// MIG is the GCP pool's managed instance group name.
func MIG(f *Fixture) string { return gcp.GroupName(f.NS, f.Provider.PoolName) }
