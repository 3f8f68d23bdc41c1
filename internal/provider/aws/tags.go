package aws

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	asgtypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// TagAdditionalTags is the ASG tag (not propagated) listing, comma
// separated and sorted, the keys of the additional tags mpool put on the
// ASG for the pool and its AWSCluster: those of the model's tags that are
// not mpool's, CAPA's or AWS's own (see ownTag). A key it lists that the
// model no longer has is deleted from the ASG, which stops its
// propagation; a tag it does not list (someone else's) is left alone. A
// list longer than a tag value's 256 characters continues in
// TagAdditionalTags-2, -3, ... (AWS tag keys hold no comma).
const TagAdditionalTags = "mpool.dev/additional-tags"

// maxTagValue is the longest value of an Auto Scaling Group tag.
const maxTagValue = 256

// ownTag reports whether a tag key belongs to mpool, CAPA or AWS: such a
// tag is always part of what mpool writes (or not mpool's to remove), and
// is never listed in TagAdditionalTags.
func ownTag(key string) bool {
	return key == TagName || strings.HasPrefix(key, "mpool.dev/") || strings.HasPrefix(key, "aws:") ||
		strings.HasPrefix(key, TagKubernetesClusterPrefix) || strings.HasPrefix(key, "sigs.k8s.io/cluster-api-provider-aws/")
}

// additionalKeys are the keys of the model's tags that are not own, sorted.
func additionalKeys(tags map[string]string) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		if !ownTag(k) && !strings.Contains(k, ",") {
			out = append(out, k)
		}
	}
	return out
}

// recordTagKey is the key of the n-th (from 1) tag of the record.
func recordTagKey(n int) string {
	if n == 1 {
		return TagAdditionalTags
	}
	return TagAdditionalTags + "-" + strconv.Itoa(n)
}

// isRecordTag reports whether key is one of the record's tags.
func isRecordTag(key string) bool {
	if key == TagAdditionalTags {
		return true
	}
	n, ok := strings.CutPrefix(key, TagAdditionalTags+"-")
	if !ok {
		return false
	}
	_, err := strconv.Atoi(n)
	return err == nil
}

// recordTags are the tags recording the keys of the model's additional
// tags: one, empty when there are none, or as many as 256-character values
// need.
func recordTags(tags map[string]string) []asgtypes.Tag {
	var values []string
	cur := ""
	for _, k := range additionalKeys(tags) {
		switch {
		case cur == "":
			cur = k
		case len(cur)+1+len(k) <= maxTagValue:
			cur += "," + k
		default:
			values = append(values, cur)
			cur = k
		}
	}
	values = append(values, cur)
	out := make([]asgtypes.Tag, 0, len(values))
	for i, v := range values {
		out = append(out, asgtypes.Tag{Key: aws.String(recordTagKey(i + 1)), Value: aws.String(v), PropagateAtLaunch: aws.Bool(false)})
	}
	return out
}

// recordedKeys are the keys the ASG's record lists.
func recordedKeys(asg *asgtypes.AutoScalingGroup) []string {
	var out []string
	for _, t := range asg.Tags {
		if !isRecordTag(aws.ToString(t.Key)) {
			continue
		}
		for _, k := range strings.Split(aws.ToString(t.Value), ",") {
			if k != "" {
				out = append(out, k)
			}
		}
	}
	return out
}

// removedTags are the ASG's tags to delete before want is written: those
// the record lists that want lacks (never an own tag), and the record's
// tags want no longer needs. Each is addressed to the ASG.
func removedTags(asg *asgtypes.AutoScalingGroup, name string, want []asgtypes.Tag) []asgtypes.Tag {
	wanted := map[string]bool{}
	for _, t := range want {
		wanted[aws.ToString(t.Key)] = true
	}
	recorded := recordedKeys(asg)
	var out []asgtypes.Tag
	for _, t := range asg.Tags {
		k := aws.ToString(t.Key)
		if wanted[k] || !(isRecordTag(k) || (slices.Contains(recorded, k) && !ownTag(k))) {
			continue
		}
		out = append(out, asgtypes.Tag{Key: aws.String(k), Value: t.Value, ResourceId: aws.String(name), ResourceType: aws.String("auto-scaling-group")})
	}
	return out
}

// removeTags deletes the tags removedTags names, in one DeleteTags: before
// the record is rewritten, so that a manager stopped in between still
// finds them listed.
func (s *ASGs) removeTags(ctx context.Context, c *sdkClients, ref scalegroup.Ref, asg *asgtypes.AutoScalingGroup, want []asgtypes.Tag) error {
	del := removedTags(asg, ref.Name, want)
	if len(del) == 0 {
		return nil
	}
	keys := make([]string, 0, len(del))
	for _, t := range del {
		keys = append(keys, aws.ToString(t.Key))
	}
	log.FromContext(ctx).V(1).Info("Removing auto scaling group tags", "group", ref.String(), "keys", keys)
	if _, err := c.asg.DeleteTags(ctx, &autoscaling.DeleteTagsInput{Tags: del}); err != nil {
		return cloudError(err, ref)
	}
	return nil
}
