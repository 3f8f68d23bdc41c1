package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	clusterv1beta1 "sigs.k8s.io/cluster-api/api/core/v1beta1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/mpool-dev/mpool/config/crd"
	"github.com/mpool-dev/mpool/examples"
	mpoolscheme "github.com/mpool-dev/mpool/internal/scheme"
	"github.com/mpool-dev/mpool/internal/testenv"
)

var (
	buildOnce sync.Once
	binDir    string
	binPath   string
	buildErr  error
)

func TestMain(m *testing.M) {
	ctrl.SetLogger(logr.Discard())
	code := m.Run()
	if binDir != "" {
		_ = os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// buildMpool compiles ./cmd/mpool once per test run.
func buildMpool(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		if binDir, buildErr = os.MkdirTemp("", "mpool-e2e-"); buildErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "mpool")
		out, err := exec.Command("go", "build", "-o", binPath, "github.com/mpool-dev/mpool/cmd/mpool").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("building mpool: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// upProcess is a running `mpool up`.
type upProcess struct {
	cmd        *exec.Cmd
	lines      chan string
	output     *strings.Builder
	kubeconfig string
}

var readyLine = regexp.MustCompile(`ready.*export KUBECONFIG=(\S+)`)

// startUp runs `mpool up` and waits for its ready line.
func startUp(t testing.TB, bin string, args ...string) (*upProcess, time.Duration) {
	t.Helper()
	start := time.Now()
	cmd := exec.Command(bin, append([]string{"up"}, args...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting mpool up: %v", err)
	}
	p := &upProcess{cmd: cmd, lines: make(chan string, 1024), output: &strings.Builder{}}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
	}()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	deadline := time.After(15 * time.Minute) // a cold machine builds kube-apiserver first
	for {
		select {
		case line, ok := <-p.lines:
			if !ok {
				t.Fatalf("mpool up exited before it was ready:\n%s", p.output)
			}
			fmt.Fprintln(p.output, line)
			if m := readyLine.FindStringSubmatch(line); m != nil {
				p.kubeconfig = m[1]
				return p, time.Since(start)
			}
		case <-deadline:
			t.Fatalf("mpool up not ready after 15 minutes:\n%s", p.output)
		}
	}
}

// waitLine reads output until a line matches re, failing t after timeout.
func (p *upProcess) waitLine(t testing.TB, re *regexp.Regexp, timeout time.Duration) string {
	t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case line, ok := <-p.lines:
			if !ok {
				t.Fatalf("mpool up exited while waiting for %q:\n%s", re, p.output)
			}
			fmt.Fprintln(p.output, line)
			if re.MatchString(line) {
				return line
			}
		case <-deadline:
			t.Fatalf("no line matching %q within %s:\n%s", re, timeout, p.output)
		}
	}
}

// drain keeps reading output so the child never blocks on a full pipe.
func (p *upProcess) drain() {
	go func() {
		for l := range p.lines {
			fmt.Fprintln(io.Discard, l)
		}
	}()
}

// stop sends SIGINT and waits for a clean exit.
func (p *upProcess) stop(t testing.TB) {
	t.Helper()
	p.drain()
	if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("mpool up did not exit cleanly on SIGINT: %v\n%s", err, p.output)
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("mpool up did not stop within 60s of SIGINT")
	}
}

func (p *upProcess) client(t testing.TB) client.Client {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", p.kubeconfig)
	if err != nil {
		t.Fatalf("loading %s: %v", p.kubeconfig, err)
	}
	s, err := mpoolscheme.New()
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// applyExamples creates every object in examples/seeds/*.yaml (the seed
// manifests with their ${VARS} filled) in namespace ns.
func applyExamples(t *testing.T, c client.Client, ns string) {
	t.Helper()
	files, err := filepath.Glob("../../examples/seeds/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no example manifests found: %v", err)
	}
	applyManifests(t, c, ns, files...)
}

// applyManifests creates every object of the manifest files (their
// ${VARS} filled, examples.Objects) in namespace ns.
func applyManifests(t *testing.T, c client.Client, ns string, files ...string) {
	t.Helper()
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		objs, err := examples.Objects(b, ns)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, u := range objs {
			if err := c.Create(context.Background(), u); err != nil {
				t.Fatalf("applying %s %s from %s: %v", u.GetKind(), u.GetName(), f, err)
			}
		}
	}
}

// TestUpKeepsObjectsAcrossRestarts is the README's run command end to end:
// `mpool up` reaches ready, serves the MachinePool API, stops cleanly on
// SIGINT, and a second start on the same --data-dir finds the objects again.
func TestUpKeepsObjectsAcrossRestarts(t *testing.T) {
	bin := buildMpool(t)
	dataDir := t.TempDir()

	up, took := startUp(t, bin, "--data-dir", dataDir)
	t.Logf("first start ready in %s", took)
	// The sample pool comes to life: simulated VMs boot, read their
	// cloud-init, join through the bootstrap token and become Ready Nodes.
	sampleStart := time.Now()
	up.waitLine(t, regexp.MustCompile(`sample pool default/local-mp-0: phase Running, 3/3 instances, 3 Ready nodes`), 5*time.Minute)
	up.waitLine(t, regexp.MustCompile(`mpool describe machinepool local-mp-0`), 10*time.Second)
	t.Logf("sample pool Running %s after ready", time.Since(sampleStart).Round(100*time.Millisecond))
	checkSampleDescribed(t, bin, filepath.Join(dataDir, "kubeconfig"))
	c := up.client(t)
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "e2e"}}
	if err := c.Create(ctx, ns); err != nil {
		t.Fatalf("creating namespace: %v", err)
	}
	mp := &clusterv1.MachinePool{
		ObjectMeta: metav1.ObjectMeta{Namespace: "e2e", Name: "pool"},
		Spec: clusterv1.MachinePoolSpec{
			ClusterName: "c1",
			Replicas:    ptr.To[int32](2),
			Template: clusterv1.MachineTemplateSpec{Spec: clusterv1.MachineSpec{
				ClusterName:       "c1",
				Bootstrap:         clusterv1.Bootstrap{DataSecretName: ptr.To("")},
				InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "LocalMachinePool", Name: "pool"},
				Version:           "v1.37.1",
			}},
		},
	}
	if err := c.Create(ctx, mp); err != nil {
		t.Fatalf("creating a MachinePool: %v", err)
	}
	applyExamples(t, c, "e2e")
	// `kubectl scale machinepool capz-mp-0 --replicas 3` goes through /scale.
	scale := &autoscalingv1.Scale{Spec: autoscalingv1.ScaleSpec{Replicas: 3}}
	azurePool := &clusterv1.MachinePool{ObjectMeta: metav1.ObjectMeta{Namespace: "e2e", Name: "capz-mp-0"}}
	if err := c.SubResource("scale").Update(ctx, azurePool, client.WithSubResourceBody(scale)); err != nil {
		t.Fatalf("scaling through /scale: %v", err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(azurePool), azurePool); err != nil || ptr.Deref(azurePool.Spec.Replicas, 0) != 3 {
		t.Fatalf("after scaling to 3: replicas=%v err=%v", azurePool.Spec.Replicas, err)
	}
	up.stop(t)

	up2, took := startUp(t, bin, "--data-dir", dataDir)
	t.Logf("warm restart ready in %s", took)
	got := &clusterv1.MachinePool{}
	if err := up2.client(t).Get(ctx, client.ObjectKeyFromObject(mp), got); err != nil {
		t.Fatalf("the MachinePool did not survive a restart: %v", err)
	}
	if ptr.Deref(got.Spec.Replicas, 0) != 2 {
		t.Errorf("replicas after restart = %v, want 2", got.Spec.Replicas)
	}
	// The restarted control plane serves conversion on a new port: a v1beta1
	// read (what the seeds' users do) goes through the re-pointed webhook.
	v1 := &clusterv1beta1.MachinePool{}
	if err := up2.client(t).Get(ctx, client.ObjectKeyFromObject(azurePool), v1); err != nil {
		t.Fatalf("reading MachinePool capz-mp-0 as v1beta1 after a restart: %v", err)
	}
	if ptr.Deref(v1.Spec.Replicas, 0) != 3 {
		t.Errorf("v1beta1 replicas after restart = %v, want 3", v1.Spec.Replicas)
	}

	// A second `mpool up` on the same data directory is refused clearly.
	out, err := exec.Command(bin, "up", "--data-dir", dataDir).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "in use by another mpool process") {
		t.Errorf("a second mpool up on the same data dir: err=%v, output:\n%s", err, out)
	}
	up2.stop(t)

	if _, err := os.Stat(filepath.Join(dataDir, "kubeconfig")); err != nil {
		t.Errorf("kubeconfig not written: %v", err)
	}
}

// TestUpJudgesFlexiblePoolsRightAfterRestart: every start of `mpool up` serves
// the validating webhook of internal/admission/flexibleversion on a new port
// and points its ValidatingWebhookConfiguration there before it says it is
// ready: a MachinePool written at once is admitted, one below v1.26 over a
// Flexible AzureMachinePool is refused by this start's webhook, and the
// manager removes the two admission policies that judged it before (a data
// directory of an earlier release holds them). Three restarts.
func TestUpJudgesFlexiblePoolsRightAfterRestart(t *testing.T) {
	bin := buildMpool(t)
	dataDir := t.TempDir()
	ctx := context.Background()

	up, _ := startUp(t, bin, "--empty", "--data-dir", dataDir)
	c := up.client(t)
	amp := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(`
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: AzureMachinePool
metadata: {namespace: default, name: flex}
spec:
  location: westus2
  orchestrationMode: Flexible
  template: {vmSize: Standard_D2s_v3, osDisk: {osType: Linux, diskSizeGB: 30}, sshPublicKey: ""}
`), &amp.Object); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, amp); err != nil {
		t.Fatalf("creating a Flexible AzureMachinePool that no MachinePool names: %v", err)
	}
	// What an earlier release installed.
	retired := crd.RetiredPolicies[0]
	if err := c.Create(ctx, &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: retired},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{RuleWithOperations: admissionregistrationv1.RuleWithOperations{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule:       admissionregistrationv1.Rule{APIGroups: []string{"cluster.x-k8s.io"}, APIVersions: []string{"*"}, Resources: []string{"machinepools"}},
			}}}},
			Validations: []admissionregistrationv1.Validation{{Expression: "true"}},
		},
	}); err != nil {
		t.Fatal(err)
	}
	up.stop(t)

	pool := func(name, infra, version string) *clusterv1.MachinePool {
		return &clusterv1.MachinePool{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
			Spec: clusterv1.MachinePoolSpec{
				ClusterName: "c1",
				Template: clusterv1.MachineTemplateSpec{Spec: clusterv1.MachineSpec{
					ClusterName:       "c1",
					Bootstrap:         clusterv1.Bootstrap{DataSecretName: ptr.To("")},
					InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "AzureMachinePool", Name: infra},
					Version:           version,
				}},
			},
		}
	}
	for i := range 3 {
		up, took := startUp(t, bin, "--empty", "--data-dir", dataDir)
		c := up.client(t)
		err := c.Create(ctx, pool(fmt.Sprintf("restart-%d", i), "pool", "v1.37.1"), client.DryRunAll)
		t.Logf("restart %d: ready in %s, a MachinePool written at once: %v", i+1, took.Round(100*time.Millisecond), err)
		if err != nil {
			t.Errorf("restart %d: a MachinePool written when mpool up was ready was refused: %v", i+1, err)
		}
		// The API server loads the re-pointed configuration from an
		// informer: a write may reach the previous start's closed port
		// (admitted, failurePolicy Ignore) for a moment.
		low := pool(fmt.Sprintf("low-%d", i), "flex", "v1.25.0")
		deadline := time.Now().Add(30 * time.Second)
		for err = c.Create(ctx, low, client.DryRunAll); err == nil && time.Now().Before(deadline); err = c.Create(ctx, low, client.DryRunAll) {
			time.Sleep(100 * time.Millisecond)
		}
		if err == nil || !strings.Contains(err.Error(), "is below v1.26, which AzureMachinePool flex needs for orchestrationMode Flexible") {
			t.Errorf("restart %d: a MachinePool v1.25.0 over a Flexible AzureMachinePool: %v, want refused by the webhook", i+1, err)
		}
		deadline = time.Now().Add(time.Minute)
		for c.Get(ctx, client.ObjectKey{Name: retired}, &admissionregistrationv1.ValidatingAdmissionPolicy{}) == nil {
			if time.Now().After(deadline) {
				t.Fatalf("restart %d: the manager did not remove the retired policy %s within a minute", i+1, retired)
			}
			time.Sleep(100 * time.Millisecond)
		}
		up.stop(t)
	}
}

// checkSampleDescribed runs `mpool describe machinepool local-mp-0` and
// `mpool rollout plan local-mp-0` against the running sample pool, as the
// README tells a new user to, and checks what the engine built is shown: the
// tree down to three Running, up-to-date instances with their Ready Nodes,
// plain (no colour) since the output is not a terminal, and a plan with
// nothing to replace.
func checkSampleDescribed(t *testing.T, bin, kubeconfig string) {
	t.Helper()
	run := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(bin, append(args, "--kubeconfig", kubeconfig)...).CombinedOutput()
		if err != nil {
			t.Fatalf("mpool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	// The pool's status settles a moment after the Running line: poll.
	var out string
	instance := regexp.MustCompile(`(?m)^\s*[├└]─ local-mp-0-\S+\s+Running\s+\S+\s+up to date\s+node \S+\s+Ready for `)
	testenv.Eventually(t, time.Minute, func() error {
		out = run("describe", "machinepool", "local-mp-0")
		if n := len(instance.FindAllString(out, -1)); n != 3 {
			return fmt.Errorf("%d Running, up-to-date instances with Ready Nodes in:\n%s", n, out)
		}
		return nil
	})
	for _, want := range []string{"MachinePool default/local-mp-0  Running", "Bootstrap       KubeadmConfig/", "Infrastructure  LocalMachinePool/"} {
		if !strings.Contains(out, want) {
			t.Errorf("describe lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\x1b[") {
		t.Errorf("describe wrote colour to a pipe:\n%q", out)
	}
	plan := run("rollout", "plan", "local-mp-0")
	for _, want := range []string{"up to date   3 of 3", "nothing to do"} {
		if !strings.Contains(plan, want) {
			t.Errorf("rollout plan lacks %q:\n%s", want, plan)
		}
	}
}

// TestUpRunsTheAzureExample is the Azure walk-through of the README on
// `mpool up`: examples/azure/cluster.yaml and seed 000's example applied
// unchanged become a Running pool of simulated VMSS VMs (Azure face, real
// SDK, the example's AzureClusterIdentity), joined to the API server `mpool
// up` makes the Cluster's workload cluster, and the operator CLI describes
// and plans it as it does local pools. The same `mpool up` runs with
// --sample aws: its sample, the aws machinepool flavor of `mpool generate
// cluster` (an AWSCluster and an Auto Scaling Group in the simulated AWS),
// becomes Running too and `up` names it in its "Try next" lines.
func TestUpRunsTheAzureExample(t *testing.T) {
	bin := buildMpool(t)
	up, _ := startUp(t, bin, "--data-dir", t.TempDir(), "--sample", "aws")
	c := up.client(t)
	ctx := context.Background()
	applyManifests(t, c, "default", "../../examples/azure/cluster.yaml", "../../examples/seeds/azure-machinepool.yaml")
	up.waitLine(t, regexp.MustCompile(`sample pool default/aws-mp-0: phase Running, 3/3 instances, 3 Ready nodes`), 5*time.Minute)
	up.waitLine(t, regexp.MustCompile(`describe machinepool aws-mp-0 `), 10*time.Second)
	up.drain()
	mp := &clusterv1.MachinePool{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "capz-mp-0"}}
	testenv.Eventually(t, 5*time.Minute, func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(mp), mp); err != nil {
			return err
		}
		if mp.Status.Phase != string(clusterv1.MachinePoolPhaseRunning) || ptr.Deref(mp.Status.ReadyReplicas, -1) != 2 {
			return fmt.Errorf("MachinePool capz-mp-0 %s, %v ready", mp.Status.Phase, mp.Status.ReadyReplicas)
		}
		return nil
	})
	nodes := &corev1.NodeList{}
	if err := c.List(ctx, nodes); err != nil {
		t.Fatal(err)
	}
	azure := 0
	for _, n := range nodes.Items {
		if strings.HasPrefix(n.Spec.ProviderID, "azure:///subscriptions/") && strings.HasPrefix(n.Name, "capz-mp-0") {
			azure++
		}
	}
	if azure != 2 {
		t.Errorf("%d Nodes with Azure providerIDs named after the pool, want 2", azure)
	}
	kubeconfig := up.kubeconfig
	testenv.Eventually(t, time.Minute, func() error {
		out, err := exec.Command(bin, "describe", "machinepool", "capz-mp-0", "--kubeconfig", kubeconfig).CombinedOutput()
		if err != nil {
			return fmt.Errorf("mpool describe: %v\n%s", err, out)
		}
		for _, want := range []string{"Infrastructure  AzureMachinePool/capz-mp-0", "up to date"} {
			if !strings.Contains(string(out), want) {
				return fmt.Errorf("describe lacks %q:\n%s", want, out)
			}
		}
		return nil
	})
	out, err := exec.Command(bin, "rollout", "plan", "capz-mp-0", "--kubeconfig", kubeconfig).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "up to date   2 of 2") {
		t.Errorf("mpool rollout plan capz-mp-0: %v\n%s", err, out)
	}
	up.stop(t)
}
