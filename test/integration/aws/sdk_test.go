package aws

import (
	"context"
	"testing"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"

	"github.com/mpool-dev/mpool/sim/face/awsface"
)

// ec2Client is an independent EC2 client of the simulated AWS (the real
// SDK with the default key), for what the tests check beside the provider.
func (f *fixture) ec2Client() *ec2.Client {
	return ec2.NewFromConfig(awsface.DefaultSDKConfig(f.Cloud.FaceURL(awsface.AWSFaceName)))
}

// launchTemplates returns the names of the launch templates of the
// simulated account.
func (f *fixture) launchTemplates() []string {
	f.T.Helper()
	out, err := f.ec2Client().DescribeLaunchTemplates(context.Background(), &ec2.DescribeLaunchTemplatesInput{})
	if err != nil {
		f.T.Fatalf("describing launch templates: %v", err)
	}
	names := []string{}
	for _, lt := range out.LaunchTemplates {
		names = append(names, awssdk.ToString(lt.LaunchTemplateName))
	}
	return names
}

// launchTemplateVersions returns how many versions the pool's launch
// template has had (its latest version number).
func (f *fixture) launchTemplateVersions(t testing.TB) int64 {
	t.Helper()
	out, err := f.ec2Client().DescribeLaunchTemplates(context.Background(), &ec2.DescribeLaunchTemplatesInput{LaunchTemplateNames: []string{f.asg()}})
	if err != nil || len(out.LaunchTemplates) == 0 {
		t.Fatalf("describing launch template %s: %v", f.asg(), err)
	}
	return awssdk.ToInt64(out.LaunchTemplates[0].LatestVersionNumber)
}
