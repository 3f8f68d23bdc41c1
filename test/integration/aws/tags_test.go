package aws

import (
	"fmt"
	"slices"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/provider/aws"
	"github.com/mpool-dev/mpool/internal/provider/kit"
	"github.com/mpool-dev/mpool/internal/testenv"
)

// asgTags are the pool's ASG tags (value and propagation) as Auto Scaling
// reports them to another client.
func (f *fixture) asgTags() (map[string]string, map[string]bool, error) {
	out, err := f.asgClient().DescribeAutoScalingGroups(f.Ctx, &autoscaling.DescribeAutoScalingGroupsInput{AutoScalingGroupNames: []string{f.asg()}})
	if err != nil {
		return nil, nil, err
	}
	if len(out.AutoScalingGroups) != 1 {
		return nil, nil, fmt.Errorf("%d groups named %s", len(out.AutoScalingGroups), f.asg())
	}
	values, propagated := map[string]string{}, map[string]bool{}
	for _, t := range out.AutoScalingGroups[0].Tags {
		values[awssdk.ToString(t.Key)] = awssdk.ToString(t.Value)
		propagated[awssdk.ToString(t.Key)] = awssdk.ToBool(t.PropagateAtLaunch)
	}
	return values, propagated, nil
}

// checkAdditionalTagRemoval adds two additional tags to the pool, waits
// for them on the ASG (propagated), removes one and waits until the ASG
// and the tags new instances launch with have only the other, with
// mpool's, CAPA's and the cloud provider's tags kept. Tags change no
// instance: the pool keeps its instances.
func (f *fixture) checkAdditionalTagRemoval() {
	f.T.Helper()
	before := f.InstanceIDs()
	f.updateAWSPool(func(p *infrav1.AWSMachinePool) {
		p.Spec.AdditionalTags = infrav1.Tags{"team": "a", "cost-center": "42"}
	})
	testenv.Eventually(f.T, 30*time.Second, func() error {
		tags, prop, err := f.asgTags()
		if err != nil {
			return err
		}
		if tags["team"] != "a" || tags["cost-center"] != "42" || !prop["team"] || !prop["cost-center"] {
			return fmt.Errorf("ASG tags %v (propagated %v), want team and cost-center propagated", tags, prop)
		}
		return nil
	})
	f.updateAWSPool(func(p *infrav1.AWSMachinePool) { p.Spec.AdditionalTags = infrav1.Tags{"team": "a"} })
	testenv.Eventually(f.T, 30*time.Second, func() error {
		tags, _, err := f.asgTags()
		if err != nil {
			return err
		}
		if _, ok := tags["cost-center"]; ok {
			return fmt.Errorf("the removed tag cost-center is still on the ASG: %v", tags)
		}
		for _, k := range []string{"team", aws.TagName, kit.TagPool, aws.TagRole, aws.TagClusterPrefix + clusterName,
			aws.TagKubernetesClusterPrefix + clusterName, aws.TagModelHash, aws.TagAdditionalTags} {
			if _, ok := tags[k]; !ok {
				return fmt.Errorf("tag %s is gone from the ASG: %v", k, tags)
			}
		}
		if g := f.Group(); g == nil || g.Model.Tags["cost-center"] != "" || g.Model.Tags["team"] != "a" {
			return fmt.Errorf("new instances of the group would not launch with team alone")
		}
		return nil
	})
	if after := f.InstanceIDs(); !slices.Equal(sorted(before), sorted(after)) {
		f.T.Errorf("changing tags replaced instances: %v, then %v", before, after)
	}
}
