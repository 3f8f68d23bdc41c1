package aws

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/manager"
	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/face/awsface"
	"github.com/mpool-dev/mpool/test/integration/itest"
)

// TestTokenRotationMakesNoVersion: bootstrap tokens rotate on a long-lived
// pool; at rest that writes nothing to AWS and makes no launch template
// version (CAPA issue #4871: every rotation marked instances out of date);
// no instance is replaced. The next scale-up launches with the current
// user data: at most one new version, and the old instances stay current.
func TestTokenRotationMakesNoVersion(t *testing.T) {
	f, m := start(t, 0, func(o *manager.Options) { o.BootstrapTokenTTL = 40 * time.Second })
	f.ApplySeed()
	f.waitConverged(2, seedVersion)
	before := f.InstanceIDs()
	versions := f.launchTemplateVersions(t)
	f.CheckTokenRotationAtRest(m)
	if v := f.launchTemplateVersions(t); v != versions {
		t.Fatalf("a token rotation at rest made %d launch template versions", v-versions)
	}

	f.Scale(3)
	f.waitConverged(3, seedVersion)
	if v := f.launchTemplateVersions(t); v > versions+1 {
		t.Errorf("a scale-up after a rotation made %d launch template versions, want at most 1", v-versions)
	}
	for _, id := range before {
		if !slices.Contains(f.InstanceIDs(), id) {
			t.Errorf("instance %s was replaced by the scale-up", id)
		}
	}
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

// crashBeforeASGUpdate is the manager's transport to the simulated AWS: the
// first UpdateAutoScalingGroup is not sent; instead crashed is closed, as
// if the manager had died right after creating the launch template
// version (CAPA's FIXME window).
type crashBeforeASGUpdate struct {
	next    http.RoundTripper
	once    sync.Once
	crashed chan struct{}
}

func (c *crashBeforeASGUpdate) RoundTrip(req *http.Request) (*http.Response, error) {
	form, err := queryForm(req)
	if err != nil {
		return nil, err
	}
	if form.Get("Action") == "UpdateAutoScalingGroup" {
		crash := false
		c.once.Do(func() { crash = true; close(c.crashed) })
		if crash {
			return nil, errors.New("the manager died here")
		}
	}
	return c.next.RoundTrip(req)
}

// TestRestartBetweenVersionAndASGUpdate: the manager dies after creating a
// model change's launch template version and before pointing the group at
// it. The restarted manager finishes the change with that version (no
// second one) and nothing is orphaned.
func TestRestartBetweenVersionAndASGUpdate(t *testing.T) {
	cloud := startCloud(t, 0)
	f := newFixture(t, cloud)
	crash := &crashBeforeASGUpdate{next: http.DefaultTransport, crashed: make(chan struct{})}
	m := f.StartManager(func(o *manager.Options) {
		o.CloudHTTPClient = &http.Client{Timeout: 30 * time.Second, Transport: crash}
	})
	f.ApplySeed()
	f.waitConverged(2, seedVersion)
	versions := f.launchTemplateVersions(t)
	before := f.InstanceIDs()
	f.updateAWSPool(func(p *infrav1.AWSMachinePool) { p.Spec.AWSLaunchTemplate.InstanceType = "m5.xlarge" })
	select {
	case <-crash.crashed:
	case <-time.After(converge):
		t.Fatal("the manager never updated the group")
	}
	m.Stop()
	if v := f.launchTemplateVersions(t); v != versions+1 {
		t.Fatalf("before the crash the manager made %d versions, want 1", v-versions)
	}

	f.StartManager()
	f.waitRolled(before, 2, seedVersion)
	if v := f.launchTemplateVersions(t); v != versions+1 {
		t.Errorf("the restarted manager made another launch template version: %d in all for one change", v-versions)
	}
	if lts := f.launchTemplates(); len(lts) != 1 || lts[0] != f.asg() {
		t.Errorf("launch templates %v, want only the pool's %s", lts, f.asg())
	}
	f.deletePoolAndWaitGone()
}

// awsSpy counts the AWS requests of the manager and those answered
// (neither throttled nor failed).
type awsSpy struct {
	next http.RoundTripper

	mu                  sync.Mutex
	requests, succeeded int
}

func (s *awsSpy) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := s.next.RoundTrip(req)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests++
	if err == nil && resp.StatusCode < 500 && resp.StatusCode != http.StatusTooManyRequests && !throttled(resp) {
		s.succeeded++
	}
	return resp, err
}

// throttled reports whether resp is AWS's throttling answer (400 Throttling
// or 503 RequestLimitExceeded), leaving its body readable.
func throttled(resp *http.Response) bool {
	if resp.StatusCode != http.StatusBadRequest && resp.StatusCode != http.StatusServiceUnavailable {
		return false
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body = io.NopCloser(bytes.NewReader(b))
	return bytes.Contains(b, []byte("<Code>Throttling</Code>")) || bytes.Contains(b, []byte("<Code>RequestLimitExceeded</Code>"))
}

// TestFaultyAWS: with 20% of AWS requests throttled or failed, seed 004's
// pool still becomes Running, scales and rolls, with at most twice the
// requests it needed answered.
func TestFaultyAWS(t *testing.T) {
	cloud := startCloud(t, 0)
	if err := cloud.SetFaceFaults(awsface.AWSFaceName, &core.Faults{ThrottleRate: 0.1, ErrorRate: 0.1, RetryAfter: time.Second}); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, cloud)
	spy := &awsSpy{next: http.DefaultTransport}
	f.StartManager(func(o *manager.Options) { o.CloudHTTPClient = &http.Client{Timeout: 30 * time.Second, Transport: spy} })
	// Faults cost retries, and retries back off (up to
	// infrapool.MaxRetryDelay): the waits are longer than the others'.
	wait := func(n int) { testenv.Eventually(t, 2*converge, func() error { return f.Converged(n, seedVersion) }) }
	f.ApplySeed()
	wait(2)
	f.Scale(4)
	wait(4)
	before := f.InstanceIDs()
	f.updateAWSPool(func(p *infrav1.AWSMachinePool) { p.Spec.AWSLaunchTemplate.InstanceType = "m5.xlarge" })
	testenv.Eventually(t, 2*converge, func() error {
		for _, id := range f.InstanceIDs() {
			if slices.Contains(before, id) {
				return fmt.Errorf("instance %s has not been replaced yet", id)
			}
		}
		return f.Converged(4, seedVersion)
	})
	spy.mu.Lock()
	defer spy.mu.Unlock()
	t.Logf("AWS requests to create, scale and roll with 20%% faults: %d, %d answered", spy.requests, spy.succeeded)
	if spy.requests > 2*spy.succeeded {
		t.Errorf("%d requests for %d answered: more than twice", spy.requests, spy.succeeded)
	}
	if spy.requests == spy.succeeded {
		t.Error("no request was faulted: the test proves nothing")
	}
}

// TestAWSCLISeesThePool: an independent client, the AWS CLI, sees the
// world the provider made: the group with its desired capacity and
// instances, and the instances in EC2.
func TestAWSCLISeesThePool(t *testing.T) {
	cli := itest.AWSCLI(t)
	f, _ := start(t, 0)
	f.ApplySeed()
	f.waitConverged(2, seedVersion)
	run := func(args ...string) []byte {
		t.Helper()
		return itest.RunAWSCLI(t, cli, f.Cloud.FaceURL(awsface.AWSFaceName), args...)
	}
	var groups struct {
		AutoScalingGroups []struct {
			AutoScalingGroupName string
			DesiredCapacity      int
			Instances            []struct{ InstanceId, LifecycleState, AvailabilityZone string }
		}
	}
	if err := json.Unmarshal(run("autoscaling", "describe-auto-scaling-groups", "--auto-scaling-group-names", f.asg()), &groups); err != nil {
		t.Fatal(err)
	}
	if len(groups.AutoScalingGroups) != 1 {
		t.Fatalf("the CLI sees %d groups named %s", len(groups.AutoScalingGroups), f.asg())
	}
	g := groups.AutoScalingGroups[0]
	var ids []string
	for _, in := range g.Instances {
		if in.LifecycleState != "InService" || in.AvailabilityZone != "us-east-1a" {
			t.Errorf("instance %s is %s in %s", in.InstanceId, in.LifecycleState, in.AvailabilityZone)
		}
		ids = append(ids, in.InstanceId)
	}
	if g.DesiredCapacity != 2 || !slices.Equal(sorted(ids), sorted(f.InstanceIDs())) {
		t.Errorf("the CLI sees desired %d and instances %v; the cloud has %v", g.DesiredCapacity, ids, f.InstanceIDs())
	}
	var reservations struct {
		Reservations []struct {
			Instances []struct {
				InstanceId, PrivateDnsName string
				State                      struct{ Name string }
			}
		}
	}
	if err := json.Unmarshal(run(append([]string{"ec2", "describe-instances", "--instance-ids"}, ids...)...), &reservations); err != nil {
		t.Fatal(err)
	}
	nodes := map[string]bool{}
	for _, n := range f.PoolNodes() {
		nodes[n.Name] = true
	}
	seen := 0
	for _, r := range reservations.Reservations {
		for _, in := range r.Instances {
			seen++
			if in.State.Name != "running" || !nodes[in.PrivateDnsName] {
				t.Errorf("EC2 instance %s: state %s, private DNS %s (Nodes %v)", in.InstanceId, in.State.Name, in.PrivateDnsName, nodes)
			}
		}
	}
	if seen != 2 {
		t.Errorf("describe-instances shows %d instances, want 2", seen)
	}
}
