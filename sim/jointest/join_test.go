package jointest

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	certutil "k8s.io/client-go/util/cert"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	bootstraputil "k8s.io/cluster-bootstrap/token/util"

	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/sim/cloudinit"
	"github.com/mpool-dev/mpool/sim/cloudsim"
	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/nodeagent"
	"github.com/mpool-dev/mpool/sim/server"
)

var env *testenv.Env

func TestMain(m *testing.M) { os.Exit(testenv.Run(m, &env)) }

// createToken creates a bootstrap token Secret as kubeadm (and mpool's
// bootstrap controller) does, expiring at expires.
func createToken(t testing.TB, expires time.Time) string {
	t.Helper()
	tok, err := bootstraputil.GenerateBootstrapToken()
	if err != nil {
		t.Fatal(err)
	}
	id, secret, _ := strings.Cut(tok, ".")
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: bootstraputil.BootstrapTokenSecretName(id), Namespace: metav1.NamespaceSystem},
		Type:       bootstrapapi.SecretTypeBootstrapToken,
		StringData: map[string]string{
			bootstrapapi.BootstrapTokenIDKey:               id,
			bootstrapapi.BootstrapTokenSecretKey:           secret,
			bootstrapapi.BootstrapTokenUsageAuthentication: "true",
			bootstrapapi.BootstrapTokenUsageSigningKey:     "true",
			bootstrapapi.BootstrapTokenExtraGroupsKey:      "system:bootstrappers:kubeadm:default-node-token",
			bootstrapapi.BootstrapTokenExpirationKey:       expires.UTC().Format(time.RFC3339),
		},
	}
	if err := env.Client.Create(context.Background(), s); err != nil {
		t.Fatalf("creating the bootstrap token secret: %v", err)
	}
	return tok
}

func caHash(t testing.TB) string {
	t.Helper()
	certs, err := certutil.ParseCertsPEM(env.CAData)
	if err != nil {
		t.Fatal(err)
	}
	return nodeagent.Pin(certs[0])
}

// otherCAHash is the pin of a CA that did not sign the API server's certificate.
func otherCAHash(t testing.TB) string {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "other"}, NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := x509.ParseCertificate(der)
	return nodeagent.Pin(c)
}

func endpoint() string { return strings.TrimPrefix(env.Config.Host, "https://") }

// cloudInit renders bootstrap data shaped like Cluster API's kubeadm
// bootstrap output.
func cloudInit(apiVersion, token, hash string) []byte {
	return cloudinit.WriteJoin(cloudinit.JoinConfig{
		APIVersion:        apiVersion,
		APIServerEndpoint: endpoint(),
		DiscoveryToken:    token,
		CACertHashes:      []string{hash},
		Taints:            []corev1.Taint{{Key: "dedicated", Value: "sim", Effect: corev1.TaintEffectNoSchedule}},
		NodeLabels:        map[string]string{"pool": "blue", "tier": "web"},
	}, true)
}

// startCloud starts the simulated cloud (cloudOptions) with few, quick
// join retries.
func startCloud(t *testing.T) *server.Server {
	t.Helper()
	opts := cloudOptions(t)
	opts.NodeAgent.AuthAttempts = 3
	opts.NodeAgent.RetryBackoff = 200 * time.Millisecond
	return startCloudWith(t, opts)
}

// cloudOptions are the options of a simulated cloud whose instances boot
// in 100ms and join the test API server, heartbeating every second.
func cloudOptions(t *testing.T) core.Options {
	opts := core.Options{
		DataDir:           t.TempDir(),
		DefaultSimulation: &core.Simulation{BootDelay: 100 * time.Millisecond},
	}
	opts.NodeAgent.Credentials = append(opts.NodeAgent.Credentials, env.Config)
	opts.NodeAgent.HeartbeatInterval = time.Second
	return opts
}

// startCloudWith starts the simulated cloud with opts; it is stopped with
// the test.
func startCloudWith(t *testing.T, opts core.Options) *server.Server {
	t.Helper()
	srv, err := cloudsim.Start(context.Background(), opts)
	if err != nil {
		t.Fatalf("starting the simulated cloud: %v", err)
	}
	t.Cleanup(func() { _ = srv.Stop() })
	return srv
}

func clientset(t *testing.T) kubernetes.Interface {
	t.Helper()
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func nodeReady(n *corev1.Node) corev1.ConditionStatus {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status
		}
	}
	return ""
}

func TestInstancesJoinAsReadyNodes(t *testing.T) {
	ctx := context.Background()
	cs := clientset(t)
	srv := startCloud(t)
	token := createToken(t, time.Now().Add(time.Hour))

	for _, v := range []string{"kubeadm.k8s.io/v1beta3", "kubeadm.k8s.io/v1beta4"} {
		group := "join-" + strings.TrimPrefix(v, "kubeadm.k8s.io/")
		t.Run(v, func(t *testing.T) {
			_, err := srv.Cloud().ApplyGroup(group, core.GroupSpec{
				Capacity:  2,
				ModelHash: "h1",
				Model: core.Model{
					InstanceType: "sim.large",
					Zones:        []string{"zone-a", "zone-b"},
					CustomData:   cloudInit(v, token, caHash(t)),
					Extra:        map[string]string{core.ExtraVersion: "v1.31.2", core.ExtraCPU: "4"},
				},
			})
			if err != nil {
				t.Fatalf("ApplyGroup: %v", err)
			}
			g := waitJoin(t, core.JoinJoined, func() (*core.Group, error) { return srv.Cloud().GetGroup(group) })
			zones := map[string]bool{}
			for _, in := range g.Instances {
				n, err := cs.CoreV1().Nodes().Get(ctx, in.Hostname, metav1.GetOptions{})
				if err != nil {
					t.Fatalf("node of instance %s: %v", in.ID, err)
				}
				want := map[string]string{
					"pool": "blue", "tier": "web",
					corev1.LabelTopologyZone:       in.Zone,
					corev1.LabelInstanceTypeStable: "sim.large",
					corev1.LabelHostname:           in.Hostname,
				}
				for k, v := range want {
					if n.Labels[k] != v {
						t.Errorf("node %s label %s = %q, want %q", n.Name, k, n.Labels[k], v)
					}
				}
				zones[n.Labels[corev1.LabelTopologyZone]] = true
				if n.Spec.ProviderID != "local:///"+group+"/"+in.ID {
					t.Errorf("node %s providerID = %q, want local:///%s/%s", n.Name, n.Spec.ProviderID, group, in.ID)
				}
				if len(n.Spec.Taints) != 1 || n.Spec.Taints[0].Key != "dedicated" || n.Spec.Taints[0].Effect != corev1.TaintEffectNoSchedule {
					t.Errorf("node %s taints = %v, want dedicated=sim:NoSchedule", n.Name, n.Spec.Taints)
				}
				if nodeReady(n) != corev1.ConditionTrue || n.Status.NodeInfo.KubeletVersion != "v1.31.2" || n.Status.Capacity.Cpu().String() != "4" {
					t.Errorf("node %s: ready %s, kubelet %s, cpu %s; want True, v1.31.2, 4", n.Name, nodeReady(n), n.Status.NodeInfo.KubeletVersion, n.Status.Capacity.Cpu())
				}
				lease, err := cs.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, n.Name, metav1.GetOptions{})
				if err != nil {
					t.Fatalf("lease of node %s: %v", n.Name, err)
				}
				first := lease.Spec.RenewTime.Time
				testenv.Eventually(t, 10*time.Second, func() error {
					l, err := cs.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, n.Name, metav1.GetOptions{})
					if err != nil {
						return err
					}
					if !l.Spec.RenewTime.After(first) {
						return fmt.Errorf("lease of %s not renewed since %s", n.Name, first)
					}
					return nil
				})
			}
			if len(zones) != 2 {
				t.Errorf("nodes are in zones %v, want both zones", zones)
			}
		})
	}

	t.Run("deleting an instance stops its heartbeat and marks its Node NotReady", func(t *testing.T) {
		g, err := srv.Cloud().GetGroup("join-v1beta3")
		if err != nil {
			t.Fatal(err)
		}
		victim := g.Instances[0]
		if _, err := srv.Cloud().DeleteInstances("join-v1beta3", []string{victim.ID}); err != nil {
			t.Fatal(err)
		}
		testenv.Eventually(t, 30*time.Second, func() error {
			n, err := cs.CoreV1().Nodes().Get(ctx, victim.NodeName, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if s := nodeReady(n); s == corev1.ConditionTrue {
				return fmt.Errorf("node %s still Ready", n.Name)
			}
			return nil
		})
		l, err := cs.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, victim.NodeName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		stopped := l.Spec.RenewTime.Time
		// For more than two heartbeat intervals nothing may renew it.
		for end := time.Now().Add(2500 * time.Millisecond); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
			l, err = cs.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, victim.NodeName, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if l.Spec.RenewTime.After(stopped) {
				t.Fatalf("the lease of deleted instance %s was renewed after deletion", victim.ID)
			}
		}
		// The other instance keeps heartbeating.
		if n, err := cs.CoreV1().Nodes().Get(ctx, g.Instances[1].NodeName, metav1.GetOptions{}); err != nil || nodeReady(n) != corev1.ConditionTrue {
			t.Fatalf("the surviving node should stay Ready: %v", err)
		}
	})
}

func TestInstancesThatMustNotJoin(t *testing.T) {
	ctx := context.Background()
	cs := clientset(t)
	srv := startCloud(t)
	good := createToken(t, time.Now().Add(time.Hour))
	expired := createToken(t, time.Now().Add(-time.Minute))
	unknown, _ := bootstraputil.GenerateBootstrapToken()

	tests := []struct {
		name        string
		group       string
		data        []byte
		wantMessage string
	}{
		{name: "a token the API server does not know", group: "bad-token", data: cloudInit("kubeadm.k8s.io/v1beta3", unknown, caHash(t)), wantMessage: "Bootstrap token rejected by the API server"},
		{name: "an expired token", group: "expired-token", data: cloudInit("kubeadm.k8s.io/v1beta3", expired, caHash(t)), wantMessage: "Bootstrap token rejected by the API server"},
		{name: "a CA hash that does not match the server's CA", group: "bad-ca", data: cloudInit("kubeadm.k8s.io/v1beta4", good, otherCAHash(t)), wantMessage: nodeagent.MessageCAHashMismatch},
		{name: "bootstrap data that is not cloud-config", group: "bad-data", data: []byte("#!/bin/sh\nkubeadm join\n"), wantMessage: "not a #cloud-config"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := srv.Cloud().ApplyGroup(tt.group, core.GroupSpec{Capacity: 1, Model: core.Model{CustomData: tt.data}}); err != nil {
				t.Fatal(err)
			}
			in := waitJoin(t, core.JoinFailed, func() (*core.Group, error) { return srv.Cloud().GetGroup(tt.group) }).Instances[0]
			if !strings.Contains(in.Message, tt.wantMessage) {
				t.Fatalf("message = %q, want it to contain %q", in.Message, tt.wantMessage)
			}
			if in.State != core.StateRunning {
				t.Fatalf("state = %s, want Running (the VM runs; it just never joins)", in.State)
			}
			if _, err := cs.CoreV1().Nodes().Get(ctx, in.Hostname, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Fatalf("node %s: %v, want NotFound", in.Hostname, err)
			}
			if strings.Contains(in.Message, good) || strings.Contains(in.Message, unknown) {
				t.Fatalf("the message leaks a token")
			}
		})
	}
}

func TestHeartbeatsResumeAfterCloudRestart(t *testing.T) {
	ctx := context.Background()
	cs := clientset(t)
	dir := t.TempDir()
	token := createToken(t, time.Now().Add(time.Hour))
	start := func() *server.Server {
		opts := core.Options{DataDir: dir, DefaultSimulation: &core.Simulation{}}
		opts.NodeAgent.Credentials = []*rest.Config{env.Config}
		opts.NodeAgent.HeartbeatInterval = time.Second
		srv, err := cloudsim.Start(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		return srv
	}
	srv := start()
	if _, err := srv.Cloud().ApplyGroup("restart", core.GroupSpec{Capacity: 1, Model: core.Model{CustomData: cloudInit("kubeadm.k8s.io/v1beta3", token, caHash(t))}}); err != nil {
		t.Fatal(err)
	}
	in := waitJoined(t, srv, "restart")
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	// The token expires while the cloud is down: a joined VM does not need it.
	if err := cs.CoreV1().Secrets(metav1.NamespaceSystem).Delete(ctx, "bootstrap-token-"+strings.SplitN(token, ".", 2)[0], metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	l, err := cs.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, in.NodeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	before := l.Spec.RenewTime.Time

	srv = start()
	defer srv.Stop()
	testenv.Eventually(t, 20*time.Second, func() error {
		l, err := cs.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, in.NodeName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if !l.Spec.RenewTime.After(before) {
			return fmt.Errorf("lease not renewed since the restart")
		}
		return nil
	})
	g, err := srv.Cloud().GetGroup("restart")
	if err != nil {
		t.Fatal(err)
	}
	if g.Instances[0].Join != core.JoinJoined {
		t.Fatalf("after the restart the instance is %s %q, want still Joined", g.Instances[0].Join, g.Instances[0].Message)
	}
}
