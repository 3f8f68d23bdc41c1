package aws_test

import (
	"context"
	"testing"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"

	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// templateID is the ID of the group's launch template, as EC2 reports it.
func (e *env) templateID(t testing.TB, name string) string {
	t.Helper()
	out, err := e.ec2Client().DescribeLaunchTemplates(context.Background(), &ec2.DescribeLaunchTemplatesInput{LaunchTemplateNames: []string{name}})
	if err != nil || len(out.LaunchTemplates) != 1 {
		t.Fatalf("DescribeLaunchTemplates %s: %v %+v", name, err, out)
	}
	return awssdk.ToString(out.LaunchTemplates[0].LaunchTemplateId)
}

func TestTemplateReported(t *testing.T) {
	// The group and each instance name the launch template and version
	// they launch from: the AWSMachinePool's launchTemplateID and
	// launchTemplateVersion, each AWSMachinePoolMachine's version.
	e, r, g := startSettled(t)
	id := e.templateID(t, "pool0")
	want := scalegroup.TemplateRef{ID: id, Version: "1"}
	if g.Template == nil || *g.Template != want {
		t.Fatalf("Get: template %+v, want %+v", g.Template, want)
	}
	for _, in := range g.Instances {
		if in.Template == nil || *in.Template != want {
			t.Fatalf("instance %s: template %+v, want %+v", in.ID, in.Template, want)
		}
	}

	// A model change: Apply reports the new version at once; the old
	// instances keep theirs, the new one has the new.
	s := spec(3, "h2", token1)
	s.Model.InstanceType = "m5.xlarge"
	g = e.Apply(t, r, s)
	want2 := scalegroup.TemplateRef{ID: id, Version: "2"}
	if g.Template == nil || *g.Template != want2 {
		t.Fatalf("Apply of a new model: template %+v, want %+v", g.Template, want2)
	}
	g = e.Settle(t, r)
	if g.Template == nil || *g.Template != want2 {
		t.Fatalf("Get after a new model: template %+v, want %+v", g.Template, want2)
	}
	versions := map[string]int{}
	for _, in := range g.Instances {
		if in.Template == nil || in.Template.ID != id {
			t.Fatalf("instance %s: template %+v, want of %s", in.ID, in.Template, id)
		}
		versions[in.Template.Version]++
	}
	if versions["1"] != 2 || versions["2"] != 1 {
		t.Fatalf("instances by version %v, want 2 of 1 and 1 of 2", versions)
	}
}
