package eks

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/controller/infrapool"
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

func owner(replicas int32, version string) infrapool.Owner {
	mp := &clusterv1.MachinePool{Spec: clusterv1.MachinePoolSpec{ClusterName: "eks", Replicas: ptr.To(replicas)}}
	return infrapool.Owner{MachinePool: mp, Version: version}
}

func TestDesired(t *testing.T) {
	for _, tt := range []struct {
		name    string
		pool    *infrav1.AWSManagedMachinePool
		owner   infrapool.Owner
		wantErr string
	}{
		{name: "the example", pool: pool(nil), owner: owner(2, "v1.31.0")},
		{name: "a launch template is not supported yet", pool: pool(func(p *infrav1.AWSManagedMachinePool) { p.Spec.AWSLaunchTemplate = &infrav1.AWSLaunchTemplate{} }),
			owner: owner(2, "v1.31.0"), wantErr: "spec.awsLaunchTemplate"},
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
