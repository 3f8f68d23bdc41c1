package kubeadmconfig

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/yaml"

	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/mpool-dev/mpool/internal/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	// KUBEADMCONFIG_TEST_LOG=1 shows the controllers' logs.
	if os.Getenv("KUBEADMCONFIG_TEST_LOG") != "" {
		ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.UseDevMode(true)))
	} else {
		ctrl.SetLogger(logr.Discard())
	}
	os.Exit(testenv.Run(m, &env))
}

const (
	pollTimeout = 30 * time.Second
	clusterName = "capa"
)

// kubeconfigClients is the test's WorkloadClients: like internal/workload it
// builds a client from the Cluster's "<cluster>-kubeconfig" Secret, and fails
// when that Secret is missing. The workload cluster is the test API server.
type kubeconfigClients struct{}

func (kubeconfigClients) Client(ctx context.Context, cluster types.NamespacedName) (client.Client, error) {
	s := &corev1.Secret{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: cluster.Namespace, Name: cluster.Name + "-kubeconfig"}, s); err != nil {
		return nil, fmt.Errorf("reading the kubeconfig of Cluster %s: %w", cluster, err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(s.Data["value"])
	if err != nil {
		return nil, err
	}
	return client.New(cfg, client.Options{Scheme: env.Scheme})
}

// startController runs the reconciler in a real manager whose cache sees only
// ns, with a fake clock starting now, until the test ends.
func startController(t *testing.T, ns string, ttl time.Duration) *clocktesting.FakeClock {
	t.Helper()
	clk := clocktesting.NewFakeClock(time.Now())
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme:                 env.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Cache:                  cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	r := &Reconciler{Workload: kubeconfigClients{}, Clock: clk, TokenTTL: ttl}
	ctx, cancel := context.WithCancel(context.Background())
	if err := r.SetupWithManager(ctx, mgr, controller.Options{SkipNameValidation: ptr.To(true)}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
	return clk
}

// apiServerEndpoint returns the test API server's host and port.
func apiServerEndpoint(t *testing.T) clusterv1.APIEndpoint {
	t.Helper()
	u, err := url.Parse(env.Config.Host)
	if err != nil {
		t.Fatal(err)
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		t.Fatal(err)
	}
	return clusterv1.APIEndpoint{Host: u.Hostname(), Port: int32(port)}
}

// fixture creates what a pool's bootstrap needs in ns: a Cluster whose
// control plane endpoint is the test API server, its CA and kubeconfig
// Secrets (unless left out), a KubeadmConfig from a seed manifest and a
// MachinePool that owns it.
type fixture struct {
	ns       string
	noCA     bool
	noEP     bool
	seed     string
	version  string
	mutate   func(*bootstrapv1.KubeadmConfig)
	cluster  *clusterv1.Cluster
	pool     *clusterv1.MachinePool
	config   *bootstrapv1.KubeadmConfig
	poolName string
}

func (f *fixture) create(t *testing.T) {
	t.Helper()
	if f.seed == "" {
		f.seed = "seed004-aws.kubeadmconfig.yaml"
	}
	if f.version == "" {
		f.version = "v1.16.8"
	}
	// v1beta2 requires a non-empty spec; paused: false is the default.
	f.cluster = &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: clusterName, Namespace: f.ns}, Spec: clusterv1.ClusterSpec{Paused: ptr.To(false)}}
	if !f.noEP {
		f.cluster.Spec.ControlPlaneEndpoint = apiServerEndpoint(t)
	}
	mustCreate(t, f.cluster)
	if !f.noCA {
		createCA(t, f.ns)
	}
	mustCreate(t, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: clusterName + "-kubeconfig", Namespace: f.ns},
		Data:       map[string][]byte{"value": env.Kubeconfig},
	})

	b, err := os.ReadFile(filepath.Join("..", "..", "bootstrap", "testdata", f.seed))
	if err != nil {
		t.Fatal(err)
	}
	cfg := &bootstrapv1.KubeadmConfig{}
	if err := yaml.UnmarshalStrict(b, cfg); err != nil {
		t.Fatal(err)
	}
	cfg.Namespace = f.ns
	if f.mutate != nil {
		f.mutate(cfg)
	}
	f.poolName = cfg.Name
	f.pool = &clusterv1.MachinePool{
		ObjectMeta: metav1.ObjectMeta{Name: cfg.Name, Namespace: f.ns},
		Spec: clusterv1.MachinePoolSpec{
			ClusterName: clusterName,
			Replicas:    ptr.To[int32](1),
			Template: clusterv1.MachineTemplateSpec{Spec: clusterv1.MachineSpec{
				ClusterName: clusterName,
				Bootstrap: clusterv1.Bootstrap{ConfigRef: clusterv1.ContractVersionedObjectReference{
					APIGroup: bootstrapv1.GroupVersion.Group, Kind: "KubeadmConfig", Name: cfg.Name,
				}},
				InfrastructureRef: clusterv1.ContractVersionedObjectReference{
					APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "AWSMachinePool", Name: cfg.Name,
				},
				Version: f.version,
			}},
		},
	}
	mustCreate(t, f.pool)
	// The MachinePool controller (issue 3) makes the pool own its config.
	cfg.OwnerReferences = []metav1.OwnerReference{{
		APIVersion: clusterv1.GroupVersion.String(), Kind: "MachinePool", Name: f.pool.Name, UID: f.pool.UID,
	}}
	mustCreate(t, cfg)
	f.config = cfg
}

func createCA(t *testing.T, ns string) {
	t.Helper()
	mustCreate(t, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: clusterName + "-ca", Namespace: ns},
		Data:       map[string][]byte{"tls.crt": env.CAData},
	})
}

func mustCreate(t *testing.T, obj client.Object) {
	t.Helper()
	if err := env.Client.Create(context.Background(), obj); err != nil {
		t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
	}
}

// poke changes an annotation of the config so that the controller
// reconciles it now, as a requeue would after the fake clock's time passed.
func poke(t *testing.T, key client.ObjectKey) {
	t.Helper()
	cfg := &bootstrapv1.KubeadmConfig{}
	if err := env.Client.Get(context.Background(), key, cfg); err != nil {
		t.Fatal(err)
	}
	before := cfg.DeepCopy()
	if cfg.Annotations == nil {
		cfg.Annotations = map[string]string{}
	}
	cfg.Annotations["test.mpool.dev/poke"] = strconv.FormatInt(time.Now().UnixNano(), 10)
	if err := env.Client.Patch(context.Background(), cfg, client.MergeFrom(before)); err != nil {
		t.Fatal(err)
	}
}

// dataSecret waits for the config's data Secret and returns it.
func dataSecret(t *testing.T, key client.ObjectKey) *corev1.Secret {
	t.Helper()
	s := &corev1.Secret{}
	testenv.Eventually(t, pollTimeout, func() error {
		return env.Client.Get(context.Background(), key, s)
	})
	return s
}

// getToken returns the workload token Secret with the given name.
func getToken(t *testing.T, name string) (*corev1.Secret, error) {
	t.Helper()
	s := &corev1.Secret{}
	err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: metav1.NamespaceSystem, Name: name}, s)
	return s, err
}

// whoAmI asks the API server who the bearer of token is.
func whoAmI(token string) (*authenticationv1.UserInfo, error) {
	cfg := &rest.Config{
		Host:            env.Config.Host,
		BearerToken:     token,
		TLSClientConfig: rest.TLSClientConfig{CAData: env.CAData},
		Timeout:         10 * time.Second,
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	r, err := cs.AuthenticationV1().SelfSubjectReviews().Create(context.Background(), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return nil, err
	}
	return &r.Status.UserInfo, nil
}

// expectTokenWorks waits until token authenticates as a pool bootstrap token.
func expectTokenWorks(t *testing.T, token string) {
	t.Helper()
	testenv.Eventually(t, pollTimeout, func() error {
		u, err := whoAmI(token)
		if err != nil {
			return err
		}
		wantUser := "system:bootstrap:" + token[:6]
		if u.Username != wantUser {
			return fmt.Errorf("authenticated as %q, want %q", u.Username, wantUser)
		}
		for _, g := range u.Groups {
			if g == NodeTokenGroup {
				return nil
			}
		}
		return fmt.Errorf("groups %v lack %s", u.Groups, NodeTokenGroup)
	})
}

// expectTokenRefused waits until the API server refuses token with 401.
func expectTokenRefused(t *testing.T, token string) {
	t.Helper()
	testenv.Eventually(t, pollTimeout, func() error {
		_, err := whoAmI(token)
		if apierrors.IsUnauthorized(err) {
			return nil
		}
		return fmt.Errorf("want 401 Unauthorized, got %v", err)
	})
}

var errNotYet = errors.New("not yet")
