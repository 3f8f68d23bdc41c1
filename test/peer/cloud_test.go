package peer

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"

	"github.com/mpool-dev/mpool/sim/face/awsface"
)

// ops returns how many requests of operation op the AWS face answered
// with a status below 300.
func ops(op string) int64 {
	var n int64
	for _, r := range cloud.Stats().Requests {
		if r.Face == awsface.AWSFaceName && r.Operation == op && r.Status < 300 {
			n += r.Count
		}
	}
	return n
}

// requestSummary lists the AWS face's requests by operation and status.
func requestSummary() string {
	var b strings.Builder
	for _, r := range cloud.Stats().Requests {
		if r.Face == awsface.AWSFaceName {
			fmt.Fprintf(&b, "  %-50s %d  x%d\n", r.Operation, r.Status, r.Count)
		}
	}
	return b.String()
}

// refusedRequests lists the requests the AWS face did not know (an action
// it does not simulate), refused as unauthenticated, or failed with a
// server error: what CAPA sent that the face does not answer as AWS does.
// Client errors AWS answers too (a launch template not found yet) are not
// among them.
func refusedRequests() string {
	var b strings.Builder
	for _, r := range cloud.Stats().Requests {
		if r.Face != awsface.AWSFaceName {
			continue
		}
		if strings.HasSuffix(r.Operation, ".Unknown") || r.Status == 401 || r.Status == 403 || r.Status >= 500 {
			fmt.Fprintf(&b, "  %s %d x%d\n", r.Operation, r.Status, r.Count)
		}
	}
	return b.String()
}

// testLaunchTemplateReads counts launchTemplates' requests, which
// awsRequests leaves out.
var testLaunchTemplateReads atomic.Int64

// launchTemplates returns the names of the simulated account's launch
// templates, read with the real SDK and the face's default key.
func launchTemplates(t testing.TB) []string {
	t.Helper()
	testLaunchTemplateReads.Add(1)
	out, err := ec2Client().DescribeLaunchTemplates(context.Background(), &ec2.DescribeLaunchTemplatesInput{})
	if err != nil {
		t.Fatalf("describing launch templates: %v", err)
	}
	var names []string
	for _, lt := range out.LaunchTemplates {
		names = append(names, awssdk.ToString(lt.LaunchTemplateName))
	}
	return names
}

// ec2Client is the test's own EC2 client of the simulated AWS: the real
// SDK with the face's default key.
func ec2Client() *ec2.Client {
	return ec2.NewFromConfig(awsface.DefaultSDKConfig(cloud.FaceURL(awsface.AWSFaceName)))
}
