package aws_test

import (
	"context"
	"testing"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	asgtypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"

	"github.com/mpool-dev/mpool/internal/provider/aws"
	"github.com/mpool-dev/mpool/sim/face/awsface"
)

// groupTags are the ASG's tags, by key, as Auto Scaling reports them.
func (e *env) groupTags(t testing.TB, name string) map[string]asgtypes.TagDescription {
	t.Helper()
	out, err := e.asgClient().DescribeAutoScalingGroups(context.Background(), &autoscaling.DescribeAutoScalingGroupsInput{AutoScalingGroupNames: []string{name}})
	if err != nil || len(out.AutoScalingGroups) != 1 {
		t.Fatalf("DescribeAutoScalingGroups %s: %v", name, err)
	}
	tags := map[string]asgtypes.TagDescription{}
	for _, tg := range out.AutoScalingGroups[0].Tags {
		tags[awssdk.ToString(tg.Key)] = tg
	}
	return tags
}

func TestRemovedTagsAreDeleted(t *testing.T) {
	e := startAWS(t)
	r := ref("pool0")
	s := spec(1, "h1", token1)
	s.Model.Tags = map[string]string{"team": "a", "cost-center": "42", aws.TagName: "pool0",
		aws.TagKubernetesClusterPrefix + "capa": "owned", aws.TagClusterPrefix + "capa": "owned"}
	e.Apply(t, r, s)
	e.Settle(t, r)
	if v := awssdk.ToString(e.groupTags(t, "pool0")[aws.TagAdditionalTags].Value); v != "cost-center,team" {
		t.Fatalf("the record of additional tags is %q, want cost-center,team", v)
	}
	// Another client's tag, which mpool never wrote.
	if _, err := e.asgClient().CreateOrUpdateTags(context.Background(), &autoscaling.CreateOrUpdateTagsInput{Tags: []asgtypes.Tag{{
		Key: awssdk.String("owner"), Value: awssdk.String("finance"), PropagateAtLaunch: awssdk.Bool(true),
		ResourceId: awssdk.String("pool0"), ResourceType: awssdk.String("auto-scaling-group"),
	}}}); err != nil {
		t.Fatal(err)
	}

	// cost-center is removed from the pool: one DeleteTags, and the record
	// rewritten.
	s = spec(1, "h1", token1)
	s.Model.Tags = map[string]string{"team": "a", aws.TagName: "pool0",
		aws.TagKubernetesClusterPrefix + "capa": "owned", aws.TagClusterPrefix + "capa": "owned"}
	if _, got := e.ApplyCounted(t, r, s); got[awsface.OpAWSDeleteTags] != 1 || got[awsface.OpAWSCreateOrUpdateTags] != 1 || writes(got) != 2 {
		t.Fatalf("a removed tag: %v, want one DeleteTags and one CreateOrUpdateTags", got)
	}
	tags := e.groupTags(t, "pool0")
	if _, ok := tags["cost-center"]; ok {
		t.Errorf("the removed tag cost-center is still on the ASG")
	}
	for _, k := range []string{"team", "owner", aws.TagName, aws.TagKubernetesClusterPrefix + "capa", aws.TagClusterPrefix + "capa", aws.TagModelHash, aws.TagModelSinceVersion, aws.TagUserData} {
		if _, ok := tags[k]; !ok {
			t.Errorf("tag %s is gone from the ASG", k)
		}
	}
	if v := awssdk.ToString(tags[aws.TagAdditionalTags].Value); v != "team" {
		t.Errorf("the record of additional tags is %q, want team", v)
	}
	// New instances no longer launch with it.
	if m := e.CloudGroup(t, groupKey("pool0")).Model.Tags; m["cost-center"] != "" || m["team"] != "a" || m["owner"] != "finance" {
		t.Errorf("new instances launch with tags %v", m)
	}

	// At rest: a read, no write.
	if _, got := e.ApplyCounted(t, r, s); writes(got) != 0 || got.Total() != 1 {
		t.Fatalf("the same tags again: %v, want one describe and no write", got)
	}
}

func TestLongTagRecord(t *testing.T) {
	// More keys than one 256-character value holds: the record continues
	// in a second tag, and goes back to one when they are removed.
	e := startAWS(t)
	r := ref("pool0")
	s := spec(1, "h1", token1)
	s.Model.Tags = map[string]string{}
	long := []string{}
	for _, c := range "abcdefgh" {
		k := string(c) + "-0123456789012345678901234567890123456789"
		long = append(long, k)
		s.Model.Tags[k] = "v"
	}
	e.Apply(t, r, s)
	e.Settle(t, r)
	tags := e.groupTags(t, "pool0")
	if len(awssdk.ToString(tags[aws.TagAdditionalTags].Value)) > 256 || awssdk.ToString(tags[aws.TagAdditionalTags+"-2"].Value) == "" {
		t.Fatalf("record tags %q and %q", awssdk.ToString(tags[aws.TagAdditionalTags].Value), awssdk.ToString(tags[aws.TagAdditionalTags+"-2"].Value))
	}

	s.Model.Tags = map[string]string{long[0]: "v"}
	e.Apply(t, r, s)
	tags = e.groupTags(t, "pool0")
	if _, ok := tags[aws.TagAdditionalTags+"-2"]; ok {
		t.Errorf("the record's second tag is left")
	}
	for _, k := range long[1:] {
		if _, ok := tags[k]; ok {
			t.Errorf("removed tag %s is left", k)
		}
	}
	if v := awssdk.ToString(tags[aws.TagAdditionalTags].Value); v != long[0] {
		t.Errorf("record %q, want %s", v, long[0])
	}
}
