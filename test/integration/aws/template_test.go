package aws

import (
	"context"
	"fmt"
	"strconv"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/testenv"
)

// waitLaunchTemplateStatus waits (briefly: the pool has converged) until
// the AWSMachinePool's status names the ASG's launch template, as EC2
// reports it, at its latest version, and every AWSMachinePoolMachine that
// version.
func (f *fixture) waitLaunchTemplateStatus() {
	f.T.Helper()
	out, err := f.ec2Client().DescribeLaunchTemplates(context.Background(), &ec2.DescribeLaunchTemplatesInput{LaunchTemplateNames: []string{f.asg()}})
	if err != nil || len(out.LaunchTemplates) != 1 {
		f.T.Fatalf("describing launch template %s: %v", f.asg(), err)
	}
	id := awssdk.ToString(out.LaunchTemplates[0].LaunchTemplateId)
	version := strconv.FormatInt(awssdk.ToInt64(out.LaunchTemplates[0].LatestVersionNumber), 10)
	testenv.Eventually(f.T, 10*time.Second, func() error {
		ap := &infrav1.AWSMachinePool{}
		if err := env.Client.Get(f.Ctx, f.Key(poolName), ap); err != nil {
			return err
		}
		if ap.Status.LaunchTemplateID != id || ptr.Deref(ap.Status.LaunchTemplateVersion, "") != version {
			return fmt.Errorf("AWSMachinePool launch template %q version %q, want %s version %s",
				ap.Status.LaunchTemplateID, ptr.Deref(ap.Status.LaunchTemplateVersion, ""), id, version)
		}
		machines := &infrav1.AWSMachinePoolMachineList{}
		if err := env.Client.List(f.Ctx, machines, client.InNamespace(f.NS)); err != nil {
			return err
		}
		for _, m := range machines.Items {
			if m.Status.LaunchTemplateVersion != version {
				return fmt.Errorf("AWSMachinePoolMachine %s launch template version %q, want %s", m.Name, m.Status.LaunchTemplateVersion, version)
			}
		}
		return nil
	})
}
