package aws

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/face/awsface"
	"github.com/mpool-dev/mpool/test/integration/itest"
)

// TestBadInput: a refused secret access key, a subnet that is not in the
// VPC, an AMI that does not exist and a vCPU quota too small for the
// replicas are each reported in a condition that says what to change;
// nothing is created or deleted meanwhile, and the pool recovers once each
// is fixed.
func TestBadInput(t *testing.T) {
	// m5.large has 2 vCPUs: the quota holds the seed's 2 replicas, not 3.
	cloud := itest.StartCloud(t, env, core.Options{Seed: 11, Faces: []core.Face{&awsface.AWSFace{VCPUQuota: 4}}})
	f := newFixture(t, cloud)
	f.StartManager()

	t.Log("a wrong secret access key")
	secret := &corev1.Secret{}
	if err := env.Client.Get(f.Ctx, f.Key(identity), secret); err != nil {
		t.Fatal(err)
	}
	good := secret.Data["SecretAccessKey"]
	secret.Data["SecretAccessKey"] = []byte("not-the-secret")
	if err := env.Client.Update(f.Ctx, secret); err != nil {
		t.Fatal(err)
	}
	f.ApplySeed(itest.SetField("AWSMachinePool", []any{"subnet-00000000000000bad"}, "spec", "subnets"))
	f.WaitCondition(converge, infrav1.ASGReadyCondition, infrav1.CredentialsRejectedReason, "AWSClusterStaticIdentity")
	if g := f.Group(); g != nil {
		t.Fatalf("an Auto Scaling Group exists although the credentials were refused: %+v", g)
	}

	t.Log("the right key, a subnet that is not in the VPC")
	secret.Data["SecretAccessKey"] = good
	if err := env.Client.Update(f.Ctx, secret); err != nil {
		t.Fatal(err)
	}
	f.WaitCondition(converge, infrav1.ASGReadyCondition, infrav1.InvalidSpecReason, "subnet-00000000000000bad")
	if g := f.Group(); g != nil {
		t.Fatalf("an Auto Scaling Group exists although its subnet was refused: %+v", g)
	}

	t.Log("the seed's subnet, an AMI that does not exist")
	f.updateAWSPool(func(p *infrav1.AWSMachinePool) {
		p.Spec.Subnets = []infrav1.AWSResourceReference{{ID: ptr.To(awsface.AWSDefaultSubnetID)}}
		p.Spec.AWSLaunchTemplate.AMI.ID = ptr.To("ami-00000000000000bad")
	})
	f.WaitCondition(converge, infrav1.ASGReadyCondition, infrav1.InvalidSpecReason, "ami-00000000000000bad")
	if n := len(f.InstanceIDs()); n != 0 {
		t.Fatalf("%d instances run although their AMI does not exist", n)
	}

	t.Log("CAPA's AMI lookup by version, then more replicas than the vCPU quota holds")
	f.updateAWSPool(func(p *infrav1.AWSMachinePool) { p.Spec.AWSLaunchTemplate.AMI.ID = nil })
	f.waitConverged(2, seedVersion)
	before := f.InstanceIDs()
	f.Scale(3)
	f.WaitCondition(converge, infrav1.ScaleGroupReadyCondition, infrav1.ScaleGroupProblemReason, "vCPU limit of 4")
	if after := f.InstanceIDs(); strings.Join(after, ",") != strings.Join(before, ",") {
		t.Fatalf("instances %v became %v while the quota refused the third: none may go", before, after)
	}
	f.Scale(2)
	f.waitConverged(2, seedVersion)
	f.deletePoolAndWaitGone()
}
