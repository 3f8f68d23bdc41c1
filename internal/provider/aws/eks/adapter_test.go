package eks

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/provider/contract"
	"github.com/mpool-dev/mpool/internal/scalegroup"
)

func pool(mutate func(*infrav1.AWSManagedMachinePool)) *infrav1.AWSManagedMachinePool {
	p := &infrav1.AWSManagedMachinePool{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"},
		Spec: infrav1.AWSManagedMachinePoolSpec{
			SubnetIDs: []string{"subnet-b", "subnet-a"},
			Scaling:   &infrav1.ManagedMachinePoolScaling{MinSize: ptr.To[int32](1), MaxSize: ptr.To[int32](5)},
			Taints:    []infrav1.Taint{{Key: "k", Value: "v", Effect: infrav1.TaintEffectPreferNoSchedule}},
		},
	}
	if mutate != nil {
		mutate(p)
	}
	return p
}

func owner(replicas int32, version string) contract.Owner {
	mp := &clusterv1.MachinePool{Spec: clusterv1.MachinePoolSpec{ClusterName: "eks", Replicas: ptr.To(replicas)}}
	return contract.Owner{MachinePool: mp, Version: version}
}

func TestDesired(t *testing.T) {
	for _, tt := range []struct {
		name    string
		pool    *infrav1.AWSManagedMachinePool
		owner   contract.Owner
		wantErr string
	}{
		{name: "the example", pool: pool(nil), owner: owner(2, "v1.31.0")},
		{name: "a launch template unnamed without a control plane to name it after", pool: pool(func(p *infrav1.AWSManagedMachinePool) { p.Spec.AWSLaunchTemplate = &infrav1.AWSLaunchTemplate{} }),
			owner: owner(2, "v1.31.0"), wantErr: "spec.awsLaunchTemplate.name"},
		{name: "an instance profile in the launch template", pool: pool(func(p *infrav1.AWSManagedMachinePool) {
			p.Spec.AWSLaunchTemplate = &infrav1.AWSLaunchTemplate{Name: "t", IamInstanceProfile: "nodes"}
		}), owner: owner(2, "v1.31.0"), wantErr: "spec.awsLaunchTemplate.iamInstanceProfile"},
		{name: "an AMI lookup in the launch template", pool: pool(func(p *infrav1.AWSManagedMachinePool) {
			p.Spec.AWSLaunchTemplate = &infrav1.AWSLaunchTemplate{Name: "t", AMI: infrav1.AMIReference{EKSOptimizedLookupType: ptr.To("AmazonLinux2023")}}
		}), owner: owner(2, "v1.31.0"), wantErr: "spec.awsLaunchTemplate"},
		{name: "subnets are required", pool: pool(func(p *infrav1.AWSManagedMachinePool) { p.Spec.SubnetIDs = nil }), owner: owner(2, ""), wantErr: "spec.subnetIDs"},
		{name: "replicas outside the scaling range", pool: pool(nil), owner: owner(6, ""), wantErr: "spec.scaling"},
		{name: "an AMI release of another version", pool: pool(func(p *infrav1.AWSManagedMachinePool) { p.Spec.AMIVersion = ptr.To("1.30.0-20240213") }),
			owner: owner(2, "v1.31.0"), wantErr: "spec.amiVersion"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Adapter{}.Desired(tt.pool, tt.owner)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one naming %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			ng, st := d.Model.Provider.(Nodegroup), d.Model.InPlace.(Settings)
			if strings.Join(ng.Subnets, ",") != "subnet-a,subnet-b" || ng.CapacityType != "ON_DEMAND" || ng.AMIType != defaultAMIType || ng.NodeRole != DefaultNodeRole {
				t.Fatalf("node group %+v", ng)
			}
			if st.MinSize != 1 || st.MaxSize != 5 || len(st.Taints) != 1 || st.Taints[0].Effect != "PREFER_NO_SCHEDULE" {
				t.Fatalf("settings %+v", st)
			}
		})
	}
}

func TestGroupRef(t *testing.T) {
	cp := &infrav1.AWSManagedControlPlane{ObjectMeta: metav1.ObjectMeta{Name: "eks"}, Spec: infrav1.AWSManagedControlPlaneSpec{
		EKSClusterName: "c1", Region: "eu-west-1", IdentityRef: &infrav1.AWSIdentityReference{Kind: infrav1.AWSClusterStaticIdentityKind, Name: "id"}}}
	ref, err := Adapter{}.GroupRef(pool(func(p *infrav1.AWSManagedMachinePool) { p.Spec.EKSNodegroupName = "ng" }), cp)
	if err != nil || ref.Name != "ng" || ref.Scope != "eu-west-1/c1" || ref.Credentials != "AWSClusterStaticIdentity/id" || ref.Namespace != "ns" {
		t.Fatalf("ref %+v, %v", ref, err)
	}
	if ref, _ := (Adapter{}).GroupRef(pool(nil), cp); len(ref.Name) > maxNodegroupName || !strings.HasPrefix(ref.Name, "ns-p-") {
		t.Fatalf("derived node group name %q", ref.Name)
	}
}

// TestDesiredLaunchTemplate: spec.awsLaunchTemplate becomes the model's
// launch template, named after the control plane and the pool as CAPA
// names it; a custom AMI sends no AMI type; the instance type is the
// template's.
func TestDesiredLaunchTemplate(t *testing.T) {
	p := pool(func(p *infrav1.AWSManagedMachinePool) {
		p.Spec.AWSLaunchTemplate = &infrav1.AWSLaunchTemplate{
			InstanceType: "m5.xlarge", AMI: infrav1.AMIReference{ID: ptr.To("ami-0123")}, SSHKeyName: ptr.To("ops"),
			RootVolume: &infrav1.Volume{Size: 50, Type: "gp3"}, AdditionalSecurityGroups: []infrav1.AWSResourceReference{{ID: ptr.To("sg-1")}},
		}
	})
	o := owner(2, "v1.31.0")
	o.InfraCluster = &infrav1.AWSManagedControlPlane{ObjectMeta: metav1.ObjectMeta{Name: "cp"}}
	d, err := Adapter{}.Desired(p, o)
	if err != nil {
		t.Fatal(err)
	}
	ng := d.Model.Provider.(Nodegroup)
	lt := ng.LaunchTemplate
	if lt == nil || lt.Name != "cp-p" || lt.ImageID != "ami-0123" || lt.InstanceType != "m5.xlarge" || lt.SSHKeyName != "ops" ||
		lt.RootVolume == nil || lt.RootVolume.SizeGiB != 50 || len(lt.SecurityGroupIDs) != 1 {
		t.Fatalf("launch template %+v", lt)
	}
	if ng.AMIType != "" || d.Model.InstanceType != "m5.xlarge" {
		t.Fatalf("AMI type %q (want none with a custom AMI), instance type %q", ng.AMIType, d.Model.InstanceType)
	}
	if d.Model.InPlace.(Settings).ForceUpdate {
		t.Fatal("force asked for without the annotation")
	}
	p.Spec.AWSLaunchTemplate.Name = "named"
	p.Annotations = map[string]string{AnnotationForceUpdate: "true"}
	d2, err := Adapter{}.Desired(p, o)
	if err != nil {
		t.Fatal(err)
	}
	if d2.Model.Provider.(Nodegroup).LaunchTemplate.Name != "named" || !d2.Model.InPlace.(Settings).ForceUpdate {
		t.Fatalf("named template and force: %+v %+v", d2.Model.Provider, d2.Model.InPlace)
	}
}

// TestWritePoolLaunchTemplate: the node group's launch template is in
// status and LaunchTemplateReady, for pools with spec.awsLaunchTemplate
// only.
func TestWritePoolLaunchTemplate(t *testing.T) {
	p := pool(func(p *infrav1.AWSManagedMachinePool) { p.Spec.AWSLaunchTemplate = &infrav1.AWSLaunchTemplate{} })
	Adapter{}.WritePool(p, contract.PoolReport{Observed: true})
	if c := meta.FindStatusCondition(p.Status.Conditions, infrav1.LaunchTemplateReadyCondition); c == nil || c.Status != metav1.ConditionFalse || c.Reason != "LaunchTemplateNotFound" {
		t.Fatalf("before the template: %+v", c)
	}
	Adapter{}.WritePool(p, contract.PoolReport{Observed: true, Template: &scalegroup.TemplateRef{ID: "lt-1", Version: "2"}})
	if ptr.Deref(p.Status.LaunchTemplateID, "") != "lt-1" || ptr.Deref(p.Status.LaunchTemplateVersion, "") != "2" {
		t.Fatalf("status %+v", p.Status)
	}
	if c := meta.FindStatusCondition(p.Status.Conditions, infrav1.LaunchTemplateReadyCondition); c == nil || c.Status != metav1.ConditionTrue {
		t.Fatalf("LaunchTemplateReady %+v", c)
	}
	meta.SetStatusCondition(&p.Status.Conditions, metav1.Condition{Type: infrav1.ScaleGroupReadyCondition, Status: metav1.ConditionFalse, Reason: infrav1.ScaleGroupProvisionFailedReason,
		Message: "launch template t " + templateErrorMarker + ": InvalidAMIID.NotFound: no such AMI"})
	Adapter{}.WritePool(p, contract.PoolReport{Observed: true})
	if c := meta.FindStatusCondition(p.Status.Conditions, infrav1.LaunchTemplateReadyCondition); c == nil || c.Status != metav1.ConditionFalse || c.Reason != "LaunchTemplateReconcileFailed" {
		t.Fatalf("after a template error: %+v", c)
	}
	plain := pool(nil)
	Adapter{}.WritePool(plain, contract.PoolReport{Observed: true})
	if meta.FindStatusCondition(plain.Status.Conditions, infrav1.LaunchTemplateReadyCondition) != nil {
		t.Fatal("LaunchTemplateReady on a pool without a launch template")
	}
}
