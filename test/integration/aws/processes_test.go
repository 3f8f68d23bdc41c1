package aws

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	asgtypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/sim/face/awsface"
	"github.com/mpool-dev/mpool/test/integration/itest"
)

// procDescribe reads the pool's ASG through an independent client.
func (f *fixture) procDescribe() (asgtypes.AutoScalingGroup, error) {
	out, err := f.asgClient().DescribeAutoScalingGroups(f.Ctx, &autoscaling.DescribeAutoScalingGroupsInput{AutoScalingGroupNames: []string{f.asg()}})
	if err != nil {
		return asgtypes.AutoScalingGroup{}, err
	}
	if len(out.AutoScalingGroups) != 1 {
		return asgtypes.AutoScalingGroup{}, fmt.Errorf("the auto scaling group %s does not exist", f.asg())
	}
	return out.AutoScalingGroups[0], nil
}

// procWrites counts the AWS requests answered with success that are not
// describes (Describe*): the writes.
func (f *fixture) procWrites() int64 {
	var n int64
	for _, r := range f.Cloud.Stats().Requests {
		if _, action, _ := strings.Cut(strings.TrimPrefix(r.Operation, "aws."), "."); r.Face == awsface.AWSFaceName && r.Status < 300 && !strings.HasPrefix(action, "Describe") {
			n += r.Count
		}
	}
	return n
}

func procSuspended(g asgtypes.AutoScalingGroup) string {
	var out []string
	for _, p := range g.SuspendedProcesses {
		out = append(out, awssdk.ToString(p.ProcessName))
	}
	slices.Sort(out)
	return strings.Join(out, ",")
}

// TestSuspendProcesses: spec.suspendProcesses reaches the ASG (AWS's
// DescribeAutoScalingGroups reports it) and removing it resumes the
// processes; a suspended Launch process holds a scale-up, which ASGReady
// and ScaleGroupDesiredReplicas say, until it is resumed.
func TestSuspendProcesses(t *testing.T) {
	f, _ := start(t, 0)
	f.ApplySeed(itest.SetField("AWSMachinePool", true, "spec", "suspendProcesses", "processes", "azRebalance"))
	f.waitConverged(2, seedVersion)
	g, err := f.procDescribe()
	if err != nil {
		t.Fatal(err)
	}
	if got := procSuspended(g); got != "AZRebalance" {
		t.Fatalf("SuspendedProcesses %q, want AZRebalance", got)
	}
	if r := awssdk.ToString(g.SuspendedProcesses[0].SuspensionReason); !strings.HasPrefix(r, "User suspended at ") {
		t.Fatalf("SuspensionReason %q", r)
	}

	// Converging took many reconciles: the process was suspended once.
	if n, w := f.ops(awsface.OpAWSSuspendProcesses), f.ops(awsface.OpAWSResumeProcesses); n != 1 || w != 0 {
		t.Errorf("%d SuspendProcesses and %d ResumeProcesses requests while converging, want 1 and 0", n, w)
	}

	t.Log("removing spec.suspendProcesses resumes AZRebalance")
	f.updateAWSPool(func(p *infrav1.AWSMachinePool) { p.Spec.SuspendProcesses = nil })
	f.waitSuspended("")
	if n := f.ops(awsface.OpAWSResumeProcesses); n != 1 {
		t.Errorf("%d ResumeProcesses requests, want 1", n)
	}

	t.Log("Launch suspended: a scale-up waits, and the pool says why")
	f.updateAWSPool(func(p *infrav1.AWSMachinePool) {
		p.Spec.SuspendProcesses = &infrav1.SuspendProcessesTypes{Processes: &infrav1.Processes{Launch: ptr.To(true)}}
	})
	f.waitSuspended("Launch")
	f.Scale(3)
	testenv.Eventually(t, converge, func() error {
		if ids := f.InstanceIDs(); len(ids) != 2 {
			t.Fatalf("%d instances while Launch is suspended, want 2", len(ids))
		}
		g, err := f.procDescribe()
		if err != nil {
			return err
		}
		if awssdk.ToInt32(g.DesiredCapacity) != 3 {
			return fmt.Errorf("desired capacity %d, want 3", awssdk.ToInt32(g.DesiredCapacity))
		}
		for _, typ := range []string{infrav1.ASGReadyCondition, infrav1.ScaleGroupDesiredReplicasCondition} {
			if c := f.PoolCondition(typ); c == nil || !strings.Contains(c.Message, "suspends Launch") {
				return fmt.Errorf("%s does not say Launch is suspended: %+v", typ, c)
			}
		}
		return nil
	})
	// The manager keeps reconciling the short pool without writing.
	writes, mine := f.procWrites(), f.ops(awsface.OpAWSDescribeAutoScalingGroups)
	if writes == 0 {
		t.Fatal("no AWS write counted since the pool's creation: procWrites is broken")
	}
	testenv.Eventually(t, converge, func() error {
		if n := f.ops(awsface.OpAWSDescribeAutoScalingGroups) - mine; n < 3 {
			return fmt.Errorf("%d reconciles since the scale-up waited", n)
		}
		return nil
	})
	if w := f.procWrites(); w != writes {
		t.Fatalf("%d AWS writes while Launch is suspended and the pool waits, want none", w-writes)
	}
	f.updateAWSPool(func(p *infrav1.AWSMachinePool) { p.Spec.SuspendProcesses = nil })
	f.waitConverged(3, seedVersion)
	if c := f.PoolCondition(infrav1.ASGReadyCondition); c == nil || strings.Contains(c.Message, "suspends") {
		t.Fatalf("ASGReady after resuming: %+v", c)
	}
}

// TestRefreshPreferencesDisable: with refreshPreferences.disable an
// instance type change replaces no instance (ScaleGroupModelUpdated says
// why), and a scale-up's instance is launched from the new launch
// template version.
func TestRefreshPreferencesDisable(t *testing.T) {
	f, _ := start(t, 0)
	f.ApplySeed(itest.SetField("AWSMachinePool", true, "spec", "refreshPreferences", "disable"))
	f.waitConverged(2, seedVersion)
	before := f.InstanceIDs()
	g, err := f.procDescribe()
	if err != nil {
		t.Fatal(err)
	}
	oldVersion := awssdk.ToString(g.LaunchTemplate.Version)

	kept := func() {
		for _, id := range before {
			if !slices.Contains(f.InstanceIDs(), id) {
				t.Fatalf("instance %s was replaced although refreshPreferences.disable is true", id)
			}
		}
	}
	t.Log("an instance type change replaces nothing")
	f.updateAWSPool(func(p *infrav1.AWSMachinePool) { p.Spec.AWSLaunchTemplate.InstanceType = "m5.xlarge" })
	var newVersion string
	testenv.Eventually(t, converge, func() error {
		kept()
		g, err := f.procDescribe()
		if err != nil {
			return err
		}
		if newVersion = awssdk.ToString(g.LaunchTemplate.Version); newVersion == oldVersion {
			return fmt.Errorf("the ASG still launches from version %s", oldVersion)
		}
		c := f.PoolCondition(infrav1.ScaleGroupModelUpdatedCondition)
		if c == nil || c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, "spec.refreshPreferences.disable is true: they are not replaced") {
			return fmt.Errorf("ScaleGroupModelUpdated %+v", c)
		}
		return nil
	})

	t.Log("a scale-up's instance gets the new version; the old ones stay")
	f.Scale(3)
	testenv.Eventually(t, converge, func() error {
		kept()
		g, err := f.procDescribe()
		if err != nil {
			return err
		}
		if len(g.Instances) != 3 {
			return fmt.Errorf("%d instances, want 3", len(g.Instances))
		}
		for _, in := range g.Instances {
			id, v, typ := awssdk.ToString(in.InstanceId), awssdk.ToString(in.LaunchTemplate.Version), awssdk.ToString(in.InstanceType)
			old := slices.Contains(before, id)
			if old && (v != oldVersion || typ != "m5.large") || !old && (v != newVersion || typ != "m5.xlarge") {
				return fmt.Errorf("instance %s (old %v) of version %s, type %s; want %s/m5.large for old, %s/m5.xlarge for new", id, old, v, typ, oldVersion, newVersion)
			}
			if in.LifecycleState != asgtypes.LifecycleStateInService {
				return fmt.Errorf("instance %s is %s", id, in.LifecycleState)
			}
		}
		if c := f.PoolCondition(infrav1.ScaleGroupModelUpdatedCondition); c == nil || !strings.Contains(c.Message, "2 of 3 instances run an older model") {
			return fmt.Errorf("ScaleGroupModelUpdated %+v", c)
		}
		return nil
	})
	kept()
}

// waitSuspended waits until the ASG's suspended processes are want
// (procSuspended's form, "" for none).
func (f *fixture) waitSuspended(want string) {
	f.T.Helper()
	testenv.Eventually(f.T, converge, func() error {
		g, err := f.procDescribe()
		if err != nil {
			return err
		}
		if got := procSuspended(g); got != want {
			return fmt.Errorf("SuspendedProcesses %q, want %q", got, want)
		}
		return nil
	})
}
