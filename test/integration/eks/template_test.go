package eks

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/sim/face/awsface"
	"github.com/mpool-dev/mpool/sim/face/eksface"
	"github.com/mpool-dev/mpool/test/integration/itest"
)

// createWithTemplate applies examples/eks/machinepool.yaml with the
// AWSManagedMachinePool's instance type moved into spec.awsLaunchTemplate.
func (f *fixture) createWithTemplate(instanceType string) {
	f.T.Helper()
	for _, obj := range f.Manifest("examples", "eks", "machinepool.yaml") {
		if obj.GetKind() == "AWSManagedMachinePool" {
			unstructured.RemoveNestedField(obj.Object, "spec", "instanceType")
			_ = unstructured.SetNestedField(obj.Object, map[string]any{"instanceType": instanceType}, "spec", "awsLaunchTemplate")
		}
		f.Create(obj)
	}
}

// ec2Client reaches the simulated EC2 as the pools' identity.
func (f *fixture) ec2Client() *ec2.Client {
	cfg := awsface.DefaultSDKConfig(f.Cloud.FaceURL(awsface.AWSFaceName))
	cfg.RetryMaxAttempts = 1
	return ec2.NewFromConfig(cfg)
}

// templateReady checks the pool's launch template status and
// LaunchTemplateReady, and that the node group launches from that version.
func (f *fixture) templateReady(version string) error {
	p := &infrav1.AWSManagedMachinePool{}
	if err := env.Client.Get(f.Ctx, f.Key(poolName), p); err != nil {
		return err
	}
	if err := itest.ConditionsTrue(p.Status.Conditions, infrav1.LaunchTemplateReadyCondition); err != nil {
		return err
	}
	id, v := ptr.Deref(p.Status.LaunchTemplateID, ""), ptr.Deref(p.Status.LaunchTemplateVersion, "")
	if !strings.HasPrefix(id, "lt-") || v != version {
		return fmt.Errorf("status launchTemplateID %q launchTemplateVersion %q, want version %s", id, v, version)
	}
	ng, err := f.describe()
	if err != nil {
		return err
	}
	lt := ng.Nodegroup.LaunchTemplate
	if lt == nil || aws.ToString(lt.Id) != id || aws.ToString(lt.Version) != version {
		return fmt.Errorf("the node group's launch template is %+v, want %s version %s", lt, id, version)
	}
	return nil
}

// TestEKSLaunchTemplate: spec.awsLaunchTemplate becomes a launch template
// mpool creates in EC2 (named after the control plane and the pool, as
// CAPA names it) and hands the node group as {id, version}; status and
// LaunchTemplateReady say so. A change of the template is a new version and
// EKS's own rolling update to it (UpdateNodegroupVersion with the launch
// template), within maxUnavailable; deleting the pool deletes the template.
func TestEKSLaunchTemplate(t *testing.T) {
	f, _ := start(t, "1.32")
	f.createWithTemplate("m5.large")
	testenv.Eventually(t, converge, func() error {
		if err := f.Converged(2, "v1.31.0"); err != nil {
			return err
		}
		return f.templateReady("1")
	})
	ec2c := f.ec2Client()
	cp := &infrav1.AWSManagedControlPlaneList{}
	if err := env.Client.List(f.Ctx, cp, client.InNamespace(f.NS)); err != nil || len(cp.Items) != 1 {
		t.Fatalf("control planes %v (%v)", cp.Items, err)
	}
	name := cp.Items[0].Name + "-" + poolName // CAPA's name of the template
	lts, err := ec2c.DescribeLaunchTemplateVersions(f.Ctx, &ec2.DescribeLaunchTemplateVersionsInput{LaunchTemplateName: aws.String(name), Versions: []string{"$Latest"}})
	if err != nil || len(lts.LaunchTemplateVersions) != 1 || string(lts.LaunchTemplateVersions[0].LaunchTemplateData.InstanceType) != "m5.large" {
		t.Fatalf("launch template %s in EC2: %+v (%v)", name, lts, err)
	}

	// A new instance type: a new version, rolled by EKS.
	before := f.NodeNames()
	itest.UpdatePool(f.Fixture, func(p *infrav1.AWSManagedMachinePool) { p.Spec.AWSLaunchTemplate.InstanceType = "m5.xlarge" })
	var violation error
	testenv.Eventually(t, converge, func() error {
		serving := 0
		for _, n := range f.PoolNodes() {
			if testenv.NodeReady(&n) && !n.Spec.Unschedulable {
				serving++
			}
		}
		if serving < 1 && violation == nil {
			violation = fmt.Errorf("%d nodes serving during the update; maxUnavailable 1 of 2 keeps 1", serving)
		}
		if err := f.Converged(2, "v1.31.0"); err != nil {
			return err
		}
		if err := f.templateReady("2"); err != nil {
			return err
		}
		// The replaced instances' Nodes go after their instances have
		// (as the cloud's node lifecycle deletes them): wait for it.
		for _, n := range f.PoolNodes() {
			if before[n.Name] {
				return fmt.Errorf("Node %s of the first template version is still there", n.Name)
			}
		}
		return nil
	})
	if violation != nil {
		t.Fatal(violation)
	}
	for _, n := range f.PoolNodes() {
		if n.Labels["eks.amazonaws.com/sourceLaunchTemplateVersion"] != "2" {
			t.Errorf("Node %s labels %v: want launch template version 2", n.Name, n.Labels)
		}
	}
	if n := f.Ops(eksface.EKSFaceName, eksface.OpEKSUpdateNodegroupVersion); n != 1 {
		t.Errorf("%d UpdateNodegroupVersion for one template change", n)
	}

	// Deleting the pool deletes the node group and its launch template.
	if err := env.Client.Delete(f.Ctx, &infrav1.AWSManagedMachinePool{ObjectMeta: metav1.ObjectMeta{Namespace: f.NS, Name: poolName}}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, converge, func() error {
		if err := env.Client.Get(f.Ctx, f.Key(poolName), &infrav1.AWSManagedMachinePool{}); err == nil {
			return fmt.Errorf("the pool is still there")
		}
		_, err := f.describe()
		var nf *ekstypes.ResourceNotFoundException
		if !errors.As(err, &nf) {
			return fmt.Errorf("the node group: %v", err)
		}
		out, err := ec2c.DescribeLaunchTemplates(f.Ctx, &ec2.DescribeLaunchTemplatesInput{})
		if err != nil {
			return err
		}
		for _, lt := range out.LaunchTemplates {
			if aws.ToString(lt.LaunchTemplateName) == name {
				return fmt.Errorf("launch template %s is still there", name)
			}
		}
		return nil
	})
}

// TestEKSLaunchTemplateRefusedAtAdmission: what EKS refuses beside a
// launch template is refused when applied, naming the field, as CAPA's
// webhook refuses it; a node group keeps its launch template (or none).
func TestEKSLaunchTemplateRefusedAtAdmission(t *testing.T) {
	ns := env.NewNamespace(t)
	base := func(name string) *infrav1.AWSManagedMachinePool {
		return &infrav1.AWSManagedMachinePool{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: infrav1.AWSManagedMachinePoolSpec{SubnetIDs: []string{"subnet-0123456789abcdef0"},
				AWSLaunchTemplate: &infrav1.AWSLaunchTemplate{Name: "t", InstanceType: "m5.large"}}}
	}
	for _, tt := range []struct {
		name   string
		mutate func(*infrav1.AWSManagedMachinePool)
		want   string
	}{
		{"instanceType on both sides", func(p *infrav1.AWSManagedMachinePool) { p.Spec.InstanceType = ptr.To("m5.large") }, "spec.instanceType"},
		{"diskSize with a template", func(p *infrav1.AWSManagedMachinePool) { p.Spec.DiskSize = ptr.To[int32](20) }, "spec.diskSize"},
		{"remoteAccess with a template", func(p *infrav1.AWSManagedMachinePool) {
			p.Spec.RemoteAccess = &infrav1.ManagedRemoteAccess{SSHKeyName: ptr.To("ops")}
		}, "spec.remoteAccess"},
		{"an instance profile in the template", func(p *infrav1.AWSManagedMachinePool) { p.Spec.AWSLaunchTemplate.IamInstanceProfile = "nodes" }, "spec.awsLaunchTemplate.iamInstanceProfile"},
		{"Spot in the template", func(p *infrav1.AWSManagedMachinePool) {
			p.Spec.AWSLaunchTemplate.SpotMarketOptions = &infrav1.SpotMarketOptions{}
		}, "spec.awsLaunchTemplate.spotMarketOptions"},
		{"a release version with a custom AMI", func(p *infrav1.AWSManagedMachinePool) {
			p.Spec.AWSLaunchTemplate.AMI.ID, p.Spec.AMIVersion = ptr.To("ami-0123"), ptr.To("1.31.0-20240213")
		}, "spec.amiVersion"},
	} {
		p := base(strings.ReplaceAll(tt.name, " ", "-"))
		tt.mutate(p)
		err := env.Client.Create(context.Background(), p)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want a refusal naming %s", tt.name, err, tt.want)
		}
	}

	// Valid, then changes EKS cannot make.
	ok := base("ok")
	if err := env.Client.Create(context.Background(), ok); err != nil {
		t.Fatal(err)
	}
	renamed := ok.DeepCopy()
	renamed.Spec.AWSLaunchTemplate.Name = "other"
	if err := env.Client.Update(context.Background(), renamed); err == nil || !strings.Contains(err.Error(), "spec.awsLaunchTemplate.name") {
		t.Errorf("renaming the template: %v", err)
	}
	removed := ok.DeepCopy()
	removed.Spec.AWSLaunchTemplate = nil
	if err := env.Client.Update(context.Background(), removed); err == nil || !strings.Contains(err.Error(), "spec.awsLaunchTemplate") {
		t.Errorf("removing the template: %v", err)
	}
	changed := ok.DeepCopy()
	changed.Spec.AWSLaunchTemplate.InstanceType = "m5.xlarge"
	if err := env.Client.Update(context.Background(), changed); err != nil {
		t.Errorf("a new template version (instance type): %v", err)
	}
	plain := base("plain")
	plain.Spec.AWSLaunchTemplate, plain.Spec.InstanceType = nil, ptr.To("m5.large")
	if err := env.Client.Create(context.Background(), plain); err != nil {
		t.Fatal(err)
	}
	added := plain.DeepCopy()
	added.Spec.InstanceType, added.Spec.AWSLaunchTemplate = nil, &infrav1.AWSLaunchTemplate{InstanceType: "m5.large"}
	if err := env.Client.Update(context.Background(), added); err == nil || !strings.Contains(err.Error(), "spec.awsLaunchTemplate") {
		t.Errorf("adding a template: %v", err)
	}
}
