package aws_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"

	"github.com/mpool-dev/mpool/internal/provider/aws"
	"github.com/mpool-dev/mpool/internal/scalegroup"
	"github.com/mpool-dev/mpool/internal/testenv/cloudtest"
	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/face/awsface"
)

// env is a simulated cloud, on a fake clock, and the AWS ScaleGroup
// pointed at its AWS face with the real SDK.
type env struct {
	*cloudtest.Env
	sg    *aws.ASGs
	wire  *wire
	creds *testCredentials
}

// testCredentials resolves every Ref to one access key (the face's
// default unless set).
type testCredentials struct {
	mu          sync.Mutex
	key, secret string
	provider    awssdk.CredentialsProvider
}

func (c *testCredentials) CredentialsProvider(context.Context, scalegroup.Ref) (awssdk.CredentialsProvider, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.provider == nil {
		key, secret := c.key, c.secret
		if key == "" {
			key, secret = awsface.AWSDefaultAccessKeyID, awsface.AWSDefaultSecretAccessKey
		}
		c.provider = aws.NewStaticCredentials(key, secret, "")
	}
	return c.provider, nil
}

func (c *testCredentials) set(key, secret string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.key, c.secret, c.provider = key, secret, nil
}

// wire is the HTTP transport of the ScaleGroup: it can cut the connection
// of the next requests of an action (a manager stopped before them).
type wire struct {
	mu   sync.Mutex
	drop map[string]int
}

var errDropped = errors.New("connection dropped by the test")

func (w *wire) dropNext(action string, n int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.drop == nil {
		w.drop = map[string]int{}
	}
	w.drop[action] = n
}

func (w *wire) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, err
		}
		_ = r.Body.Close()
		r.Body = io.NopCloser(bytes.NewReader(body))
		form, _ := url.ParseQuery(string(body))
		w.mu.Lock()
		n := w.drop[form.Get("Action")]
		if n > 0 {
			w.drop[form.Get("Action")] = n - 1
		}
		w.mu.Unlock()
		if n > 0 {
			return nil, errDropped
		}
	}
	return http.DefaultTransport.RoundTrip(r)
}

// startAWS starts a simulated cloud serving the default AWS face with
// cloudtest.DefaultSimulation, and the ScaleGroup.
func startAWS(t testing.TB) *env { return startAWSWith(t, nil, cloudtest.DefaultSimulation) }

// startAWSWith starts a simulated cloud serving face (nil: the default AWS
// face) with sim on a fake clock, and the ScaleGroup.
func startAWSWith(t testing.TB, face *awsface.AWSFace, sim core.Simulation) *env {
	t.Helper()
	o := cloudtest.Options{Face: awsface.AWSFaceName, Simulation: sim}
	if face != nil {
		o.Faces = []core.Face{face}
	}
	e := &env{wire: &wire{}, creds: &testCredentials{}}
	e.Env = cloudtest.Start(t, o, func(c *cloudtest.Env) (sg scalegroup.ScaleGroup, err error) {
		e.sg, err = aws.New(aws.Options{Endpoint: c.FaceURL(), HTTPClient: &http.Client{Timeout: 30 * time.Second, Transport: e.wire},
			Credentials: e.creds, Region: awsface.AWSDefaultRegion, Clock: c.Clk})
		return e.sg, err
	})
	return e
}

// startSettled starts the cloud and the ScaleGroup with the group pool0 at
// rest: 2 instances running model h1.
func startSettled(t testing.TB) (*env, scalegroup.Ref, *scalegroup.Group) {
	t.Helper()
	e, r := startAWS(t), ref("pool0")
	e.Apply(t, r, spec(2, "h1", token1))
	return e, r, e.Settle(t, r)
}

func ref(name string) scalegroup.Ref {
	return scalegroup.Ref{Name: name, Scope: awsface.AWSDefaultRegion, Namespace: "default"}
}

// spec is a pool's desired group of m5.large instances of model hash,
// with the AMI CAPA's lookup finds for the version (seed 004's pool).
func spec(capacity int32, hash, customData string) scalegroup.GroupSpec {
	lt := aws.LaunchTemplate{
		AMI:                aws.AMI{Owner: aws.DefaultAMIOwners, Format: aws.DefaultAMIFormat, BaseOS: aws.DefaultAMIBaseOS},
		SSHKeyName:         "default",
		IAMInstanceProfile: "nodes.cluster-api-provider-aws.sigs.k8s.io",
	}
	return scalegroup.GroupSpec{
		Capacity:  capacity,
		ModelHash: hash,
		Model: scalegroup.Model{
			InstanceType: "m5.large",
			Image:        lt.AMI.String(),
			Zones:        []string{"us-east-1a"},
			Version:      "v1.31.2",
			CustomData:   []byte(customData),
			Tags:         map[string]string{"team": "a"},
			Provider:     lt,
			InPlace:      aws.GroupSettings{MinSize: 1, MaxSize: 10, SubnetIDs: []string{awsface.AWSDefaultSubnetID}},
		},
	}
}

const token1 = "#cloud-config\n# token abcdef.0123456789abcdef\n"

// writes are the requests that change something.
func writes(r cloudtest.Requests) int64 {
	var n int64
	for op, c := range r {
		if !strings.Contains(op, ".Describe") {
			n += c
		}
	}
	return n
}

// groupKey is the simulated cloud's key of the Auto Scaling Group name.
func groupKey(name string) core.GroupKey {
	return awsface.AWSGroupKey(awsface.AWSDefaultAccountID, awsface.AWSDefaultRegion, name)
}

// sdkConfig is the SDK configuration of the face's default key, for
// clients that look at what the provider wrote.
func (e *env) sdkConfig() awssdk.Config {
	return awssdk.Config{
		Region:           awsface.AWSDefaultRegion,
		Credentials:      credentials.NewStaticCredentialsProvider(awsface.AWSDefaultAccessKeyID, awsface.AWSDefaultSecretAccessKey, ""),
		BaseEndpoint:     awssdk.String(e.FaceURL()),
		RetryMaxAttempts: 1,
	}
}

// ec2Client is an EC2 client of the face's default key.
func (e *env) ec2Client() *ec2.Client { return ec2.NewFromConfig(e.sdkConfig()) }

// versions are the numbers of the group's launch template's versions.
func (e *env) versions(t testing.TB, name string) []int64 {
	t.Helper()
	out, err := e.ec2Client().DescribeLaunchTemplateVersions(context.Background(), &ec2.DescribeLaunchTemplateVersionsInput{LaunchTemplateName: awssdk.String(name)})
	if err != nil {
		t.Fatalf("DescribeLaunchTemplateVersions %s: %v", name, err)
	}
	var vs []int64
	for _, v := range out.LaunchTemplateVersions {
		vs = append(vs, awssdk.ToInt64(v.VersionNumber))
	}
	slices.Sort(vs)
	return vs
}

func hashes(g *scalegroup.Group) map[string]int {
	out := map[string]int{}
	for _, in := range g.Instances {
		out[in.ModelHash]++
	}
	return out
}

func TestCreate(t *testing.T) {
	e := startAWS(t)
	r := ref("pool0")

	g := e.Apply(t, r, spec(2, "h1", token1))
	if g.Capacity != 2 || g.ModelHash != "h1" || !g.Pending() {
		t.Fatalf("applied group: capacity %d hash %q operation %+v", g.Capacity, g.ModelHash, g.Operation)
	}
	// A create: the describe that found nothing, the AMI lookup, the
	// launch template and the group.
	if got := e.Requests(); got[awsface.OpAWSDescribeAutoScalingGroups] != 1 || got[awsface.OpAWSDescribeImages] != 1 ||
		got[awsface.OpAWSCreateLaunchTemplate] != 1 || got[awsface.OpAWSCreateAutoScalingGroup] != 1 || got.Total() != 4 {
		t.Fatalf("requests of a create: %v", got)
	}

	g = e.Settle(t, r)
	cg := e.CloudGroup(t, groupKey("pool0"))
	if len(g.Instances) != 2 || g.Operation != nil || g.ModelHash != "h1" {
		t.Fatalf("settled group: %+v", g)
	}
	for i, in := range g.Instances {
		if in.ProviderID != "aws:///us-east-1a/"+in.ID || !strings.HasPrefix(in.ID, "i-") || in.ProviderID != cg.Instances[i].ProviderID {
			t.Fatalf("instance %s providerID %q (the cloud's %q)", in.ID, in.ProviderID, cg.Instances[i].ProviderID)
		}
		if in.ModelHash != "h1" || in.Zone != "us-east-1a" || in.CreatedAt.IsZero() {
			t.Fatalf("instance %+v", in)
		}
	}
	// What reached the cloud: the looked-up AMI, the type, user data, the
	// tags and the version the Nodes report.
	wantAMI := awsface.AWSImageID(awsface.AWSDefaultRegion, awsface.AWSImageName("v1.31.2"))
	if cg.Model.InstanceType != "m5.large" || cg.Model.Image != wantAMI || e.CustomData(t, groupKey("pool0")) != token1 ||
		cg.Model.Tags["team"] != "a" || cg.Model.Extra[core.ExtraVersion] != "v1.31.2" {
		t.Fatalf("the cloud's model: %+v", cg.Model)
	}

	// Get costs one describe.
	e.Srv.ResetStats()
	e.Get(t, r)
	if got := e.Requests(); got.Total() != 1 || got[awsface.OpAWSDescribeAutoScalingGroups] != 1 {
		t.Fatalf("requests of a Get: %v", got)
	}
	if _, err := e.sg.Get(context.Background(), ref("nothing")); !scalegroup.IsNotFound(err) {
		t.Fatalf("Get of no group: %v", err)
	}
}

func TestApplyWritesOnlyWhatDiffers(t *testing.T) {
	e, r, _ := startSettled(t)

	if _, got := e.ApplyCounted(t, r, spec(2, "h1", token1)); writes(got) != 0 || got.Total() != 1 {
		t.Fatalf("the same spec again: %v, want one describe and no write", got)
	}

	if _, got := e.ApplyCounted(t, r, spec(2, "h1", "#cloud-config\n# token rotated.0000000000000000\n")); writes(got) != 0 {
		t.Fatalf("a token rotation at rest: %v, want no write", got)
	}

	if _, got := e.ApplyCounted(t, r, spec(1, "h1", token1)); writes(got) != 1 || got[awsface.OpAWSUpdateAutoScalingGroup] != 1 {
		t.Fatalf("a capacity decrease: %v, want one update", got)
	}
	if _, got := e.ApplyCounted(t, r, spec(2, "h1", token1)); writes(got) != 1 || got[awsface.OpAWSUpdateAutoScalingGroup] != 1 {
		t.Fatalf("a capacity increase with the same user data: %v, want one update", got)
	}
	if g := e.Settle(t, r); len(g.Instances) != 2 || hashes(g)["h1"] != 2 {
		t.Fatalf("back to 2: %v %v", cloudtest.IDs(g), hashes(g))
	}
}

func TestCapacityIncreaseAfterRotation(t *testing.T) {
	e, r, _ := startSettled(t)

	rotated := "#cloud-config\n# token rotated.0000000000000000\n"
	if _, got := e.ApplyCounted(t, r, spec(3, "h1", rotated)); got[awsface.OpAWSCreateLaunchTemplateVersion] != 1 || got[awsface.OpAWSUpdateAutoScalingGroup] != 1 || got[awsface.OpAWSDescribeImages] != 0 {
		t.Fatalf("more capacity with new user data: %v, want one version (no AMI lookup) and one update", got)
	}
	g := e.Settle(t, r)
	if h := hashes(g); h["h1"] != 3 || len(h) != 1 {
		t.Fatalf("hashes %v: the instances of the model's first version stay current", h)
	}
	if cd := e.CustomData(t, groupKey("pool0")); cd != rotated {
		t.Fatalf("new instances launch with %q", cd)
	}

	// The same data again, and more: no new version.
	if _, got := e.ApplyCounted(t, r, spec(4, "h1", rotated)); got[awsface.OpAWSCreateLaunchTemplateVersion] != 0 || writes(got) != 1 {
		t.Fatalf("more capacity, same data: %v, want one update", got)
	}
}

func TestModelChange(t *testing.T) {
	e, r, _ := startSettled(t)

	s := spec(3, "h2", token1)
	s.Model.Version = "v1.32.1"
	if _, got := e.ApplyCounted(t, r, s); got[awsface.OpAWSCreateLaunchTemplateVersion] != 1 || got[awsface.OpAWSUpdateAutoScalingGroup] != 1 {
		t.Fatalf("a model change: %v, want one version and one update", got)
	}
	g := e.Settle(t, r)
	if h := hashes(g); h["h2"] != 1 || h["lt-version-1"] != 2 || g.ModelHash != "h2" {
		t.Fatalf("hashes %v (group %q): the old instances keep the old model, the new one has the new", h, g.ModelHash)
	}
	wantAMI := awsface.AWSImageID(awsface.AWSDefaultRegion, awsface.AWSImageName("v1.32.1"))
	if im := e.CloudGroup(t, groupKey("pool0")).Model.Image; im != wantAMI {
		t.Fatalf("the new model's AMI %s, want %s", im, wantAMI)
	}

	if _, got := e.ApplyCounted(t, r, s); writes(got) != 0 {
		t.Fatalf("the new model again: %v", got)
	}
}

func TestRestartBetweenVersionAndUpdate(t *testing.T) {
	e, r, _ := startSettled(t)

	// The manager stops after creating the version, before the ASG hears
	// of it (CAPA's FIXME window).
	e.wire.dropNext("CreateOrUpdateTags", 1)
	if _, err := e.sg.Apply(context.Background(), r, spec(3, "h2", token1)); !scalegroup.IsTransient(err) {
		t.Fatalf("the interrupted apply: %v", err)
	}
	if v := e.versions(t, "pool0"); len(v) != 2 {
		t.Fatalf("versions %v after the interrupted apply", v)
	}
	g, got := e.ApplyCounted(t, r, spec(3, "h2", token1))
	if got[awsface.OpAWSCreateLaunchTemplateVersion] != 0 || got[awsface.OpAWSUpdateAutoScalingGroup] != 1 {
		t.Fatalf("the apply after a restart: %v, want the version reused", got)
	}
	if v := e.versions(t, "pool0"); len(v) != 2 || g.ModelHash != "h2" {
		t.Fatalf("versions %v, hash %q: exactly one version of the new model", v, g.ModelHash)
	}
	g = e.Settle(t, r)
	if h := hashes(g); h["h2"] != 1 || h["lt-version-1"] != 2 {
		t.Fatalf("hashes %v", h)
	}
}

func TestTemplateDeletedBehindOurBack(t *testing.T) {
	e, r, _ := startSettled(t)
	if _, err := e.ec2Client().DeleteLaunchTemplate(context.Background(), &ec2.DeleteLaunchTemplateInput{LaunchTemplateName: awssdk.String("pool0")}); err != nil {
		t.Fatal(err)
	}
	// The next model gets a new template; the instances of the old one
	// are stale, whatever their version numbers.
	e.Apply(t, r, spec(3, "h2", token1))
	g := e.Settle(t, r)
	if h := hashes(g); h["h2"] != 1 || h["h1"] != 0 || len(g.Instances) != 3 {
		t.Fatalf("hashes %v", h)
	}
	if v := e.versions(t, "pool0"); len(v) != 1 {
		t.Fatalf("the new template's versions %v", v)
	}
}

func TestPruneOldVersions(t *testing.T) {
	e := startAWS(t)
	r := ref("pool0")
	e.Apply(t, r, spec(1, "h0", token1))
	e.Settle(t, r)
	for i, h := range []string{"h1", "h2", "h3", "h4", "h5", "h6"} {
		g := e.Get(t, r)
		// Replace the instance: the engine deletes the old one, then
		// applies the new model.
		if err := e.sg.DeleteInstances(context.Background(), r, cloudtest.IDs(g)); err != nil {
			t.Fatal(err)
		}
		e.Apply(t, r, spec(1, h, token1))
		e.Settle(t, r)
		if v := e.versions(t, "pool0"); len(v) > 4 || v[0] != 1 {
			t.Fatalf("after model %d: versions %v, want the default and the latest three at most", i+1, v)
		}
	}
	if v := e.versions(t, "pool0"); v[len(v)-1] != 7 {
		t.Fatalf("versions %v", v)
	}
}

func TestDeleteInstances(t *testing.T) {
	e := startAWSWith(t, nil, core.Simulation{BootDelay: cloudtest.BootDelay, DeleteDelay: cloudtest.BootDelay})
	r := ref("pool0")
	e.Apply(t, r, spec(3, "h1", token1))
	g := e.Settle(t, r)
	victims := cloudtest.IDs(g)[:2]

	e.Srv.ResetStats()
	if err := e.sg.DeleteInstances(context.Background(), r, append(victims, "i-00000000000000000", victims[0])); err != nil {
		t.Fatal(err)
	}
	if got := e.Requests(); got[awsface.OpAWSTerminateInstanceInASG] != 2 {
		t.Fatalf("requests %v: one terminate per instance of the group", got)
	}
	// Once more while they terminate: nothing is decremented again.
	e.Srv.ResetStats()
	if err := e.sg.DeleteInstances(context.Background(), r, victims); err != nil {
		t.Fatal(err)
	}
	if got := e.Requests(); writes(got) != 0 {
		t.Fatalf("deleting terminating instances again: %v", got)
	}
	g = e.Settle(t, r)
	// minSize 1 and one instance left: deleting it lowers minSize first.
	if g.Capacity != 1 || len(g.Instances) != 1 {
		t.Fatalf("after deleting 2 of 3: capacity %d instances %v", g.Capacity, cloudtest.IDs(g))
	}
	if err := e.sg.DeleteInstances(context.Background(), r, cloudtest.IDs(g)); err != nil {
		t.Fatalf("deleting the last instance (below minSize): %v", err)
	}
	if g := e.Settle(t, r); g.Capacity != 0 || len(g.Instances) != 0 {
		t.Fatalf("after deleting all: %+v", g)
	}
	if err := e.sg.DeleteInstances(context.Background(), ref("nothing"), []string{"i-1"}); err != nil {
		t.Fatalf("a group that does not exist: %v", err)
	}
}

func TestDelete(t *testing.T) {
	e := startAWSWith(t, nil, core.Simulation{BootDelay: cloudtest.BootDelay, DeleteDelay: cloudtest.BootDelay})
	r := ref("pool0")
	e.Apply(t, r, spec(2, "h1", token1))
	e.Settle(t, r)
	if err := e.sg.Delete(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	if g, err := e.sg.Get(context.Background(), r); err == nil && (g.Operation == nil || g.Operation.Type != scalegroup.OperationDelete) {
		t.Fatalf("a group being deleted: %+v", g)
	}
	if err := e.sg.Delete(context.Background(), r); err != nil {
		t.Fatalf("Delete while deleting: %v", err)
	}
	e.Clk.Step(2 * cloudtest.BootDelay)
	var err error
	for range 20 {
		if _, err = e.sg.Get(context.Background(), r); scalegroup.IsNotFound(err) {
			break
		}
		e.Clk.Step(time.Second)
	}
	if !scalegroup.IsNotFound(err) {
		t.Fatalf("the group after its deletion: %v", err)
	}
	_, err = e.ec2Client().DescribeLaunchTemplateVersions(context.Background(), &ec2.DescribeLaunchTemplateVersionsInput{LaunchTemplateName: awssdk.String("pool0")})
	if err == nil {
		t.Fatalf("the launch template is left")
	}
	if err := e.sg.Delete(context.Background(), r); err != nil {
		t.Fatalf("Delete of a deleted group: %v", err)
	}
}

func TestLaunchFailureReported(t *testing.T) {
	// Two m5.large fit a 4-vCPU quota; the third cannot launch, and AWS
	// says why only in the group's scaling activities.
	e := startAWSWith(t, &awsface.AWSFace{VCPUQuota: 4}, cloudtest.DefaultSimulation)
	r := ref("pool0")
	e.Apply(t, r, spec(3, "h1", token1))
	e.Clk.Step(cloudtest.BootDelay + time.Second)
	var g *scalegroup.Group
	for range 20 {
		if g = e.Get(t, r); g.Message != "" {
			break
		}
		e.Clk.Step(time.Second)
	}
	if !strings.Contains(g.Message, "vCPU limit") || len(g.Instances) != 2 || !g.Pending() {
		t.Fatalf("group %+v: want the quota in its message", g)
	}
	e.Srv.ResetStats()
	e.Get(t, r)
	if got := e.Requests(); got.Total() != 2 || got[awsface.OpAWSDescribeScalingActivities] != 1 {
		t.Fatalf("requests of a Get of a stalled group: %v", got)
	}
}

func TestErrors(t *testing.T) {
	e := startAWS(t)

	s := spec(1, "h1", token1)
	lt := s.Model.Provider.(aws.LaunchTemplate)
	lt.AMI = aws.AMI{ID: "ami-00000000000000000"}
	s.Model.Provider = lt
	if _, err := e.sg.Apply(context.Background(), ref("badami"), s); !scalegroup.IsInvalid(err) || !strings.Contains(err.Error(), "ami-00000000000000000") {
		t.Fatalf("an unknown AMI: %v", err)
	}

	s = spec(1, "h1", token1)
	s.Model.Version = "v1.12.0"
	if _, err := e.sg.Apply(context.Background(), ref("noami"), s); !scalegroup.IsInvalid(err) || !strings.Contains(err.Error(), "1.12.0") {
		t.Fatalf("no AMI for the version: %v", err)
	}

	s = spec(1, "h1", token1)
	s.Model.InstanceType = "x9.huge"
	if _, err := e.sg.Apply(context.Background(), ref("badtype"), s); !scalegroup.IsInvalid(err) {
		t.Fatalf("an unknown instance type: %v", err)
	}

	e.creds.set(awsface.AWSDefaultAccessKeyID, "wrong")
	if _, err := e.sg.Get(context.Background(), ref("pool0")); !scalegroup.IsUnauthorized(err) {
		t.Fatalf("a wrong secret: %v", err)
	}
	e.creds.set("", "")

	if err := e.Srv.SetFaceFaults(awsface.AWSFaceName, &core.Faults{ThrottleRate: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.sg.Get(context.Background(), ref("pool0")); err == nil {
		t.Fatalf("a throttled Get succeeded")
	} else if _, ok := scalegroup.IsThrottled(err); !ok {
		t.Fatalf("a throttled Get: %v", err)
	}
	if err := e.Srv.SetFaceFaults(awsface.AWSFaceName, &core.Faults{ErrorRate: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.sg.Get(context.Background(), ref("pool0")); !scalegroup.IsTransient(err) {
		t.Fatalf("a server error: %v", err)
	}
}
