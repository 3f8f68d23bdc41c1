package aws

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/provider/contract"
	"github.com/mpool-dev/mpool/internal/provider/contract/contracttest"
	"github.com/mpool-dev/mpool/internal/provider/kit"
	"github.com/mpool-dev/mpool/internal/rollout"
	"github.com/mpool-dev/mpool/internal/scalegroup"
)

func testCluster() *infrav1.AWSCluster {
	return &infrav1.AWSCluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "capa"},
		Spec: infrav1.AWSClusterSpec{
			Region:         "us-east-1",
			SSHKeyName:     ptr.To("cluster-key"),
			IdentityRef:    &infrav1.AWSIdentityReference{Kind: infrav1.AWSClusterStaticIdentityKind, Name: "static"},
			AdditionalTags: infrav1.Tags{"team": "a", "env": "cluster"},
			NetworkSpec: infrav1.AWSNetworkSpec{Subnets: []infrav1.AWSSubnetSpec{
				{ID: "subnet-a-private", AvailabilityZone: "us-east-1a"},
				{ID: "subnet-a-public", AvailabilityZone: "us-east-1a", IsPublic: true},
				{ID: "subnet-b-private", AvailabilityZone: "us-east-1b"},
			}},
		},
	}
}

// testPool is seed 004's AWSMachinePool (examples/seeds/aws-machinepool.yaml).
func testPool() *infrav1.AWSMachinePool {
	return &infrav1.AWSMachinePool{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "capa-mp-0"},
		Spec: infrav1.AWSMachinePoolSpec{
			MinSize:           1,
			MaxSize:           10,
			AvailabilityZones: []string{"us-east-1a"},
			AWSLaunchTemplate: infrav1.AWSLaunchTemplate{InstanceType: "m5.large", SSHKeyName: ptr.To("default")},
			Subnets:           []infrav1.AWSResourceReference{{ID: ptr.To("subnet-0123456789abcdef0")}},
			AdditionalTags:    infrav1.Tags{"env": "pool"},
		},
	}
}

func testOwner(version string, replicas int32) contract.Owner {
	return contract.Owner{
		MachinePool: &clusterv1.MachinePool{Spec: clusterv1.MachinePoolSpec{
			ClusterName: "capa", Replicas: ptr.To(replicas), FailureDomains: []string{"us-east-1b"},
		}},
		Version:       version,
		InfraCluster:  testCluster(),
		BootstrapData: []byte("#cloud-config\n"),
	}
}

func TestGroupRef(t *testing.T) {
	ref, err := Adapter{}.GroupRef(testPool(), testCluster())
	if err != nil {
		t.Fatal(err)
	}
	want := scalegroup.Ref{Name: GroupName("ns", "capa-mp-0"), Scope: "us-east-1", Credentials: "AWSClusterStaticIdentity/static", Namespace: "ns"}
	if ref != want {
		t.Errorf("ref %+v, want %+v", ref, want)
	}
	if long := GroupName("ns", strings.Repeat("p", 300)); len(long) > maxGroupName || !nameRE.MatchString(long) {
		t.Errorf("a long pool's group name %q is not a valid launch template name", long)
	}

	for _, tc := range []struct {
		name     string
		identity *infrav1.AWSIdentityReference
		region   string
		creds    string
		err      string
	}{
		{name: "no identity: the manager's own credentials", creds: ""},
		{name: "the controller identity is the manager's own", identity: &infrav1.AWSIdentityReference{Kind: "AWSClusterControllerIdentity", Name: "default"}},
		{name: "role identities are not supported yet, and the message says so", identity: &infrav1.AWSIdentityReference{Kind: "AWSClusterRoleIdentity", Name: "r"}, err: "does not support yet"},
		{name: "a region is required", region: "-", err: "spec.region"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := testCluster()
			c.Spec.IdentityRef = tc.identity
			if tc.region == "-" {
				c.Spec.Region = ""
			}
			ref, err := Adapter{}.GroupRef(testPool(), c)
			switch {
			case tc.err != "":
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Errorf("error %v, want one saying %q", err, tc.err)
				}
			case err != nil:
				t.Fatal(err)
			case ref.Credentials != tc.creds:
				t.Errorf("credentials %q, want %q", ref.Credentials, tc.creds)
			}
		})
	}
}

func TestDesiredSeed(t *testing.T) {
	d, err := Adapter{}.Desired(testPool(), testOwner("v1.16.8", 2))
	if err != nil {
		t.Fatal(err)
	}
	m := d.Model
	if m.InstanceType != "m5.large" || m.Version != "v1.16.8" || string(m.CustomData) != "#cloud-config\n" {
		t.Errorf("model %+v", m)
	}
	if strings.Join(m.Zones, ",") != "us-east-1a" {
		t.Errorf("zones %v: the pool's availabilityZones win over the MachinePool's failureDomains", m.Zones)
	}
	lt := m.Provider.(LaunchTemplate)
	wantAMI := AMI{Owner: DefaultAMIOwners, Format: DefaultAMIFormat, BaseOS: DefaultAMIBaseOS}
	if lt.AMI != wantAMI || m.Image != wantAMI.String() {
		t.Errorf("AMI %+v (image %q): no ami.id means CAPA's lookup by version", lt.AMI, m.Image)
	}
	if lt.SSHKeyName != "default" {
		t.Errorf("ssh key %q: the launch template's wins over the AWSCluster's", lt.SSHKeyName)
	}
	s := m.InPlace.(GroupSettings)
	if s.MinSize != 1 || s.MaxSize != 10 || strings.Join(s.SubnetIDs, ",") != "subnet-0123456789abcdef0" {
		t.Errorf("settings %+v", s)
	}
	for k, v := range map[string]string{
		"env": "pool", "team": "a",
		TagClusterPrefix + "capa": "owned", TagKubernetesClusterPrefix + "capa": "owned",
		TagRole: "node", TagName: "capa-mp-0", kit.TagPool: "ns/capa-mp-0",
	} {
		if m.Tags[k] != v {
			t.Errorf("tag %s = %q, want %q", k, m.Tags[k], v)
		}
	}
	if h1, h2 := contracttest.ModelHash(t, m), contracttest.ModelHash(t, m); h1 != h2 {
		t.Errorf("the model hash is not deterministic")
	}
}

func TestDesiredMapping(t *testing.T) {
	p := testPool()
	lt := &p.Spec.AWSLaunchTemplate
	lt.AMI.ID = ptr.To("ami-0123")
	lt.SSHKeyName = nil
	lt.IamInstanceProfile = "nodes.cluster-api-provider-aws.sigs.k8s.io"
	lt.RootVolume = &infrav1.Volume{Size: 50, Type: "gp3", Throughput: ptr.To[int64](250), Encrypted: ptr.To(true)}
	lt.NonRootVolumes = []infrav1.Volume{{DeviceName: "/dev/sdb", Size: 100, Type: "io2", IOPS: 3000}}
	lt.AdditionalSecurityGroups = []infrav1.AWSResourceReference{{ID: ptr.To("sg-1")}}
	lt.SpotMarketOptions = &infrav1.SpotMarketOptions{MaxPrice: ptr.To("0.05")}
	lt.InstanceMetadataOptions = &infrav1.InstanceMetadataOptions{HTTPEndpoint: "enabled", HTTPTokens: "required", HTTPPutResponseHopLimit: 2, InstanceMetadataTags: "disabled"}
	lt.PrivateDNSName = &infrav1.PrivateDNSName{HostnameType: ptr.To("resource-name")}
	lt.CapacityReservationID = ptr.To("cr-1")
	p.Spec.AvailabilityZones, p.Spec.Subnets = nil, nil
	p.Spec.SuspendProcesses = &infrav1.SuspendProcessesTypes{Processes: &infrav1.Processes{Launch: ptr.To(true), AZRebalance: ptr.To(true), Terminate: ptr.To(false)}}
	p.Spec.DefaultCoolDown = &metav1.Duration{Duration: 300e9}
	p.Spec.CapacityRebalance = true

	d, err := Adapter{}.Desired(p, testOwner("v1.30.0", 2))
	if err != nil {
		t.Fatal(err)
	}
	got := d.Model.Provider.(LaunchTemplate)
	if got.AMI != (AMI{ID: "ami-0123"}) || d.Model.Image != "ami-0123" {
		t.Errorf("AMI %+v", got.AMI)
	}
	if got.SSHKeyName != "cluster-key" {
		t.Errorf("ssh key %q: without the launch template's, the AWSCluster's", got.SSHKeyName)
	}
	if got.RootVolume == nil || *got.RootVolume != (Volume{SizeGiB: 50, Type: "gp3", Throughput: 250, Encrypted: got.RootVolume.Encrypted}) || !*got.RootVolume.Encrypted {
		t.Errorf("root volume %+v", got.RootVolume)
	}
	if len(got.NonRootVolumes) != 1 || got.NonRootVolumes[0].DeviceName != "/dev/sdb" || got.NonRootVolumes[0].IOPS != 3000 {
		t.Errorf("non-root volumes %+v", got.NonRootVolumes)
	}
	if strings.Join(got.SecurityGroupIDs, ",") != "sg-1" || got.Spot == nil || got.Spot.MaxPrice != "0.05" || got.CapacityReservationID != "cr-1" {
		t.Errorf("launch template %+v", got)
	}
	if got.Metadata == nil || *got.Metadata != (Metadata{HTTPEndpoint: "enabled", HTTPTokens: "required", HTTPPutResponseHopLimit: 2, InstanceMetadataTags: "disabled"}) {
		t.Errorf("metadata %+v", got.Metadata)
	}
	s := d.Model.InPlace.(GroupSettings)
	if strings.Join(s.SubnetIDs, ",") != "subnet-b-private" || strings.Join(d.Model.Zones, ",") != "us-east-1b" {
		t.Errorf("subnets %v, zones %v: without the pool's, the AWSCluster's private subnets of the MachinePool's failure domains", s.SubnetIDs, d.Model.Zones)
	}
	if strings.Join(s.SuspendedProcesses, ",") != "AZRebalance,Launch" || s.DefaultCooldownSeconds != 300 || !s.CapacityRebalance {
		t.Errorf("settings %+v", s)
	}

	// Every launch template field is in the model hash; the ASG's settings
	// are not.
	base := contracttest.ModelHash(t, d.Model)
	changed := d.Model
	lt2 := got
	lt2.IAMInstanceProfile = "other"
	changed.Provider = lt2
	if contracttest.ModelHash(t, changed) == base {
		t.Errorf("the IAM instance profile is not in the model hash")
	}
	changed = d.Model
	s2 := s
	s2.MaxSize = 20
	changed.InPlace = s2
	if contracttest.ModelHash(t, changed) != base {
		t.Errorf("maxSize changes the model hash")
	}
}

func TestDesiredSubnetsFromCluster(t *testing.T) {
	for _, tc := range []struct {
		name    string
		zones   []string
		kind    string
		subnets string
		wantZ   string
	}{
		{name: "no zones: every private subnet, and their zones", subnets: "subnet-a-private,subnet-b-private", wantZ: "us-east-1a,us-east-1b"},
		{name: "a zone: its private subnets", zones: []string{"us-east-1a"}, subnets: "subnet-a-private", wantZ: "us-east-1a"},
		{name: "public subnets when asked", zones: []string{"us-east-1a"}, kind: "public", subnets: "subnet-a-public", wantZ: "us-east-1a"},
		{name: "all subnets when asked", zones: []string{"us-east-1a"}, kind: "all", subnets: "subnet-a-private,subnet-a-public", wantZ: "us-east-1a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := testPool()
			p.Spec.Subnets, p.Spec.AvailabilityZones = nil, tc.zones
			if tc.kind != "" {
				p.Spec.AvailabilityZoneSubnetType = ptr.To(infrav1.AZSubnetType(tc.kind))
			}
			o := testOwner("v1.30.0", 2)
			o.MachinePool.Spec.FailureDomains = nil
			d, err := Adapter{}.Desired(p, o)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(d.Model.InPlace.(GroupSettings).SubnetIDs, ","); got != tc.subnets {
				t.Errorf("subnets %s, want %s", got, tc.subnets)
			}
			if got := strings.Join(d.Model.Zones, ","); got != tc.wantZ {
				t.Errorf("zones %s, want %s", got, tc.wantZ)
			}
		})
	}
}

func TestDesiredRefusals(t *testing.T) {
	for _, tc := range []struct {
		name     string
		mutate   func(*infrav1.AWSMachinePool, *contract.Owner)
		mentions string
	}{
		{name: "replicas above maxSize are refused with what to change", mutate: func(_ *infrav1.AWSMachinePool, o *contract.Owner) {
			o.MachinePool.Spec.Replicas = ptr.To[int32](11)
		}, mentions: "spec.maxSize"},
		{name: "replicas below minSize are refused", mutate: func(p *infrav1.AWSMachinePool, _ *contract.Owner) { p.Spec.MinSize = 3 }, mentions: "spec.minSize"},
		{name: "an instance type is required", mutate: func(p *infrav1.AWSMachinePool, _ *contract.Owner) { p.Spec.AWSLaunchTemplate.InstanceType = "" }, mentions: "instanceType"},
		{name: "no AMI and no version to look one up by", mutate: func(_ *infrav1.AWSMachinePool, o *contract.Owner) { o.Version = "" }, mentions: "ami.id"},
		{name: "subnets by filter need a lookup the adapter does not do", mutate: func(p *infrav1.AWSMachinePool, _ *contract.Owner) {
			p.Spec.Subnets = []infrav1.AWSResourceReference{{Filters: []infrav1.Filter{{Name: "tag:Name", Values: []string{"x"}}}}}
		}, mentions: "spec.subnets[0]"},
		{name: "a Spot launch template in a mixed instances policy is refused", mutate: func(p *infrav1.AWSMachinePool, _ *contract.Owner) {
			p.Spec.MixedInstancesPolicy = &infrav1.MixedInstancesPolicy{}
			p.Spec.AWSLaunchTemplate.SpotMarketOptions = &infrav1.SpotMarketOptions{}
		}, mentions: "mixedInstancesPolicy"},
		{name: "no subnet and no zone anywhere", mutate: func(p *infrav1.AWSMachinePool, o *contract.Owner) {
			p.Spec.Subnets, p.Spec.AvailabilityZones, o.MachinePool.Spec.FailureDomains = nil, nil, nil
			o.InfraCluster.(*infrav1.AWSCluster).Spec.NetworkSpec.Subnets = nil
		}, mentions: "spec.subnets"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, o := testPool(), testOwner("v1.30.0", 2)
			tc.mutate(p, &o)
			_, err := Adapter{}.Desired(p, o)
			if err == nil || !strings.Contains(err.Error(), tc.mentions) {
				t.Errorf("error %v, want one mentioning %q", err, tc.mentions)
			}
		})
	}
}

func TestStrategy(t *testing.T) {
	pct := func(s string) *intstr.IntOrString { return ptr.To(intstr.FromString(s)) }
	for _, tc := range []struct {
		name string
		rp   *infrav1.RefreshPreferences
		want rollout.Strategy
		// budgets at 10 replicas: surge, unavailable
		surge, unavailable int32
	}{
		{name: "AWS's defaults: 90% healthy, no surge", want: rollout.Strategy{MaxSurge: pct("0%"), MaxUnavailable: pct("10%")}, surge: 0, unavailable: 1},
		{name: "maxHealthy 150 surges half", rp: &infrav1.RefreshPreferences{MinHealthyPercentage: ptr.To[int64](100), MaxHealthyPercentage: ptr.To[int64](150)},
			want: rollout.Strategy{MaxSurge: pct("50%"), MaxUnavailable: pct("0%")}, surge: 5, unavailable: 0},
		{name: "100/100 replaces one at a time, as AWS does", rp: &infrav1.RefreshPreferences{MinHealthyPercentage: ptr.To[int64](100)},
			want: rollout.Strategy{MaxSurge: ptr.To(intstr.FromInt32(0)), MaxUnavailable: ptr.To(intstr.FromInt32(1))}, surge: 0, unavailable: 1},
		{name: "minHealthy 0 may take all down", rp: &infrav1.RefreshPreferences{MinHealthyPercentage: ptr.To[int64](0), MaxHealthyPercentage: ptr.To[int64](200)},
			want: rollout.Strategy{MaxSurge: pct("100%"), MaxUnavailable: pct("100%")}, surge: 10, unavailable: 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Strategy(tc.rp)
			if got.MaxSurge.String() != tc.want.MaxSurge.String() || got.MaxUnavailable.String() != tc.want.MaxUnavailable.String() {
				t.Errorf("strategy surge %s unavailable %s, want %s %s", got.MaxSurge, got.MaxUnavailable, tc.want.MaxSurge, tc.want.MaxUnavailable)
			}
			surge, unavailable, err := rollout.ResolveBudgets(10, got)
			if err != nil || surge != tc.surge || unavailable != tc.unavailable {
				t.Errorf("budgets at 10: surge %d unavailable %d (%v), want %d %d", surge, unavailable, err, tc.surge, tc.unavailable)
			}
		})
	}

	// A small pool with AWS's defaults still makes progress: the planner
	// takes one down at a time.
	if s, u, err := rollout.ResolveBudgets(3, Strategy(nil)); err != nil || s != 0 || u != 1 {
		t.Errorf("3 replicas with the defaults: surge %d unavailable %d (%v)", s, u, err)
	}

	p := testPool()
	p.Spec.RefreshPreferences = &infrav1.RefreshPreferences{InstanceWarmup: ptr.To[int64](120)}
	d, err := Adapter{}.Desired(p, testOwner("v1.30.0", 2))
	if err != nil || d.Strategy.MinReadySeconds != 120 {
		t.Errorf("instanceWarmup → MinReadySeconds: %d (%v)", d.Strategy.MinReadySeconds, err)
	}
	o := testOwner("v1.30.0", 2)
	o.MachinePool.Spec.Template.Spec.MinReadySeconds = ptr.To[int32](5)
	if d, _ := (Adapter{}).Desired(p, o); d.Strategy.MinReadySeconds != 120 {
		t.Errorf("the pool's default is instanceWarmup whatever the MachinePool says (the engine replaces it with the MachinePool's minReadySeconds), got %d", d.Strategy.MinReadySeconds)
	}
}

func TestWritePool(t *testing.T) {
	p := testPool()
	p.Status.Conditions = []metav1.Condition{
		{Type: infrav1.ScaleGroupReadyCondition, Status: metav1.ConditionFalse, Reason: infrav1.ScaleGroupNotFoundReason, Message: "not yet"},
	}
	Adapter{}.WritePool(p, contract.PoolReport{
		Observed: true, Ready: true, Replicas: 2, ProviderIDList: []string{"aws:///us-east-1a/i-1", "aws:///us-east-1a/i-2"},
		Instances:                 []contract.InstanceReport{{InstanceID: "i-1", Version: "v1.30.0"}, {InstanceID: "i-2"}},
		InfrastructureMachineKind: "AWSMachinePoolMachine", ObservedGeneration: 3,
	})
	st := p.Status
	if !st.Ready || st.Replicas != 2 || len(p.Spec.ProviderIDList) != 2 || st.ObservedGeneration != 3 || st.InfrastructureMachineKind != "AWSMachinePoolMachine" {
		t.Errorf("status %+v", st)
	}
	if len(st.Instances) != 2 || ptr.Deref(st.Instances[0].Version, "") != "v1.30.0" || st.Instances[1].Version != nil {
		t.Errorf("instances %+v", st.Instances)
	}
	asg := meta.FindStatusCondition(st.Conditions, infrav1.ASGReadyCondition)
	lt := meta.FindStatusCondition(st.Conditions, infrav1.LaunchTemplateReadyCondition)
	if asg == nil || asg.Reason != "ASGNotFound" || asg.Status != metav1.ConditionFalse || lt == nil || lt.Reason != "LaunchTemplateNotFound" {
		t.Errorf("mirrored conditions: %+v %+v", asg, lt)
	}

	// Not observed: only the failure and generation are written.
	Adapter{}.WritePool(p, contract.PoolReport{FailureReason: ptr.To("InvalidSpec"), ObservedGeneration: 4})
	if p.Status.Replicas != 2 || ptr.Deref(p.Status.FailureReason, "") != "InvalidSpec" {
		t.Errorf("an unobserved report kept %+v", p.Status)
	}

	Adapter{}.WritePool(p, contract.PoolReport{Observed: true, Operation: &scalegroup.Operation{Type: scalegroup.OperationDelete}})
	if ptr.Deref(p.Status.ASGStatus, "") != asgDeleteInProgress {
		t.Errorf("asgStatus %v while deleting", p.Status.ASGStatus)
	}
}

func TestWritePoolLaunchTemplate(t *testing.T) {
	p := testPool()
	Adapter{}.WritePool(p, contract.PoolReport{Observed: true, Template: &scalegroup.TemplateRef{ID: "lt-0abc", Version: "4"}})
	if st := p.Status; st.LaunchTemplateID != "lt-0abc" || ptr.Deref(st.LaunchTemplateVersion, "") != "4" {
		t.Errorf("launch template %q version %v, want lt-0abc 4", st.LaunchTemplateID, st.LaunchTemplateVersion)
	}
	// A report that names no template (the reconcile that creates the
	// ASG) leaves the fields as they are.
	Adapter{}.WritePool(p, contract.PoolReport{Observed: true})
	if st := p.Status; st.LaunchTemplateID != "lt-0abc" || ptr.Deref(st.LaunchTemplateVersion, "") != "4" {
		t.Errorf("an unnamed template cleared launch template %q version %v", st.LaunchTemplateID, st.LaunchTemplateVersion)
	}
}

func TestWriteInstanceStatus(t *testing.T) {
	m := &infrav1.AWSMachinePoolMachine{}
	Adapter{}.WriteInstanceStatus(m, contract.InstanceReport{
		InstanceID: "i-1", Zone: "us-east-1a", State: contract.InstanceRunning, Ready: true, ModelHash: staleHashPrefix + "3", Version: "v1.30.0",
	})
	if st := m.Status; st.LifecycleState != "InService" || st.AvailabilityZone != "us-east-1a" || st.LaunchTemplateVersion != "3" || !st.Ready || st.Version != "v1.30.0" {
		t.Errorf("status %+v", st)
	}
	Adapter{}.WriteInstanceStatus(m, contract.InstanceReport{State: contract.InstanceDeleting, ModelHash: "abc", LatestModelApplied: true})
	if st := m.Status; st.LifecycleState != "Terminating" || st.LaunchTemplateVersion != "" || !st.LatestModelApplied {
		t.Errorf("status %+v", st)
	}
	// The version the ASG reports the instance launched from, current
	// model or not.
	Adapter{}.WriteInstanceStatus(m, contract.InstanceReport{State: contract.InstanceRunning, ModelHash: "abc", LatestModelApplied: true,
		Template: &scalegroup.TemplateRef{ID: "lt-0abc", Version: "5"}})
	if st := m.Status; st.LaunchTemplateVersion != "5" {
		t.Errorf("launch template version %q, want the instance's 5", st.LaunchTemplateVersion)
	}
}
