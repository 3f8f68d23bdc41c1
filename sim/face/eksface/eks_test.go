package eksface

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"

	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/face/awsface"
	"github.com/mpool-dev/mpool/sim/face/awsface/awstest"
	"github.com/mpool-dev/mpool/sim/server"
	"github.com/mpool-dev/mpool/sim/server/servertest"
)

// eksTestEnv is a simulated cloud with clients of the real AWS SDK for Go
// v2 pointed at its EKS and AWS faces.
type eksTestEnv struct {
	srv *server.Server
	eks *eks.Client
	asg *autoscaling.Client
	ec2 *ec2.Client
}

func newEKSEnv(t testing.TB, faces ...core.Face) *eksTestEnv {
	t.Helper()
	return eksEnvOf(t, startCloud(t, core.Options{DefaultSimulation: &core.Simulation{BootDelay: 50 * time.Millisecond}, Faces: faces}))
}

// eksEnvOf is the clients of srv's EKS and AWS faces.
func eksEnvOf(t testing.TB, srv *server.Server) *eksTestEnv {
	t.Helper()
	u := srv.FaceURL(EKSFaceName)
	if !strings.HasPrefix(u, "http://") || u == srv.URL()+"/eks" {
		t.Fatalf("eks face URL %q: want a listener of its own", u)
	}
	cfg := awsConfig(u)
	acfg := awsConfig(srv.FaceURL(awsface.AWSFaceName))
	return &eksTestEnv{srv: srv, eks: eks.NewFromConfig(cfg), asg: autoscaling.NewFromConfig(acfg), ec2: ec2.NewFromConfig(acfg)}
}

// startCloud starts a Server with the AWS and EKS faces (a face of
// opts.Faces of their name replaces one) that boots in 100ms by default.
func startCloud(t testing.TB, opts core.Options) *server.Server {
	t.Helper()
	return servertest.Start(t, opts, &awsface.AWSFace{}, &EKSFace{})
}

// awsConfig is the SDK configuration of the tests' clients of the face at
// url, with the AWS face's default key.
func awsConfig(url string) aws.Config {
	return awstest.Config(url, awsface.AWSDefaultRegion, awsface.AWSDefaultAccessKeyID, awsface.AWSDefaultSecretAccessKey)
}

// wait polls the node group until ok accepts it, for at most 20s.
func (e *eksTestEnv) wait(t testing.TB, cluster, name string, ok func(*ekstypes.Nodegroup) bool) *ekstypes.Nodegroup {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		out, err := e.eks.DescribeNodegroup(context.Background(), &eks.DescribeNodegroupInput{ClusterName: aws.String(cluster), NodegroupName: aws.String(name)})
		if err == nil && ok(out.Nodegroup) {
			return out.Nodegroup
		}
		if time.Now().After(deadline) {
			if err == nil {
				err = fmt.Errorf("status %s", out.Nodegroup.Status)
			}
			t.Fatalf("node group %s: %v", name, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// instances returns the node group's EC2 instances that are not shutting
// down, by the release tag they were launched with.
func (e *eksTestEnv) instances(t testing.TB, name string) map[string]string {
	t.Helper()
	out, err := e.ec2.DescribeInstances(context.Background(), &ec2.DescribeInstancesInput{Filters: []ec2types.Filter{
		{Name: aws.String("tag:" + EKSTagNodegroupName), Values: []string{name}},
		{Name: aws.String("instance-state-name"), Values: []string{"pending", "running"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range out.Reservations {
		for _, in := range r.Instances {
			for _, tg := range in.Tags {
				if aws.ToString(tg.Key) == EKSTagRelease {
					got[aws.ToString(in.InstanceId)] = aws.ToString(tg.Value)
				}
			}
		}
	}
	return got
}

// createNodegroup creates a t3.medium (2 vCPUs) node group of desired
// nodes in cluster c1.
func (e *eksTestEnv) createNodegroup(t testing.TB, name string, desired int32, lt *ekstypes.LaunchTemplateSpecification) {
	t.Helper()
	if _, err := e.eks.CreateNodegroup(context.Background(), &eks.CreateNodegroupInput{
		ClusterName: aws.String("c1"), NodegroupName: aws.String(name), NodeRole: aws.String("role"), Subnets: []string{awsface.AWSDefaultSubnetID},
		ScalingConfig:  &ekstypes.NodegroupScalingConfig{MinSize: aws.Int32(0), MaxSize: aws.Int32(5), DesiredSize: aws.Int32(desired)},
		InstanceTypes:  []string{"t3.medium"},
		LaunchTemplate: lt,
	}); err != nil {
		t.Fatal(err)
	}
}

// issue returns the node group's only health issue, failing otherwise.
func issue(t testing.TB, ng *ekstypes.Nodegroup, code ekstypes.NodegroupIssueCode) ekstypes.Issue {
	t.Helper()
	if ng.Health == nil || len(ng.Health.Issues) != 1 || ng.Health.Issues[0].Code != code {
		t.Fatalf("node group %s (%s): health %+v, want one %s issue", aws.ToString(ng.NodegroupName), ng.Status, ng.Health, code)
	}
	return ng.Health.Issues[0]
}

func healthy(n *ekstypes.Nodegroup) bool {
	return n.Status == ekstypes.NodegroupStatusActive && n.Health != nil && len(n.Health.Issues) == 0
}

// waitInstances polls the node group's instances until ok accepts their
// IDs, for at most 10s.
func (e *eksTestEnv) waitInstances(t *testing.T, name, what string, ok func([]string) bool) []string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ids := slices.Sorted(maps.Keys(e.instances(t, name)))
		if ok(ids) {
			return ids
		}
		if time.Now().After(deadline) {
			t.Fatalf("node group %s never %s: instances %v", name, what, ids)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// healthyNodegroup creates a node group (createNodegroup), waits until it
// is ACTIVE without issues and returns it with its Auto Scaling group's
// name.
func (e *eksTestEnv) healthyNodegroup(t testing.TB, name string, desired int32, lt *ekstypes.LaunchTemplateSpecification) (*ekstypes.Nodegroup, string) {
	t.Helper()
	e.createNodegroup(t, name, desired, lt)
	ng := e.wait(t, "c1", name, healthy)
	return ng, aws.ToString(ng.Resources.AutoScalingGroups[0].Name)
}

// wantReleases fails t unless the node group has n instances, all of a
// release starting with prefix.
func (e *eksTestEnv) wantReleases(t testing.TB, name string, n int, prefix string) {
	t.Helper()
	got := e.instances(t, name)
	if len(got) != n {
		t.Fatalf("node group %s: instances %v, want %d", name, got, n)
	}
	for id, rel := range got {
		if !strings.HasPrefix(rel, prefix) {
			t.Fatalf("node group %s: instance %s of release %q, want %s...", name, id, rel, prefix)
		}
	}
}

// createCluster creates the EKS cluster c1 (of EKS's default Kubernetes
// version when version is empty).
func (e *eksTestEnv) createCluster(t testing.TB, version string) {
	t.Helper()
	if err := EKSCreateCluster(e.srv.Cloud(), awsface.AWSDefaultAccountID, awsface.AWSDefaultRegion, "c1", version); err != nil {
		t.Fatal(err)
	}
}

func TestEKSFaceNodegroupLifecycle(t *testing.T) {
	e := newEKSEnv(t)
	ctx := context.Background()
	if _, err := e.eks.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String("nope")}); err == nil {
		t.Fatal("DescribeCluster of a missing cluster succeeded")
	} else {
		awstest.APIError(t, err, EKSCodeResourceNotFound)
	}
	if _, err := e.eks.CreateCluster(ctx, &eks.CreateClusterInput{Name: aws.String("c1"), Version: aws.String("1.31"),
		RoleArn: aws.String("arn:aws:iam::000000000001:role/eks"), ResourcesVpcConfig: &ekstypes.VpcConfigRequest{}}); err != nil {
		t.Fatal(err)
	}
	cl, err := e.eks.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String("c1")})
	if err != nil || cl.Cluster.Status != ekstypes.ClusterStatusActive || aws.ToString(cl.Cluster.Version) != "1.31" {
		t.Fatalf("DescribeCluster: %+v, %v", cl, err)
	}

	create := &eks.CreateNodegroupInput{
		ClusterName: aws.String("c1"), NodegroupName: aws.String("ng1"), NodeRole: aws.String("arn:aws:iam::000000000001:role/node"),
		Subnets:       []string{awsface.AWSDefaultSubnetID},
		ScalingConfig: &ekstypes.NodegroupScalingConfig{MinSize: aws.Int32(1), MaxSize: aws.Int32(5), DesiredSize: aws.Int32(2)},
		UpdateConfig:  &ekstypes.NodegroupUpdateConfig{MaxUnavailable: aws.Int32(1)},
		Labels:        map[string]string{"tier": "web"},
		Taints:        []ekstypes.Taint{{Key: aws.String("dedicated"), Value: aws.String("web"), Effect: ekstypes.TaintEffectNoSchedule}},
		Tags:          map[string]string{awsface.AWSTagModelHash: "h1"},
		Version:       aws.String("1.30"),
	}
	bad := *create
	bad.ScalingConfig = &ekstypes.NodegroupScalingConfig{MinSize: aws.Int32(3), MaxSize: aws.Int32(2), DesiredSize: aws.Int32(2)}
	if _, err := e.eks.CreateNodegroup(ctx, &bad); err == nil {
		t.Fatal("a node group with minSize > maxSize was created")
	} else {
		awstest.APIError(t, err, EKSCodeInvalidParameter)
	}
	out, err := e.eks.CreateNodegroup(ctx, create)
	if err != nil {
		t.Fatal(err)
	}
	if out.Nodegroup.Status != ekstypes.NodegroupStatusCreating || aws.ToString(out.Nodegroup.ReleaseVersion) != "1.30.0-"+EKSReleaseDate {
		t.Fatalf("created node group: status %s release %s", out.Nodegroup.Status, aws.ToString(out.Nodegroup.ReleaseVersion))
	}
	if _, err := e.eks.CreateNodegroup(ctx, create); err == nil {
		t.Fatal("a node group was created twice")
	} else {
		awstest.APIError(t, err, EKSCodeResourceInUse)
	}
	ng := e.wait(t, "c1", "ng1", func(n *ekstypes.Nodegroup) bool { return n.Status == ekstypes.NodegroupStatusActive })
	asgName := aws.ToString(ng.Resources.AutoScalingGroups[0].Name)
	asgs, err := e.asg.DescribeAutoScalingGroups(ctx, &autoscaling.DescribeAutoScalingGroupsInput{AutoScalingGroupNames: []string{asgName}})
	if err != nil || len(asgs.AutoScalingGroups) != 1 || len(asgs.AutoScalingGroups[0].Instances) != 2 {
		t.Fatalf("the node group's ASG %s: %+v, %v", asgName, asgs, err)
	}
	if got := e.instances(t, "ng1"); len(got) != 2 {
		t.Fatalf("instances %v: want 2", got)
	}

	// Scale 2 → 3.
	up, err := e.eks.UpdateNodegroupConfig(ctx, &eks.UpdateNodegroupConfigInput{ClusterName: aws.String("c1"), NodegroupName: aws.String("ng1"),
		ScalingConfig: &ekstypes.NodegroupScalingConfig{DesiredSize: aws.Int32(3)}})
	if err != nil || up.Update.Type != ekstypes.UpdateTypeConfigUpdate || up.Update.Status != ekstypes.UpdateStatusInProgress {
		t.Fatalf("UpdateNodegroupConfig: %+v, %v", up, err)
	}
	// A second update while one runs is refused.
	if _, err := e.eks.UpdateNodegroupVersion(ctx, &eks.UpdateNodegroupVersionInput{ClusterName: aws.String("c1"), NodegroupName: aws.String("ng1")}); err == nil {
		t.Fatal("an update started while another ran")
	} else {
		awstest.APIError(t, err, EKSCodeResourceInUse)
	}
	e.wait(t, "c1", "ng1", func(n *ekstypes.Nodegroup) bool { return n.Status == ekstypes.NodegroupStatusActive })
	if got := e.instances(t, "ng1"); len(got) != 3 {
		t.Fatalf("instances %v: want 3", got)
	}
	du, err := e.eks.DescribeUpdate(ctx, &eks.DescribeUpdateInput{Name: aws.String("c1"), NodegroupName: aws.String("ng1"), UpdateId: up.Update.Id})
	if err != nil || du.Update.Status != ekstypes.UpdateStatusSuccessful {
		t.Fatalf("DescribeUpdate: %+v, %v", du, err)
	}

	// A version update skipping a minor version is refused; 1.30 → 1.31
	// replaces every node.
	if _, err := e.eks.UpdateNodegroupVersion(ctx, &eks.UpdateNodegroupVersionInput{ClusterName: aws.String("c1"), NodegroupName: aws.String("ng1"),
		Version: aws.String("1.32")}); err == nil {
		t.Fatal("an update past the cluster's version was accepted")
	} else {
		awstest.APIError(t, err, EKSCodeInvalidParameter)
	}
	before := e.instances(t, "ng1")
	vu, err := e.eks.UpdateNodegroupVersion(ctx, &eks.UpdateNodegroupVersionInput{ClusterName: aws.String("c1"), NodegroupName: aws.String("ng1"),
		Version: aws.String("1.31")})
	if err != nil || vu.Update.Type != ekstypes.UpdateTypeVersionUpdate {
		t.Fatalf("UpdateNodegroupVersion: %+v, %v", vu, err)
	}
	ng = e.wait(t, "c1", "ng1", func(n *ekstypes.Nodegroup) bool {
		if got := e.instances(t, "ng1"); len(got) > 3+1 {
			t.Fatalf("%d instances during the update: more than desired + maxUnavailable", len(got))
		}
		return n.Status == ekstypes.NodegroupStatusActive
	})
	after := e.instances(t, "ng1")
	if len(after) != 3 || aws.ToString(ng.Version) != "1.31" {
		t.Fatalf("after the update: instances %v, version %s", after, aws.ToString(ng.Version))
	}
	for id, rel := range after {
		if _, old := before[id]; old || !strings.HasPrefix(rel, "1.31/") {
			t.Fatalf("instance %s (release %s) was not replaced", id, rel)
		}
	}
	ids, err := e.eks.ListUpdates(ctx, &eks.ListUpdatesInput{Name: aws.String("c1"), NodegroupName: aws.String("ng1")})
	if err != nil || len(ids.UpdateIds) != 2 {
		t.Fatalf("ListUpdates: %+v, %v", ids, err)
	}

	// Tags.
	if _, err := e.eks.TagResource(ctx, &eks.TagResourceInput{ResourceArn: ng.NodegroupArn, Tags: map[string]string{awsface.AWSTagModelHash: "h2"}}); err != nil {
		t.Fatal(err)
	}
	tags, err := e.eks.ListTagsForResource(ctx, &eks.ListTagsForResourceInput{ResourceArn: ng.NodegroupArn})
	if err != nil || tags.Tags[awsface.AWSTagModelHash] != "h2" {
		t.Fatalf("ListTagsForResource: %+v, %v", tags, err)
	}

	// Delete.
	if _, err := e.eks.DeleteNodegroup(ctx, &eks.DeleteNodegroupInput{ClusterName: aws.String("c1"), NodegroupName: aws.String("ng1")}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, err := e.eks.DescribeNodegroup(ctx, &eks.DescribeNodegroupInput{ClusterName: aws.String("c1"), NodegroupName: aws.String("ng1")})
		if err != nil {
			awstest.APIError(t, err, EKSCodeResourceNotFound)
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the node group was not deleted")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got := e.instances(t, "ng1"); len(got) != 0 {
		t.Fatalf("instances %v left after the deletion", got)
	}
}

func TestEKSFaceQuotas(t *testing.T) {
	e := newEKSEnv(t, &EKSFace{MaxNodegroupsPerCluster: 1, MaxNodesPerNodegroup: 3})
	ctx := context.Background()
	e.createCluster(t, "")
	create := func(name string, maxSize int32) error {
		_, err := e.eks.CreateNodegroup(ctx, &eks.CreateNodegroupInput{
			ClusterName: aws.String("c1"), NodegroupName: aws.String(name), NodeRole: aws.String("role"), Subnets: []string{awsface.AWSDefaultSubnetID},
			ScalingConfig: &ekstypes.NodegroupScalingConfig{MinSize: aws.Int32(0), MaxSize: aws.Int32(maxSize), DesiredSize: aws.Int32(1)},
		})
		return err
	}
	if err := create("big", 4); err == nil {
		t.Fatal("a node group beyond the nodes quota was created")
	} else {
		awstest.APIError(t, err, EKSCodeResourceLimitExceeded)
	}
	if err := create("ng1", 3); err != nil {
		t.Fatal(err)
	}
	if err := create("ng2", 3); err == nil {
		t.Fatal("a node group beyond the node groups quota was created")
	} else {
		awstest.APIError(t, err, EKSCodeResourceLimitExceeded)
	}
}

func TestEKSFaceNodeCreationFailure(t *testing.T) {
	e := newEKSEnv(t, &EKSFace{NodeCreationTimeout: 300 * time.Millisecond})
	ctx := context.Background()
	e.createCluster(t, "")
	// Every instance fails to boot.
	fail := 1.0
	if _, err := e.srv.Cloud().SetDefaultSimulation(core.SimulationPatch{FailureRate: &fail}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.eks.CreateNodegroup(ctx, &eks.CreateNodegroupInput{
		ClusterName: aws.String("c1"), NodegroupName: aws.String("ng1"), NodeRole: aws.String("role"), Subnets: []string{awsface.AWSDefaultSubnetID},
		ScalingConfig: &ekstypes.NodegroupScalingConfig{MinSize: aws.Int32(1), MaxSize: aws.Int32(2), DesiredSize: aws.Int32(2)},
	}); err != nil {
		t.Fatal(err)
	}
	ng := e.wait(t, "c1", "ng1", func(n *ekstypes.Nodegroup) bool { return n.Status == ekstypes.NodegroupStatusCreateFailed })
	if len(ng.Health.Issues) != 1 || ng.Health.Issues[0].Code != ekstypes.NodegroupIssueCodeNodeCreationFailure || len(ng.Health.Issues[0].ResourceIds) != 2 {
		t.Fatalf("health %+v: want NodeCreationFailure naming both instances", ng.Health)
	}
	if _, err := e.eks.UpdateNodegroupConfig(ctx, &eks.UpdateNodegroupConfigInput{ClusterName: aws.String("c1"), NodegroupName: aws.String("ng1"),
		ScalingConfig: &ekstypes.NodegroupScalingConfig{DesiredSize: aws.Int32(1)}}); err == nil {
		t.Fatal("a CREATE_FAILED node group was updated")
	} else {
		awstest.APIError(t, err, EKSCodeResourceInUse)
	}
	if _, err := e.eks.DeleteNodegroup(ctx, &eks.DeleteNodegroupInput{ClusterName: aws.String("c1"), NodegroupName: aws.String("ng1")}); err != nil {
		t.Fatal(err)
	}
}

// TestEKSFaceUpdateSurvivesRestart: a cloud stopped mid-update resumes it
// from its state file.
func TestEKSFaceUpdateSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	start := func() *eksTestEnv {
		return eksEnvOf(t, startCloud(t, core.Options{DataDir: dir, DefaultSimulation: &core.Simulation{BootDelay: 300 * time.Millisecond}}))
	}
	e := start()
	ctx := context.Background()
	e.createCluster(t, "1.31")
	if _, err := e.eks.CreateNodegroup(ctx, &eks.CreateNodegroupInput{
		ClusterName: aws.String("c1"), NodegroupName: aws.String("ng1"), NodeRole: aws.String("role"), Subnets: []string{awsface.AWSDefaultSubnetID},
		ScalingConfig: &ekstypes.NodegroupScalingConfig{MinSize: aws.Int32(1), MaxSize: aws.Int32(4), DesiredSize: aws.Int32(3)}, Version: aws.String("1.30"),
	}); err != nil {
		t.Fatal(err)
	}
	e.wait(t, "c1", "ng1", func(n *ekstypes.Nodegroup) bool { return n.Status == ekstypes.NodegroupStatusActive })
	up, err := e.eks.UpdateNodegroupVersion(ctx, &eks.UpdateNodegroupVersionInput{ClusterName: aws.String("c1"), NodegroupName: aws.String("ng1")})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.srv.Stop(); err != nil {
		t.Fatal(err)
	}

	e = start()
	ng := e.wait(t, "c1", "ng1", func(n *ekstypes.Nodegroup) bool { return n.Status == ekstypes.NodegroupStatusActive })
	du, err := e.eks.DescribeUpdate(ctx, &eks.DescribeUpdateInput{Name: aws.String("c1"), NodegroupName: aws.String("ng1"), UpdateId: up.Update.Id})
	if err != nil || du.Update.Status != ekstypes.UpdateStatusSuccessful || aws.ToString(ng.Version) != "1.31" {
		t.Fatalf("after the restart: update %+v (%v), node group at %s", du, err, aws.ToString(ng.Version))
	}
	e.wantReleases(t, "ng1", 3, "1.31/")
}
