package aws

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	asgtypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/mpool-dev/mpool/internal/scalegroup"
)

func TestVersionInfo(t *testing.T) {
	for _, v := range []versionInfo{
		{model: "abc", since: 3, userData: "0011"},
		{model: "abc", userData: "0011"},
	} {
		if got := parseVersionInfo(v.String()); got != v {
			t.Errorf("%q parsed as %+v, want %+v", v.String(), got, v)
		}
		if len(v.String()) > 255 {
			t.Errorf("description %q is longer than AWS allows", v.String())
		}
	}
	if got := parseVersionInfo("created by hand"); got != (versionInfo{}) {
		t.Errorf("a foreign description parsed as %+v", got)
	}
}

func FuzzVersionInfo(f *testing.F) {
	f.Add("abc", int64(3), "0011")
	f.Add("", int64(0), "")
	f.Fuzz(func(t *testing.T, model string, since int64, userData string) {
		// Hashes are hex: no spaces or '='.
		if strings.ContainsAny(model+userData, " =\t\n\r\v\f\u0085\u00a0") || since < 0 {
			t.Skip()
		}
		v := versionInfo{model: model, since: since, userData: userData}
		if got := parseVersionInfo(v.String()); got != v {
			t.Errorf("%q parsed as %+v, want %+v", v.String(), got, v)
		}
		_ = parseVersionInfo(model) // never panics on foreign descriptions
	})
}

func TestInstanceMapping(t *testing.T) {
	in := func(state asgtypes.LifecycleState, health, version string) asgtypes.Instance {
		return asgtypes.Instance{InstanceId: aws.String("i-1"), AvailabilityZone: aws.String("us-east-1a"), LifecycleState: state,
			HealthStatus: aws.String(health), LaunchTemplate: &asgtypes.LaunchTemplateSpecification{Version: aws.String(version)}}
	}
	for _, tc := range []struct {
		name  string
		in    asgtypes.Instance
		state scalegroup.InstanceState
		hash  string
	}{
		{name: "launched from the model's first version: current", in: in("InService", "Healthy", "4"), state: scalegroup.StateRunning, hash: "h"},
		{name: "launched from a later version of the model (new user data): current", in: in("InService", "Healthy", "6"), state: scalegroup.StateRunning, hash: "h"},
		{name: "launched from an older version: stale, with its version", in: in("InService", "Healthy", "3"), state: scalegroup.StateRunning, hash: "lt-version-3"},
		{name: "pending", in: in("Pending", "Healthy", "4"), state: scalegroup.StateCreating, hash: "h"},
		{name: "held by a launch lifecycle hook: booting", in: in("Pending:Wait", "Healthy", "4"), state: scalegroup.StateBooting, hash: "h"},
		{name: "terminating", in: in("Terminating:Wait", "Healthy", "4"), state: scalegroup.StateDeleting, hash: "h"},
		{name: "unhealthy: failed", in: in("InService", "Unhealthy", "4"), state: scalegroup.StateFailed, hash: "h"},
		{name: "a version AWS names by alias: stale", in: in("InService", "Healthy", "$Latest"), state: scalegroup.StateRunning, hash: "lt-version-$Latest"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := instance(tc.in, "h", 4, "")
			if got.State != tc.state || got.ModelHash != tc.hash || got.ProviderID != "aws:///us-east-1a/i-1" || got.Zone != "us-east-1a" {
				t.Errorf("instance %+v, want state %s hash %s", got, tc.state, tc.hash)
			}
		})
	}
}

func TestInstanceOfAnotherTemplate(t *testing.T) {
	in := asgtypes.Instance{InstanceId: aws.String("i-1"), LifecycleState: "InService",
		LaunchTemplate: &asgtypes.LaunchTemplateSpecification{LaunchTemplateId: aws.String("lt-old"), Version: aws.String("9")}}
	if got := instance(in, "h", 1, "lt-new"); got.ModelHash == "h" {
		t.Errorf("an instance of a replaced launch template reads as current")
	}
	if got := instance(in, "h", 1, "lt-old"); got.ModelHash != "h" {
		t.Errorf("an instance of the ASG's template reads as %q", got.ModelHash)
	}
}

func testSpec(capacity int32) scalegroup.GroupSpec {
	return scalegroup.GroupSpec{
		Capacity:  capacity,
		ModelHash: "hash-1",
		Model: scalegroup.Model{
			InstanceType: "m5.large", Image: "ami-1", Zones: []string{"us-east-1a"}, CustomData: []byte("#cloud-config\n"),
			Tags:     map[string]string{"env": "a", TagModelHash: "spoofed"},
			Provider: LaunchTemplate{AMI: AMI{ID: "ami-1"}, SSHKeyName: "key", SecurityGroupIDs: []string{"sg-1"}},
			InPlace:  GroupSettings{MinSize: 1, MaxSize: 3, SubnetIDs: []string{"subnet-1", "subnet-2"}, DefaultCooldownSeconds: 300},
		},
	}
}

func TestGroupInputs(t *testing.T) {
	spec := testSpec(5)
	want, err := desiredOf(spec)
	if err != nil {
		t.Fatal(err)
	}
	lt := templateVersion{id: "lt-1", version: 2, info: versionInfo{model: "hash-1", since: 2, userData: want.userData}}
	in := createGroupInput(scalegroup.Ref{Name: "g"}, spec, want, lt)
	if aws.ToInt32(in.MinSize) != 1 || aws.ToInt32(in.MaxSize) != 5 || aws.ToInt32(in.DesiredCapacity) != 5 {
		t.Errorf("bounds %d..%d desired %d: the capacity widens maxSize", aws.ToInt32(in.MinSize), aws.ToInt32(in.MaxSize), aws.ToInt32(in.DesiredCapacity))
	}
	if aws.ToString(in.VPCZoneIdentifier) != "subnet-1,subnet-2" || aws.ToString(in.LaunchTemplate.Version) != "2" {
		t.Errorf("input %+v", in)
	}
	tags := map[string]asgtypes.Tag{}
	for _, tg := range in.Tags {
		tags[aws.ToString(tg.Key)] = tg
	}
	if tg := tags[TagModelHash]; aws.ToString(tg.Value) != "hash-1" || aws.ToBool(tg.PropagateAtLaunch) {
		t.Errorf("model hash tag %+v: mpool's, not propagated, not the model's spoofed one", tg)
	}
	if tg := tags["env"]; !aws.ToBool(tg.PropagateAtLaunch) {
		t.Errorf("the model's tags propagate to instances: %+v", tg)
	}
	if aws.ToString(tags[TagUserData].Value) != "2:"+want.userData || aws.ToString(tags[TagModelSinceVersion].Value) != "2" {
		t.Errorf("tags %+v", tags)
	}

	// The ASG as created: updating it to the same spec is no write.
	asg := &asgtypes.AutoScalingGroup{
		AutoScalingGroupName: aws.String("g"), LaunchTemplate: in.LaunchTemplate, MinSize: in.MinSize, MaxSize: in.MaxSize,
		DesiredCapacity: in.DesiredCapacity, VPCZoneIdentifier: aws.String("subnet-2,subnet-1"), DefaultCooldown: aws.Int32(300),
		CapacityRebalance: aws.Bool(false),
	}
	for _, tg := range in.Tags {
		asg.Tags = append(asg.Tags, asgtypes.TagDescription{Key: tg.Key, Value: tg.Value, PropagateAtLaunch: tg.PropagateAtLaunch})
	}
	if u := updateGroupInput(scalegroup.Ref{Name: "g"}, asg, spec, want, lt); u != nil {
		t.Errorf("same spec, update %+v", u)
	}
	if c := changedTags(asg, "g", desiredTags(spec, lt)); len(c) != 0 {
		t.Errorf("same spec, changed tags %+v", c)
	}
	cur, err := observedState(asg)
	if err != nil || cur.version != lt {
		t.Errorf("observed %+v (%v), want %+v", cur.version, err, lt)
	}

	// Capacity only: one field.
	u := updateGroupInput(scalegroup.Ref{Name: "g"}, asg, testSpec(4), want, lt)
	if u == nil || aws.ToInt32(u.DesiredCapacity) != 4 || aws.ToInt32(u.MaxSize) != 4 || u.LaunchTemplate != nil || u.VPCZoneIdentifier != nil {
		t.Errorf("capacity 4: update %+v", u)
	}
	// Below minSize (the engine removes before it replaces): minSize follows.
	if u := updateGroupInput(scalegroup.Ref{Name: "g"}, asg, testSpec(0), want, lt); u == nil || aws.ToInt32(u.MinSize) != 0 || aws.ToInt32(u.MaxSize) != 3 {
		t.Errorf("capacity 0: update %+v", u)
	}

	// A tag saying another version's user data is not trusted.
	asg.Tags = append(asg.Tags[:0:0], asg.Tags...)
	for i := range asg.Tags {
		if aws.ToString(asg.Tags[i].Key) == TagUserData {
			asg.Tags[i].Value = aws.String("3:" + want.userData)
		}
	}
	if cur, _ := observedState(asg); cur.version.info.userData != "" {
		t.Errorf("user data of version 3 read as version 2's")
	}
}

func TestTemplateData(t *testing.T) {
	spec := testSpec(1)
	lt := spec.Model.Provider.(LaunchTemplate)
	lt.IAMInstanceProfile = "arn:aws:iam::123:instance-profile/nodes"
	lt.RootVolume = &Volume{DeviceName: "/dev/sda1", SizeGiB: 50, Type: "gp3"}
	lt.NonRootVolumes = []Volume{{DeviceName: "/dev/sdb", SizeGiB: 100, IOPS: 3000, Type: "io2"}}
	lt.Spot = &Spot{MaxPrice: "0.1"}
	lt.Metadata = &Metadata{HTTPTokens: "required", HTTPPutResponseHopLimit: 2}
	lt.CapacityReservationID = "cr-1"
	spec.Model.Provider = lt
	want, err := desiredOf(spec)
	if err != nil {
		t.Fatal(err)
	}
	// An AMI by ID with the root device given needs no lookup: no client.
	d, err := (&ASGs{}).templateData(context.Background(), nil, scalegroup.Ref{Name: "g"}, spec, want)
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(d.ImageId) != "ami-1" || d.InstanceType != ec2types.InstanceType("m5.large") || aws.ToString(d.KeyName) != "key" {
		t.Errorf("data %+v", d)
	}
	if ud, _ := base64.StdEncoding.DecodeString(aws.ToString(d.UserData)); string(ud) != "#cloud-config\n" {
		t.Errorf("user data %q", ud)
	}
	if d.IamInstanceProfile == nil || aws.ToString(d.IamInstanceProfile.Arn) == "" || d.IamInstanceProfile.Name != nil {
		t.Errorf("an ARN profile %+v", d.IamInstanceProfile)
	}
	if len(d.BlockDeviceMappings) != 2 || aws.ToString(d.BlockDeviceMappings[0].DeviceName) != "/dev/sda1" || aws.ToInt32(d.BlockDeviceMappings[1].Ebs.Iops) != 3000 {
		t.Errorf("block devices %+v", d.BlockDeviceMappings)
	}
	if d.InstanceMarketOptions == nil || d.InstanceMarketOptions.MarketType != ec2types.MarketTypeSpot || aws.ToString(d.InstanceMarketOptions.SpotOptions.MaxPrice) != "0.1" {
		t.Errorf("spot %+v", d.InstanceMarketOptions)
	}
	if d.MetadataOptions == nil || d.MetadataOptions.HttpTokens != "required" || aws.ToInt32(d.MetadataOptions.HttpPutResponseHopLimit) != 2 {
		t.Errorf("metadata %+v", d.MetadataOptions)
	}
	if strings.Join(d.SecurityGroupIds, ",") != "sg-1" || aws.ToString(d.CapacityReservationSpecification.CapacityReservationTarget.CapacityReservationId) != "cr-1" {
		t.Errorf("data %+v", d)
	}
}

func TestImageLookup(t *testing.T) {
	name, err := imageName(AMI{Owner: DefaultAMIOwner, Format: DefaultAMIFormat, BaseOS: DefaultAMIBaseOS}, "v1.30.2")
	if err != nil || name != "capa-ami-ubuntu-24.04-?1.30.2-*" {
		t.Errorf("name %q (%v)", name, err)
	}
	for typ, arch := range map[string]string{"m5.large": "x86_64", "m6g.large": "arm64", "c7gn.xlarge": "arm64", "g4dn.xlarge": "x86_64", "t4g.micro": "arm64", "r8gd.2xlarge": "arm64"} {
		if got := architecture(typ); got != arch {
			t.Errorf("%s: %s, want %s", typ, got, arch)
		}
	}
}

func TestDesiredOfRefusals(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*scalegroup.GroupSpec)
	}{
		{name: "another provider's model", mutate: func(s *scalegroup.GroupSpec) { s.Model.Provider = struct{}{} }},
		{name: "no instance type", mutate: func(s *scalegroup.GroupSpec) { s.Model.InstanceType = "" }},
		{name: "no AMI", mutate: func(s *scalegroup.GroupSpec) { s.Model.Provider = LaunchTemplate{} }},
		{name: "no subnet and no zone", mutate: func(s *scalegroup.GroupSpec) { s.Model.Zones, s.Model.InPlace = nil, GroupSettings{MaxSize: 1} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := testSpec(1)
			tc.mutate(&s)
			if _, err := desiredOf(s); !scalegroup.IsInvalid(err) {
				t.Errorf("error %v, want Invalid", err)
			}
		})
	}
}
