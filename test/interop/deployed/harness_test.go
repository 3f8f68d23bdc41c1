package deployed

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mpool-dev/mpool/config/overlay"
	"github.com/mpool-dev/mpool/internal/kubeenv"
	"github.com/mpool-dev/mpool/internal/manager"
	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/test/integration/itest"
)

// buildMpool builds the mpool binary into dir, once per package run (the
// packages' TestMain setup).
func buildMpool(dir string) (string, error) {
	bin := filepath.Join(dir, "mpool")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/mpool-dev/mpool/cmd/mpool").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("building mpool: %v\n%s", err, out)
	}
	return bin, nil
}

// deployment is what a deploy overlay (config/<mode>) says about running
// the manager: its ServiceAccount and the container of its Deployment.
type deployment struct {
	// Namespace and ServiceAccount are the manager's.
	Namespace, ServiceAccount string
	// Args are the container's arguments ("manager", then its flags) and
	// Env its environment, the Pod's fields resolved as the kubelet would
	// for a Pod in Namespace.
	Args []string
	Env  map[string]string
}

// deployOverlay renders config/<mode> and applies its Namespace,
// ServiceAccount and RBAC (ClusterRoles, Roles and their bindings) as
// rendered; the CRDs and the validating webhook configuration (the
// package's control plane has them, with its own conversion and webhook),
// the Service and the Deployment are left out. It returns
// what the overlay says about running the manager.
func deployOverlay(t *testing.T, mode manager.Mode) deployment {
	t.Helper()
	objs, err := overlay.Render(filepath.Join("..", "..", "..", "config", mode.String()))
	if err != nil {
		t.Fatal(err)
	}
	var apply []*unstructured.Unstructured
	var d deployment
	for _, o := range objs {
		switch o.GetKind() {
		case "Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding":
			apply = append(apply, o)
		case "Deployment":
			var dep appsv1.Deployment
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &dep); err != nil {
				t.Fatal(err)
			}
			c := dep.Spec.Template.Spec.Containers[0]
			d.Namespace, d.ServiceAccount, d.Args = dep.Namespace, dep.Spec.Template.Spec.ServiceAccountName, c.Args
			d.Env = map[string]string{}
			for _, e := range c.Env {
				switch {
				case e.ValueFrom == nil:
					d.Env[e.Name] = e.Value
				case e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.namespace":
					d.Env[e.Name] = dep.Namespace
				default:
					t.Fatalf("config/%s's manager reads %s from %+v: the test does not know how to set it", mode, e.Name, e.ValueFrom)
				}
			}
		}
	}
	if d.ServiceAccount == "" || len(d.Args) == 0 || d.Args[0] != "manager" {
		t.Fatalf("config/%s has no manager Deployment with a ServiceAccount (found %+v)", mode, d)
	}
	if err := overlay.Apply(context.Background(), env.Client, apply); err != nil {
		t.Fatal(err)
	}
	return d
}

// serviceAccountKubeconfig writes a kubeconfig for the package's API
// server that authenticates as the ServiceAccount of d with a token the
// API server issues for it (TokenRequest, an hour), and waits until the
// overlay's RBAC lets it read the pools. It returns the kubeconfig's path
// and a clientset with the same identity.
func serviceAccountKubeconfig(t *testing.T, d deployment) (string, kubernetes.Interface) {
	t.Helper()
	ctx := context.Background()
	admin := kubernetes.NewForConfigOrDie(env.Config)
	tr, err := admin.CoreV1().ServiceAccounts(d.Namespace).CreateToken(ctx, d.ServiceAccount, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("requesting a token for ServiceAccount %s/%s: %v", d.Namespace, d.ServiceAccount, err)
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["management"] = &clientcmdapi.Cluster{Server: env.Config.Host, CertificateAuthorityData: env.CAData}
	cfg.AuthInfos[d.ServiceAccount] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	cfg.Contexts[d.ServiceAccount] = &clientcmdapi.Context{Cluster: "management", AuthInfo: d.ServiceAccount, Namespace: d.Namespace}
	cfg.CurrentContext = d.ServiceAccount
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	rc, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(rc)
	want := "system:serviceaccount:" + d.Namespace + ":" + d.ServiceAccount
	review, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("asking who the kubeconfig's token is: %v", err)
	}
	if got := review.Status.UserInfo.Username; got != want {
		t.Fatalf("the kubeconfig authenticates as %s, want %s", got, want)
	}
	// The RBAC authorizer learns of new roles from a watch.
	testenv.Eventually(t, 30*time.Second, func() error {
		_, err := cs.CoreV1().Secrets(metav1.NamespaceAll).List(ctx, metav1.ListOptions{Limit: 1})
		return err
	})
	return path, cs
}

// replica is one `mpool manager` process.
type replica struct {
	name    string
	proc    *kubeenv.Process
	metrics string // http://127.0.0.1:<port>/metrics
	spy     *deleteSpy
}

// startReplica runs `mpool manager` as d's container does, authenticated
// by kubeconfig, with what a process on loopback needs instead of a Pod
// (see the package comment) and extra flags, its provider reaching the
// cloud through spy; its log goes to dir/<name>.log.
func startReplica(t *testing.T, bin string, d deployment, kubeconfig, dir, name string, spy *deleteSpy, extra ...string) *replica {
	t.Helper()
	metricsPort, err := kubeenv.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	probePort, err := kubeenv.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	args := append(slices.Clone(d.Args),
		"--kubeconfig="+kubeconfig,
		"--leader-election-namespace="+d.Namespace,
		"--metrics-bind-address=127.0.0.1:"+strconv.Itoa(metricsPort),
		"--health-probe-bind-address=127.0.0.1:"+strconv.Itoa(probePort),
		"--conversion-webhook=false",
		"--local-cloud-url="+spy.URL(),
	)
	args = append(args, extra...)
	for k, v := range d.Env {
		t.Setenv(k, v)
	}
	p, err := kubeenv.StartProcess(bin, args, filepath.Join(dir, name+".log"))
	if err != nil {
		t.Fatal(err)
	}
	r := &replica{name: name, proc: p, metrics: "http://127.0.0.1:" + strconv.Itoa(metricsPort) + "/metrics", spy: spy}
	t.Cleanup(func() { _ = p.Stop(20 * time.Second) })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := p.WaitHTTP(ctx, "http://127.0.0.1:"+strconv.Itoa(probePort)+"/readyz", nil, time.Minute); err != nil {
		t.Fatalf("replica %s: %v", name, err)
	}
	return r
}

var leaderMetric = regexp.MustCompile(`(?m)^leader_election_master_status\{name="([^"]+)"\} (\d+)`)

// leads reports whether the replica says, on its metrics endpoint, that it
// holds the Lease named id.
func (r *replica) leads(id string) (bool, error) {
	c := &http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get(r.metrics)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return false, err
	}
	for _, m := range leaderMetric.FindAllStringSubmatch(string(b), -1) {
		if m[1] == id {
			return m[2] == "1", nil
		}
	}
	return false, nil
}

// forbidden returns the lines of the replica's log where the API server
// refused it something (RBAC's "is forbidden").
func (r *replica) forbidden() []string {
	var out []string
	for _, l := range strings.Split(r.proc.Tail(1<<20), "\n") {
		if strings.Contains(strings.ToLower(l), "forbidden") {
			out = append(out, l)
		}
	}
	return out
}

// holder returns the Lease's holder identity, "" when it has none.
func holder(t *testing.T, namespace, name string) string {
	t.Helper()
	lease := &coordinationv1.Lease{}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: name}, lease); err != nil {
		return ""
	}
	return ptr.Deref(lease.Spec.HolderIdentity, "")
}

// deleteSpy is a replica's way to the simulated cloud's local face: a
// reverse proxy that counts, by instance ID, the delete requests the face
// accepted (POST /v1/groups/{name}/deleteInstances), and every request.
type deleteSpy struct {
	srv *httptest.Server

	mu       sync.Mutex
	deletes  map[string]int
	requests int
}

func newDeleteSpy(t *testing.T, target string) *deleteSpy {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	s := &deleteSpy{deletes: map[string]int{}}
	proxy := httputil.NewSingleHostReverseProxy(u)
	proxy.Transport = s
	s.srv = httptest.NewServer(proxy)
	t.Cleanup(s.srv.Close)
	return s
}

// URL is the proxy's URL, for --local-cloud-url.
func (s *deleteSpy) URL() string { return s.srv.URL }

// RoundTrip implements http.RoundTripper.
func (s *deleteSpy) RoundTrip(req *http.Request) (*http.Response, error) {
	s.mu.Lock()
	s.requests++
	s.mu.Unlock()
	ids, isDelete, err := itest.LocalDeletes(req)
	if err != nil {
		return nil, err
	}
	if !isDelete {
		return http.DefaultTransport.RoundTrip(req)
	}
	// A request the replica sent reaches the cloud even if the replica is
	// killed before the answer: what is counted is what the cloud did.
	resp, err := http.DefaultTransport.RoundTrip(req.WithContext(context.WithoutCancel(req.Context())))
	if err == nil && resp.StatusCode < 300 {
		s.mu.Lock()
		for _, id := range ids {
			s.deletes[id]++
		}
		s.mu.Unlock()
	}
	return resp, err
}

// counts returns the delete requests by instance ID and the number of
// requests so far.
func (s *deleteSpy) counts() (map[string]int, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.deletes))
	for k, v := range s.deletes {
		out[k] = v
	}
	return out, s.requests
}
