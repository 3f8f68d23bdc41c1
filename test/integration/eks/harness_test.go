package eks

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awseks "github.com/aws/aws-sdk-go-v2/service/eks"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/manager"
	awsprovider "github.com/mpool-dev/mpool/internal/provider/aws"
	"github.com/mpool-dev/mpool/internal/provider/aws/eks"
	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/face/awsface"
	"github.com/mpool-dev/mpool/sim/server"
	"github.com/mpool-dev/mpool/test/integration/itest"
)

// The names examples/eks uses.
const (
	clusterName = "eks"
	poolName    = "eks-pool-0"
	identity    = "eks-static-identity"
	converge    = 2 * time.Minute
)

// startCloud starts a simulated cloud whose instances join the test API
// server, with the simulated EKS cluster the example names at version.
func startCloud(t testing.TB, version string) *server.Server {
	t.Helper()
	return startCloudWith(t, version)
}

// startCloudWith is startCloud with faces configured otherwise (an EKS
// face with a shorter eviction timeout).
func startCloudWith(t testing.TB, version string, faces ...core.Face) *server.Server {
	t.Helper()
	return startCloudWithBoot(t, version, 200*time.Millisecond, faces...)
}

// startCloudWithBoot is startCloudWith with instances that boot in
// bootDelay.
func startCloudWithBoot(t testing.TB, version string, bootDelay time.Duration, faces ...core.Face) *server.Server {
	t.Helper()
	srv := itest.StartCloud(t, env, core.Options{Seed: 13, DefaultSimulation: &core.Simulation{BootDelay: bootDelay}, Faces: faces})
	if err := awsface.EKSCreateCluster(srv.Cloud(), awsface.AWSDefaultAccountID, awsface.AWSDefaultRegion, awsface.EKSDefaultClusterName, version); err != nil {
		t.Fatal(err)
	}
	return srv
}

// testManager is a running mpool manager with the EKS provider on.
type testManager = itest.Manager

// startManager starts a manager for the fixture's namespace that reaches
// the simulated EKS and AWS with the pools' AWSClusterStaticIdentity only.
func startManager(t testing.TB, f *fixture, tune ...func(*manager.Options)) *testManager {
	t.Helper()
	mopts := itest.ManagerOptions(env, f.ns)
	mopts.Providers = itest.Providers(f.cloud, f.ns, awsprovider.ProviderName, eks.ProviderName)
	for _, fn := range tune {
		fn(&mopts)
	}
	return itest.StartManager(t, env.Config, mopts, eks.ProviderName)
}

// fixture is one test's namespace with examples/eks/cluster.yaml applied,
// the workload cluster being the test API server.
type fixture struct {
	t     testing.TB
	ctx   context.Context
	ns    string
	cloud *server.Server
	cs    kubernetes.Interface
	eks   *awseks.Client
}

func newFixture(t testing.TB, cloud *server.Server) *fixture {
	t.Helper()
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	cfg := aws.Config{Region: awsface.AWSDefaultRegion, RetryMaxAttempts: 1, BaseEndpoint: aws.String(cloud.FaceURL(awsface.EKSFaceName)),
		Credentials: credentials.NewStaticCredentialsProvider(awsface.AWSDefaultAccessKeyID, awsface.AWSDefaultSecretAccessKey, "")}
	f := &fixture{t: t, ctx: context.Background(), ns: env.NewNamespace(t), cloud: cloud, cs: cs, eks: awseks.NewFromConfig(cfg)}
	t.Cleanup(func() {
		_ = cloud.Stop()
		list, err := cs.CoreV1().Nodes().List(f.ctx, metav1.ListOptions{LabelSelector: awsface.EKSLabelNodegroup})
		if err == nil {
			for _, n := range list.Items {
				_ = cs.CoreV1().Nodes().Delete(f.ctx, n.Name, metav1.DeleteOptions{})
			}
		}
		_ = env.Client.Delete(f.ctx, &infrav1.AWSClusterStaticIdentity{ObjectMeta: metav1.ObjectMeta{Name: identity}})
	})
	itest.CreateCluster(t, env, f.ns, clusterName, "examples", "eks", "cluster.yaml")
	return f
}

func (f *fixture) manifest(path ...string) []*unstructured.Unstructured {
	f.t.Helper()
	return itest.Manifest(f.t, f.ns, path...)
}

func (f *fixture) create(obj client.Object) {
	f.t.Helper()
	if err := env.Client.Create(f.ctx, obj); err != nil {
		f.t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
	}
}

func (f *fixture) key(name string) types.NamespacedName {
	return types.NamespacedName{Namespace: f.ns, Name: name}
}

// nodegroup is the pool's node group name.
func (f *fixture) nodegroup() string {
	return eks.NodegroupName(&infrav1.AWSManagedMachinePool{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: poolName}})
}

func (f *fixture) updateMachinePool(mutate func(*clusterv1.MachinePool)) {
	f.t.Helper()
	mp := &clusterv1.MachinePool{}
	if err := env.Client.Get(f.ctx, f.key(poolName), mp); err != nil {
		f.t.Fatal(err)
	}
	before := mp.DeepCopy()
	mutate(mp)
	if err := env.Client.Patch(f.ctx, mp, client.MergeFrom(before)); err != nil {
		f.t.Fatal(err)
	}
}

// nodes returns the Nodes of the pool's node group.
func (f *fixture) nodes() []corev1.Node {
	f.t.Helper()
	list, err := f.cs.CoreV1().Nodes().List(f.ctx, metav1.ListOptions{LabelSelector: awsface.EKSLabelNodegroup + "=" + f.nodegroup()})
	if err != nil {
		f.t.Fatal(err)
	}
	return list.Items
}

// describe returns the node group as EKS reports it, with the error.
func (f *fixture) describe() (*awseks.DescribeNodegroupOutput, error) {
	return f.eks.DescribeNodegroup(f.ctx, &awseks.DescribeNodegroupInput{ClusterName: aws.String(awsface.EKSDefaultClusterName), NodegroupName: aws.String(f.nodegroup())})
}

// ops returns how many requests of operation op the face answered with a
// status below 300.
func (f *fixture) ops(face, op string) int64 {
	var n int64
	for _, r := range f.cloud.Stats().Requests {
		if r.Face == face && r.Operation == op && r.Status < 300 {
			n += r.Count
		}
	}
	return n
}

// converged reports whether the pool is Running with n Ready Nodes of
// version carrying EKS's labels, every instance on the latest model.
func (f *fixture) converged(n int, version string) error {
	mp := &clusterv1.MachinePool{}
	if err := env.Client.Get(f.ctx, f.key(poolName), mp); err != nil {
		return err
	}
	if mp.Status.Phase != string(clusterv1.MachinePoolPhaseRunning) || ptr.Deref(mp.Status.ReadyReplicas, -1) != int32(n) || ptr.Deref(mp.Status.Replicas, -1) != int32(n) {
		return fmt.Errorf("MachinePool phase %s, replicas %v, ready %v; want Running with %d", mp.Status.Phase, mp.Status.Replicas, mp.Status.ReadyReplicas, n)
	}
	p := &infrav1.AWSManagedMachinePool{}
	if err := env.Client.Get(f.ctx, f.key(poolName), p); err != nil {
		return err
	}
	if c := meta.FindStatusCondition(p.Status.Conditions, infrav1.RolloutProgressingCondition); c == nil || c.Reason != infrav1.ConvergedReason {
		return fmt.Errorf("AWSManagedMachinePool not converged: %+v", c)
	}
	if c := meta.FindStatusCondition(p.Status.Conditions, infrav1.EKSNodegroupReadyCondition); c == nil || c.Status != metav1.ConditionTrue {
		return fmt.Errorf("AWSManagedMachinePool EKSNodegroupReady: %+v", c)
	}
	if len(p.Spec.ProviderIDList) != n || p.Status.Replicas != int32(n) || !p.Status.Ready {
		return fmt.Errorf("AWSManagedMachinePool reports %d providerIDs, %d replicas, ready %v", len(p.Spec.ProviderIDList), p.Status.Replicas, p.Status.Ready)
	}
	for _, id := range p.Spec.ProviderIDList {
		if !strings.HasPrefix(id, "aws:///us-east-1a/i-") {
			return fmt.Errorf("providerID %s is not aws:///<az>/<instance-id>", id)
		}
	}
	nodes := f.nodes()
	if len(nodes) != n {
		return fmt.Errorf("%d Nodes, want %d", len(nodes), n)
	}
	for i := range nodes {
		node := &nodes[i]
		if !testenv.NodeReady(node) || node.Spec.Unschedulable {
			return fmt.Errorf("Node %s ready %v unschedulable %v", node.Name, testenv.NodeReady(node), node.Spec.Unschedulable)
		}
		if node.Status.NodeInfo.KubeletVersion != version {
			return fmt.Errorf("Node %s runs %s, want %s", node.Name, node.Status.NodeInfo.KubeletVersion, version)
		}
		l := node.Labels
		if l[awsface.EKSLabelCapacityType] != "ON_DEMAND" || !strings.HasPrefix(l[awsface.EKSLabelNodegroupImage], "ami-") || l["workload"] != "general" {
			return fmt.Errorf("Node %s labels %v: want EKS's and the pool's", node.Name, l)
		}
		if len(node.Spec.Taints) != 1 || node.Spec.Taints[0].Key != "dedicated" || node.Spec.Taints[0].Effect != corev1.TaintEffectPreferNoSchedule {
			return fmt.Errorf("Node %s taints %v: want the pool's", node.Name, node.Spec.Taints)
		}
		if !strings.HasPrefix(node.Spec.ProviderID, "aws:///us-east-1a/i-") {
			return fmt.Errorf("Node %s providerID %s", node.Name, node.Spec.ProviderID)
		}
	}
	machines := &infrav1.AWSManagedMachinePoolMachineList{}
	if err := env.Client.List(f.ctx, machines, client.InNamespace(f.ns)); err != nil {
		return err
	}
	if len(machines.Items) != n {
		return fmt.Errorf("%d AWSManagedMachinePoolMachines, want %d", len(machines.Items), n)
	}
	for _, m := range machines.Items {
		if !m.Status.Ready || !m.Status.LatestModelApplied || m.Status.NodeRef == nil {
			return fmt.Errorf("AWSManagedMachinePoolMachine %s: %+v", m.Name, m.Status)
		}
	}
	return nil
}
