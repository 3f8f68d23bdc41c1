package eks

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
)

func TestMeetsTarget(t *testing.T) {
	for _, tt := range []struct {
		name, target, release string
		want                  bool
	}{
		{name: "any release of the version", target: "1.31/", release: "1.31/1.31.0-20261101", want: true},
		{name: "the release asked for", target: "1.31/1.31.0-20261101", release: "1.31/1.31.0-20261101", want: true},
		{name: "another release of the version", target: "1.31/1.31.2-20261201", release: "1.31/1.31.0-20261101"},
		{name: "an older version", target: "1.32/", release: "1.31/1.31.0-20261101"},
		{name: "no version asked for: the cluster's", target: "/", release: "1.31/1.31.0-20261101", want: true},
		{name: "no target: not mpool's node group", target: "", release: "1.31/1.31.0-20261101"},
		{name: "an instance of a node group without a launch template", target: "1.31/", release: "1.31/1.31.0-20261101/", want: true},
		{name: "the launch template version asked for", target: "1.31//lt-1:2", release: "1.31/1.31.0-20261101/lt-1:2", want: true},
		{name: "an older launch template version", target: "1.31//lt-1:2", release: "1.31/1.31.0-20261101/lt-1:1"},
		{name: "a launch template asked for, none run", target: "1.31//lt-1:2", release: "1.31/1.31.0-20261101"},
	} {
		if got := meetsTarget(tt.target, tt.release); got != tt.want {
			t.Errorf("%s: meetsTarget(%q, %q) = %v, want %v", tt.name, tt.target, tt.release, got, tt.want)
		}
	}
}

func TestNextMinorOneAtATime(t *testing.T) {
	for _, tt := range []struct{ name, have, want, next string }{
		{name: "two minors ahead: one at a time", have: "1.29", want: "1.31", next: "1.30"},
		{name: "one minor ahead", have: "1.30", want: "1.31", next: "1.31"},
		{name: "there", have: "1.31", want: "1.31"},
		{name: "no version asked for", have: "1.31", want: ""},
		{name: "older: EKS refuses it and says so", have: "1.31", want: "1.30", next: "1.30"},
	} {
		if got := nextMinor(tt.have, tt.want); got != tt.next {
			t.Errorf("%s: nextMinor(%q, %q) = %q, want %q", tt.name, tt.have, tt.want, got, tt.next)
		}
	}
	if minorVersion("v1.31.2") != "1.31" || minorVersion("1.30") != "1.30" {
		t.Errorf("minorVersion: %q %q", minorVersion("v1.31.2"), minorVersion("1.30"))
	}
}

func TestConfigUpdateOnlyWhatDiffers(t *testing.T) {
	ng := &ekstypes.Nodegroup{
		ScalingConfig: &ekstypes.NodegroupScalingConfig{MinSize: aws.Int32(1), MaxSize: aws.Int32(5), DesiredSize: aws.Int32(2)},
		Labels:        map[string]string{"a": "1"},
		Taints:        []ekstypes.Taint{{Key: aws.String("k"), Value: aws.String("v"), Effect: ekstypes.TaintEffectNoSchedule}},
		UpdateConfig:  &ekstypes.NodegroupUpdateConfig{MaxUnavailable: aws.Int32(1)},
	}
	st := Settings{MinSize: 1, MaxSize: 5, Labels: map[string]string{"a": "1"}, Taints: []Taint{{Key: "k", Value: "v", Effect: "NO_SCHEDULE"}}, MaxUnavailable: 1}
	if in := configUpdate(ng, 2, st); in != nil {
		t.Fatalf("a node group as the spec says: %+v", in)
	}
	in := configUpdate(ng, 3, st)
	if in == nil || aws.ToInt32(in.ScalingConfig.DesiredSize) != 3 || in.Labels != nil || in.Taints != nil || in.UpdateConfig != nil {
		t.Fatalf("a scale-up: %+v", in)
	}
	st.Labels = map[string]string{"b": "2"}
	in = configUpdate(ng, 2, st)
	if in == nil || in.ScalingConfig != nil || in.Labels == nil || in.Labels.AddOrUpdateLabels["b"] != "2" || len(in.Labels.RemoveLabels) != 1 || in.Labels.RemoveLabels[0] != "a" {
		t.Fatalf("a label change: %+v", in)
	}
}

func TestInstanceModelHash(t *testing.T) {
	for _, tt := range []struct {
		name, target, release, want string
	}{
		{"current", "1.31/", "1.31/1.31.0-20261101/", "h"},
		{"older release", "1.32/", "1.31/1.31.0-20261101/", staleHashPrefix + "1.31/1.31.0-20261101/"},
	} {
		in := ec2Instance("i-1", map[string]string{TagRelease: tt.release})
		if got := instance(in, "h", tt.target).ModelHash; got != tt.want {
			t.Errorf("%s: ModelHash %q, want %q", tt.name, got, tt.want)
		}
	}
}

func ec2Instance(id string, tags map[string]string) ec2types.Instance {
	i := ec2types.Instance{InstanceId: aws.String(id), Placement: &ec2types.Placement{AvailabilityZone: aws.String("us-east-1a")},
		State: &ec2types.InstanceState{Name: ec2types.InstanceStateNameRunning}}
	for k, v := range tags {
		i.Tags = append(i.Tags, ec2types.Tag{Key: aws.String(k), Value: aws.String(v)})
	}
	return i
}

// TestExternalReplicasClampIntoTheRange is CAPA #5746: with an autoscaler
// owning the size, a new minSize above (or maxSize below) its current size
// is applied as written and the desired size is clamped into it, never sent
// outside the range (EKS refuses that with InvalidParameterException).
func TestExternalReplicasClampIntoTheRange(t *testing.T) {
	ng := &ekstypes.Nodegroup{ScalingConfig: &ekstypes.NodegroupScalingConfig{MinSize: aws.Int32(0), MaxSize: aws.Int32(5), DesiredSize: aws.Int32(0)}}
	for _, c := range []struct {
		name                  string
		minSize, maxSize, cap int32
		want                  [3]int32
	}{
		{"minSize raised above the autoscaler's 0", 2, 5, 0, [3]int32{2, 5, 2}},
		{"maxSize lowered below the autoscaler's 4", 0, 3, 4, [3]int32{0, 3, 3}},
		{"inside the range", 1, 5, 3, [3]int32{1, 5, 3}},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := configUpdate(ng, c.cap, Settings{MinSize: c.minSize, MaxSize: c.maxSize, ExternalReplicas: true})
			if in == nil || in.ScalingConfig == nil {
				t.Fatalf("no scaling update: %+v", in)
			}
			got := [3]int32{aws.ToInt32(in.ScalingConfig.MinSize), aws.ToInt32(in.ScalingConfig.MaxSize), aws.ToInt32(in.ScalingConfig.DesiredSize)}
			if got != c.want {
				t.Errorf("min, max, desired %v, want %v", got, c.want)
			}
		})
	}
	// Without an autoscaler, a surge above maxSize widens the range instead.
	in := configUpdate(ng, 7, Settings{MinSize: 0, MaxSize: 5})
	if got := [3]int32{aws.ToInt32(in.ScalingConfig.MinSize), aws.ToInt32(in.ScalingConfig.MaxSize), aws.ToInt32(in.ScalingConfig.DesiredSize)}; got != [3]int32{0, 7, 7} {
		t.Errorf("a surge: min, max, desired %v, want [0 7 7]", got)
	}
}
