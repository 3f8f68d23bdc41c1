package awsface

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"

	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/wire/awsapi"
)

// TestAWSMovesTemplatesOfAnEarlierStateToRecords: a state written when the
// face kept its launch templates and scaling activities in its data is
// read back with them as records, and the data no longer holds them.
func TestAWSMovesTemplatesOfAnEarlierStateToRecords(t *testing.T) {
	dir := t.TempDir()
	c, err := core.NewCloud(context.Background(), core.Options{DataDir: dir, Faces: []core.Face{&AWSFace{}}, DefaultSimulation: &core.Simulation{}})
	if err != nil {
		t.Fatal(err)
	}
	scope := AWSScope(AWSDefaultAccountID, AWSDefaultRegion)
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	legacy := awsFaceData{
		Templates: map[string]map[string]*awsTemplate{scope: {"lt-0123456789abcdef0": {
			ID: "lt-0123456789abcdef0", Name: "earlier", CreateTime: now, Default: 1, Latest: 1,
			Versions: map[string]*awsTemplateVersion{"1": {Number: 1, CreateTime: now, Data: awsapi.LaunchTemplateData{ImageID: "ami-1"}}},
		}}},
		Activities: map[string]map[string][]awsActivity{scope: {"pool": {{ID: "a1", Kind: "launch", Start: now, Cause: "earlier"}}}},
	}
	if _, err := c.UpdateFaceData(AWSFaceName, core.ReplacePayload(legacy)); err != nil {
		t.Fatal(err)
	}
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}

	e := newAWSEnv(t, core.Options{DataDir: dir})
	out, err := e.ec2.DescribeLaunchTemplates(context.Background(), &ec2.DescribeLaunchTemplatesInput{LaunchTemplateNames: []string{"earlier"}})
	if err != nil || len(out.LaunchTemplates) != 1 || aws.ToString(out.LaunchTemplates[0].LaunchTemplateId) != "lt-0123456789abcdef0" {
		t.Fatalf("DescribeLaunchTemplates(earlier) = %+v, %v: want the template of the earlier state", out, err)
	}
	cloud := e.srv.Cloud()
	if acts := core.FaceRecordAs[[]awsActivity](cloud, AWSFaceName, activitiesKey(scope, "pool")); len(acts) != 1 || acts[0].ID != "a1" {
		t.Errorf("the group's activities = %+v, want the earlier state's one", acts)
	}
	if d := readAWSData(cloud); d.Templates != nil || d.Activities != nil {
		t.Errorf("the face's data still holds templates or activities: %+v", d)
	}
}
