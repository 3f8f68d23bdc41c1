package eks

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mpool-dev/mpool/sim/face/eksface"
	"github.com/mpool-dev/mpool/test/integration/itest"
)

// TestAWSCLISeesTheNodegroup: an independent client, the AWS CLI, sees the
// node group mpool manages in the simulated EKS (describe-nodegroup), as
// the AWS tests' TestAWSCLISeesThePool sees their Auto Scaling Group.
func TestAWSCLISeesTheNodegroup(t *testing.T) {
	cli := itest.AWSCLI(t)
	f, _ := startSeeded(t, "1.32")

	out := itest.RunAWSCLI(t, cli, f.Cloud.FaceURL(eksface.EKSFaceName),
		"eks", "describe-nodegroup", "--cluster-name", eksface.EKSDefaultClusterName, "--nodegroup-name", f.nodegroup())
	var got struct {
		Nodegroup struct {
			NodegroupName, ClusterName, Status, Version, CapacityType string
			ScalingConfig                                             struct{ MinSize, MaxSize, DesiredSize int }
			InstanceTypes, Subnets                                    []string
			Labels, Tags                                              map[string]string
		}
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	ng := got.Nodegroup
	if ng.NodegroupName != f.nodegroup() || ng.ClusterName != eksface.EKSDefaultClusterName || ng.Status != "ACTIVE" || ng.Version != "1.31" || ng.CapacityType != "ON_DEMAND" {
		t.Errorf("the CLI sees node group %s of %s, %s at %s (%s)", ng.NodegroupName, ng.ClusterName, ng.Status, ng.Version, ng.CapacityType)
	}
	if ng.ScalingConfig.DesiredSize != 2 || ng.ScalingConfig.MinSize != 1 || ng.ScalingConfig.MaxSize != 5 {
		t.Errorf("the CLI sees scaling %+v; the pool asks for 2 in [1, 5]", ng.ScalingConfig)
	}
	if strings.Join(ng.InstanceTypes, ",") != "m5.large" || strings.Join(ng.Subnets, ",") != "subnet-0123456789abcdef0" || ng.Labels["workload"] != "general" {
		t.Errorf("the CLI sees instance types %v, subnets %v, labels %v", ng.InstanceTypes, ng.Subnets, ng.Labels)
	}
	if ng.Tags["example"] != "mpool" || ng.Tags["mpool.dev/model-hash"] == "" {
		t.Errorf("the CLI sees tags %v: want the pool's additionalTags and mpool's model hash", ng.Tags)
	}
}
