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
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/mpool-dev/mpool/internal/provider/aws"
	"github.com/mpool-dev/mpool/internal/scalegroup"
	"github.com/mpool-dev/mpool/sim/cloudsim"
	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/face/awsface"
	"github.com/mpool-dev/mpool/sim/server"
)

// bootDelay is how long the simulated instances take to boot: on the fake
// clock, so a test steps it rather than waiting.
const bootDelay = 10 * time.Second

// env is a simulated cloud, on a fake clock, and the AWS ScaleGroup
// pointed at its AWS face with the real SDK.
type env struct {
	srv   *server.Server
	clk   *clocktesting.FakeClock
	sg    *aws.ASGs
	wire  *wire
	creds *testCredentials
	url   string
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

func startAWS(t testing.TB, face *awsface.AWSFace, sim core.Simulation) *env {
	t.Helper()
	clk := clocktesting.NewFakeClock(time.Now())
	opts := core.Options{Clock: clk, Seed: 7, DefaultSimulation: &sim}
	if face != nil {
		opts.Faces = []core.Face{face}
	}
	srv, err := cloudsim.Start(context.Background(), opts)
	if err != nil {
		t.Fatalf("starting the simulated cloud: %v", err)
	}
	t.Cleanup(func() { _ = srv.Stop() })
	u := srv.FaceURL(awsface.AWSFaceName)
	w := &wire{}
	creds := &testCredentials{}
	sg, err := aws.New(aws.Options{Endpoint: u, HTTPClient: &http.Client{Timeout: 30 * time.Second, Transport: w},
		Credentials: creds, Region: awsface.AWSDefaultRegion, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	return &env{srv: srv, clk: clk, sg: sg, wire: w, creds: creds, url: u}
}

func defaultSim() core.Simulation { return core.Simulation{BootDelay: bootDelay} }

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

// requests counts the AWS face's requests by operation since the last
// reset.
type requests map[string]int64

func awsRequests(srv *server.Server) requests {
	out := requests{}
	for _, r := range srv.Stats().Requests {
		if r.Face == awsface.AWSFaceName {
			out[r.Operation] += r.Count
		}
	}
	return out
}

func (r requests) total() int64 {
	var n int64
	for _, c := range r {
		n += c
	}
	return n
}

// writes are the requests that change something.
func (r requests) writes() int64 {
	var n int64
	for op, c := range r {
		if !strings.Contains(op, ".Describe") {
			n += c
		}
	}
	return n
}

func (e *env) apply(t testing.TB, r scalegroup.Ref, s scalegroup.GroupSpec) *scalegroup.Group {
	t.Helper()
	g, err := e.sg.Apply(context.Background(), r, s)
	if err != nil {
		t.Fatalf("Apply %s: %v", r.Name, err)
	}
	return g
}

func (e *env) get(t testing.TB, r scalegroup.Ref) *scalegroup.Group {
	t.Helper()
	g, err := e.sg.Get(context.Background(), r)
	if err != nil {
		t.Fatalf("Get %s: %v", r.Name, err)
	}
	return g
}

// settle steps the fake clock past the boot delay and returns the group
// once it is at rest with every instance running (bounded: the simulation
// advances on each read).
func (e *env) settle(t testing.TB, r scalegroup.Ref) *scalegroup.Group {
	t.Helper()
	e.clk.Step(bootDelay + time.Second)
	var g *scalegroup.Group
	for range 20 {
		g = e.get(t, r)
		if !g.Pending() && !slices.ContainsFunc(g.Instances, func(in scalegroup.Instance) bool { return in.State != scalegroup.StateRunning }) {
			return g
		}
		e.clk.Step(time.Second)
	}
	t.Fatalf("group %s did not settle: %+v", r.Name, g)
	return nil
}

// cloudGroup is the core's view of an Auto Scaling Group.
func (e *env) cloudGroup(t testing.TB, name string) *core.Group {
	t.Helper()
	k := awsface.AWSGroupKey(awsface.AWSDefaultAccountID, awsface.AWSDefaultRegion, name)
	g, err := e.srv.Cloud().Scope(k.Face, k.Scope).GetGroup(k.Name)
	if err != nil {
		t.Fatalf("the cloud's group %s: %v", name, err)
	}
	return g
}

// customData is the user data the group's new instances launch with.
func (e *env) customData(t testing.TB, name string) string {
	t.Helper()
	k := awsface.AWSGroupKey(awsface.AWSDefaultAccountID, awsface.AWSDefaultRegion, name)
	cd, err := e.srv.Cloud().Scope(k.Face, k.Scope).CustomData(k.Name)
	if err != nil {
		t.Fatal(err)
	}
	return string(cd)
}

// ec2Client is an EC2 client of the face's default key, to look at what
// the provider wrote.
func (e *env) ec2Client() *ec2.Client {
	return ec2.NewFromConfig(awssdk.Config{
		Region:           awsface.AWSDefaultRegion,
		Credentials:      credentials.NewStaticCredentialsProvider(awsface.AWSDefaultAccessKeyID, awsface.AWSDefaultSecretAccessKey, ""),
		BaseEndpoint:     awssdk.String(e.url),
		RetryMaxAttempts: 1,
	})
}

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

func ids(g *scalegroup.Group) []string {
	var out []string
	for _, in := range g.Instances {
		out = append(out, in.ID)
	}
	return out
}

func TestTagsMatchTheSimulatedAWS(t *testing.T) {
	// The face reads the tags the provider writes; the provider does not
	// import the simulator, so this test keeps them equal.
	if aws.TagModelHash != awsface.AWSTagModelHash || aws.TagKubernetesVersion != awsface.AWSTagKubernetesVersion {
		t.Fatalf("tags %q %q, the face's %q %q", aws.TagModelHash, aws.TagKubernetesVersion, awsface.AWSTagModelHash, awsface.AWSTagKubernetesVersion)
	}
}

func TestCreate(t *testing.T) {
	e := startAWS(t, nil, defaultSim())
	r := ref("pool0")

	g := e.apply(t, r, spec(2, "h1", token1))
	if g.Capacity != 2 || g.ModelHash != "h1" || !g.Pending() {
		t.Fatalf("applied group: capacity %d hash %q operation %+v", g.Capacity, g.ModelHash, g.Operation)
	}
	// A create: the describe that found nothing, the AMI lookup, the
	// launch template and the group.
	if got := awsRequests(e.srv); got[awsface.OpAWSDescribeAutoScalingGroups] != 1 || got[awsface.OpAWSDescribeImages] != 1 ||
		got[awsface.OpAWSCreateLaunchTemplate] != 1 || got[awsface.OpAWSCreateAutoScalingGroup] != 1 || got.total() != 4 {
		t.Fatalf("requests of a create: %v", got)
	}

	g = e.settle(t, r)
	cg := e.cloudGroup(t, "pool0")
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
	if cg.Model.InstanceType != "m5.large" || cg.Model.Image != wantAMI || e.customData(t, "pool0") != token1 ||
		cg.Model.Tags["team"] != "a" || cg.Model.Extra[core.ExtraVersion] != "v1.31.2" {
		t.Fatalf("the cloud's model: %+v", cg.Model)
	}

	// Get costs one describe.
	e.srv.ResetStats()
	e.get(t, r)
	if got := awsRequests(e.srv); got.total() != 1 || got[awsface.OpAWSDescribeAutoScalingGroups] != 1 {
		t.Fatalf("requests of a Get: %v", got)
	}
	if _, err := e.sg.Get(context.Background(), ref("nothing")); !scalegroup.IsNotFound(err) {
		t.Fatalf("Get of no group: %v", err)
	}
}

func TestApplyWritesOnlyWhatDiffers(t *testing.T) {
	e := startAWS(t, nil, defaultSim())
	r := ref("pool0")
	e.apply(t, r, spec(2, "h1", token1))
	e.settle(t, r)

	e.srv.ResetStats()
	e.apply(t, r, spec(2, "h1", token1))
	if got := awsRequests(e.srv); got.writes() != 0 || got.total() != 1 {
		t.Fatalf("the same spec again: %v, want one describe and no write", got)
	}

	e.srv.ResetStats()
	e.apply(t, r, spec(2, "h1", "#cloud-config\n# token rotated.0000000000000000\n"))
	if got := awsRequests(e.srv); got.writes() != 0 {
		t.Fatalf("a token rotation at rest: %v, want no write", got)
	}

	e.srv.ResetStats()
	e.apply(t, r, spec(1, "h1", token1))
	if got := awsRequests(e.srv); got.writes() != 1 || got[awsface.OpAWSUpdateAutoScalingGroup] != 1 {
		t.Fatalf("a capacity decrease: %v, want one update", got)
	}
	e.srv.ResetStats()
	e.apply(t, r, spec(2, "h1", token1))
	if got := awsRequests(e.srv); got.writes() != 1 || got[awsface.OpAWSUpdateAutoScalingGroup] != 1 {
		t.Fatalf("a capacity increase with the same user data: %v, want one update", got)
	}
	if g := e.settle(t, r); len(g.Instances) != 2 || hashes(g)["h1"] != 2 {
		t.Fatalf("back to 2: %v %v", ids(g), hashes(g))
	}
}

func TestCapacityIncreaseAfterRotation(t *testing.T) {
	e := startAWS(t, nil, defaultSim())
	r := ref("pool0")
	e.apply(t, r, spec(2, "h1", token1))
	e.settle(t, r)

	rotated := "#cloud-config\n# token rotated.0000000000000000\n"
	e.srv.ResetStats()
	e.apply(t, r, spec(3, "h1", rotated))
	got := awsRequests(e.srv)
	if got[awsface.OpAWSCreateLaunchTemplateVersion] != 1 || got[awsface.OpAWSUpdateAutoScalingGroup] != 1 || got[awsface.OpAWSDescribeImages] != 0 {
		t.Fatalf("more capacity with new user data: %v, want one version (no AMI lookup) and one update", got)
	}
	g := e.settle(t, r)
	if h := hashes(g); h["h1"] != 3 || len(h) != 1 {
		t.Fatalf("hashes %v: the instances of the model's first version stay current", h)
	}
	if cd := e.customData(t, "pool0"); cd != rotated {
		t.Fatalf("new instances launch with %q", cd)
	}

	// The same data again, and more: no new version.
	e.srv.ResetStats()
	e.apply(t, r, spec(4, "h1", rotated))
	if got := awsRequests(e.srv); got[awsface.OpAWSCreateLaunchTemplateVersion] != 0 || got.writes() != 1 {
		t.Fatalf("more capacity, same data: %v, want one update", got)
	}
}

func TestModelChange(t *testing.T) {
	e := startAWS(t, nil, defaultSim())
	r := ref("pool0")
	e.apply(t, r, spec(2, "h1", token1))
	e.settle(t, r)

	s := spec(3, "h2", token1)
	s.Model.Version = "v1.32.1"
	e.srv.ResetStats()
	e.apply(t, r, s)
	if got := awsRequests(e.srv); got[awsface.OpAWSCreateLaunchTemplateVersion] != 1 || got[awsface.OpAWSUpdateAutoScalingGroup] != 1 {
		t.Fatalf("a model change: %v, want one version and one update", got)
	}
	g := e.settle(t, r)
	if h := hashes(g); h["h2"] != 1 || h["lt-version-1"] != 2 || g.ModelHash != "h2" {
		t.Fatalf("hashes %v (group %q): the old instances keep the old model, the new one has the new", h, g.ModelHash)
	}
	wantAMI := awsface.AWSImageID(awsface.AWSDefaultRegion, awsface.AWSImageName("v1.32.1"))
	if im := e.cloudGroup(t, "pool0").Model.Image; im != wantAMI {
		t.Fatalf("the new model's AMI %s, want %s", im, wantAMI)
	}

	e.srv.ResetStats()
	e.apply(t, r, s)
	if got := awsRequests(e.srv); got.writes() != 0 {
		t.Fatalf("the new model again: %v", got)
	}
}

func TestRestartBetweenVersionAndUpdate(t *testing.T) {
	e := startAWS(t, nil, defaultSim())
	r := ref("pool0")
	e.apply(t, r, spec(2, "h1", token1))
	e.settle(t, r)

	// The manager stops after creating the version, before the ASG hears
	// of it (CAPA's FIXME window).
	e.wire.dropNext("CreateOrUpdateTags", 1)
	if _, err := e.sg.Apply(context.Background(), r, spec(3, "h2", token1)); !scalegroup.IsTransient(err) {
		t.Fatalf("the interrupted apply: %v", err)
	}
	if v := e.versions(t, "pool0"); len(v) != 2 {
		t.Fatalf("versions %v after the interrupted apply", v)
	}
	e.srv.ResetStats()
	g := e.apply(t, r, spec(3, "h2", token1))
	if got := awsRequests(e.srv); got[awsface.OpAWSCreateLaunchTemplateVersion] != 0 || got[awsface.OpAWSUpdateAutoScalingGroup] != 1 {
		t.Fatalf("the apply after a restart: %v, want the version reused", got)
	}
	if v := e.versions(t, "pool0"); len(v) != 2 || g.ModelHash != "h2" {
		t.Fatalf("versions %v, hash %q: exactly one version of the new model", v, g.ModelHash)
	}
	g = e.settle(t, r)
	if h := hashes(g); h["h2"] != 1 || h["lt-version-1"] != 2 {
		t.Fatalf("hashes %v", h)
	}
}

func TestTemplateDeletedBehindOurBack(t *testing.T) {
	e := startAWS(t, nil, defaultSim())
	r := ref("pool0")
	e.apply(t, r, spec(2, "h1", token1))
	e.settle(t, r)
	if _, err := e.ec2Client().DeleteLaunchTemplate(context.Background(), &ec2.DeleteLaunchTemplateInput{LaunchTemplateName: awssdk.String("pool0")}); err != nil {
		t.Fatal(err)
	}
	// The next model gets a new template; the instances of the old one
	// are stale, whatever their version numbers.
	e.apply(t, r, spec(3, "h2", token1))
	g := e.settle(t, r)
	if h := hashes(g); h["h2"] != 1 || h["h1"] != 0 || len(g.Instances) != 3 {
		t.Fatalf("hashes %v", h)
	}
	if v := e.versions(t, "pool0"); len(v) != 1 {
		t.Fatalf("the new template's versions %v", v)
	}
}

func TestPruneOldVersions(t *testing.T) {
	e := startAWS(t, nil, defaultSim())
	r := ref("pool0")
	e.apply(t, r, spec(1, "h0", token1))
	e.settle(t, r)
	for i, h := range []string{"h1", "h2", "h3", "h4", "h5", "h6"} {
		g := e.get(t, r)
		// Replace the instance: the engine deletes the old one, then
		// applies the new model.
		if err := e.sg.DeleteInstances(context.Background(), r, ids(g)); err != nil {
			t.Fatal(err)
		}
		e.apply(t, r, spec(1, h, token1))
		e.settle(t, r)
		if v := e.versions(t, "pool0"); len(v) > 4 || v[0] != 1 {
			t.Fatalf("after model %d: versions %v, want the default and the latest three at most", i+1, v)
		}
	}
	if v := e.versions(t, "pool0"); v[len(v)-1] != 7 {
		t.Fatalf("versions %v", v)
	}
}

func TestDeleteInstances(t *testing.T) {
	e := startAWS(t, nil, core.Simulation{BootDelay: bootDelay, DeleteDelay: bootDelay})
	r := ref("pool0")
	e.apply(t, r, spec(3, "h1", token1))
	g := e.settle(t, r)
	victims := ids(g)[:2]

	e.srv.ResetStats()
	if err := e.sg.DeleteInstances(context.Background(), r, append(victims, "i-00000000000000000", victims[0])); err != nil {
		t.Fatal(err)
	}
	if got := awsRequests(e.srv); got[awsface.OpAWSTerminateInstanceInASG] != 2 {
		t.Fatalf("requests %v: one terminate per instance of the group", got)
	}
	// Once more while they terminate: nothing is decremented again.
	e.srv.ResetStats()
	if err := e.sg.DeleteInstances(context.Background(), r, victims); err != nil {
		t.Fatal(err)
	}
	if got := awsRequests(e.srv); got.writes() != 0 {
		t.Fatalf("deleting terminating instances again: %v", got)
	}
	g = e.settle(t, r)
	// minSize 1 and one instance left: deleting it lowers minSize first.
	if g.Capacity != 1 || len(g.Instances) != 1 {
		t.Fatalf("after deleting 2 of 3: capacity %d instances %v", g.Capacity, ids(g))
	}
	if err := e.sg.DeleteInstances(context.Background(), r, ids(g)); err != nil {
		t.Fatalf("deleting the last instance (below minSize): %v", err)
	}
	if g := e.settle(t, r); g.Capacity != 0 || len(g.Instances) != 0 {
		t.Fatalf("after deleting all: %+v", g)
	}
	if err := e.sg.DeleteInstances(context.Background(), ref("nothing"), []string{"i-1"}); err != nil {
		t.Fatalf("a group that does not exist: %v", err)
	}
}

func TestDelete(t *testing.T) {
	e := startAWS(t, nil, core.Simulation{BootDelay: bootDelay, DeleteDelay: bootDelay})
	r := ref("pool0")
	e.apply(t, r, spec(2, "h1", token1))
	e.settle(t, r)
	if err := e.sg.Delete(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	if g, err := e.sg.Get(context.Background(), r); err == nil && (g.Operation == nil || g.Operation.Type != scalegroup.OperationDelete) {
		t.Fatalf("a group being deleted: %+v", g)
	}
	if err := e.sg.Delete(context.Background(), r); err != nil {
		t.Fatalf("Delete while deleting: %v", err)
	}
	e.clk.Step(2 * bootDelay)
	var err error
	for range 20 {
		if _, err = e.sg.Get(context.Background(), r); scalegroup.IsNotFound(err) {
			break
		}
		e.clk.Step(time.Second)
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
	e := startAWS(t, &awsface.AWSFace{VCPUQuota: 4}, defaultSim())
	r := ref("pool0")
	e.apply(t, r, spec(3, "h1", token1))
	e.clk.Step(bootDelay + time.Second)
	var g *scalegroup.Group
	for range 20 {
		if g = e.get(t, r); g.Message != "" {
			break
		}
		e.clk.Step(time.Second)
	}
	if !strings.Contains(g.Message, "vCPU limit") || len(g.Instances) != 2 || !g.Pending() {
		t.Fatalf("group %+v: want the quota in its message", g)
	}
	e.srv.ResetStats()
	e.get(t, r)
	if got := awsRequests(e.srv); got.total() != 2 || got[awsface.OpAWSDescribeScalingActivities] != 1 {
		t.Fatalf("requests of a Get of a stalled group: %v", got)
	}
}

func TestErrors(t *testing.T) {
	e := startAWS(t, nil, defaultSim())

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

	if err := e.srv.SetFaceFaults(awsface.AWSFaceName, &core.Faults{ThrottleRate: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.sg.Get(context.Background(), ref("pool0")); err == nil {
		t.Fatalf("a throttled Get succeeded")
	} else if _, ok := scalegroup.IsThrottled(err); !ok {
		t.Fatalf("a throttled Get: %v", err)
	}
	if err := e.srv.SetFaceFaults(awsface.AWSFaceName, &core.Faults{ErrorRate: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.sg.Get(context.Background(), ref("pool0")); !scalegroup.IsTransient(err) {
		t.Fatalf("a server error: %v", err)
	}
}
