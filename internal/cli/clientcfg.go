package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	mpoolscheme "github.com/mpool-dev/mpool/internal/scheme"
	"github.com/mpool-dev/mpool/internal/workload"
)

// workloadTimeout bounds each request to a workload cluster: describe must
// not hang on an unreachable one.
const workloadTimeout = 10 * time.Second

// clientFlags are the flags every operator command shares to reach the
// management cluster, with kubectl's meaning: --kubeconfig defaults to
// $KUBECONFIG, then ~/.kube/config; --namespace to the context's namespace,
// else "default".
type clientFlags struct {
	kubeconfig string
	context    string
	namespace  string
}

// addClientFlags binds the client flags to fs (a persistent flag set, so
// that every subcommand has them).
func addClientFlags(fs *pflag.FlagSet) *clientFlags {
	f := &clientFlags{}
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "Path to the management cluster's kubeconfig (default $KUBECONFIG, then ~/.kube/config)")
	fs.StringVar(&f.context, "context", "", "The kubeconfig context to use (default the current context)")
	fs.StringVarP(&f.namespace, "namespace", "n", "", "Namespace of the objects (default the context's namespace, else \"default\")")
	return f
}

// mgmtClient is a client of the management cluster and the namespace the
// command works in.
type mgmtClient struct {
	client.WithWatch
	namespace string
}

// connect loads the kubeconfig and builds a client with mpool's scheme.
func (f *clientFlags) connect() (*mgmtClient, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = f.kubeconfig
	overrides := &clientcmd.ConfigOverrides{CurrentContext: f.context}
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides)
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("loading the kubeconfig: %w", err)
	}
	ns := f.namespace
	if ns == "" {
		if ns, _, err = cc.Namespace(); err != nil {
			return nil, fmt.Errorf("reading the namespace from the kubeconfig: %w", err)
		}
	}
	scheme, err := mpoolscheme.New()
	if err != nil {
		return nil, err
	}
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("creating a client for %s: %w", cfg.Host, err)
	}
	return &mgmtClient{WithWatch: c, namespace: ns}, nil
}

// notFound turns a NotFound error for kind ns/name into the message an
// operator expects; other errors are wrapped with what was being read.
func notFound(err error, kind, ns, name string) error {
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("%s %s/%s not found", kind, ns, name)
	}
	return fmt.Errorf("reading %s %s/%s: %w", kind, ns, name, err)
}

// workloadNodes reads the Nodes of a Cluster's workload cluster through the
// "<cluster>-kubeconfig" Secret (key "value"), as the controllers do.
func workloadNodes(ctx context.Context, c client.Client, cluster types.NamespacedName) (map[string]*corev1.Node, error) {
	secret := &corev1.Secret{}
	key := types.NamespacedName{Namespace: cluster.Namespace, Name: workload.KubeconfigSecretName(cluster.Name)}
	if err := c.Get(ctx, key, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("secret %s not found", key)
		}
		return nil, fmt.Errorf("reading secret %s: %w", key, err)
	}
	data := secret.Data["value"]
	if len(data) == 0 {
		return nil, fmt.Errorf("secret %s has no key \"value\"", key)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(data)
	if err != nil {
		return nil, fmt.Errorf("parsing the kubeconfig in secret %s: %w", key, err)
	}
	return listNodes(ctx, cfg)
}

func listNodes(ctx context.Context, cfg *rest.Config) (map[string]*corev1.Node, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.Timeout = workloadTimeout
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating a workload cluster client: %w", err)
	}
	list, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing Nodes: %w", err)
	}
	nodes := make(map[string]*corev1.Node, len(list.Items))
	for i := range list.Items {
		nodes[list.Items[i].Name] = &list.Items[i]
	}
	return nodes, nil
}

// nodesByProviderID indexes Nodes (as workloadNodes returns them) by
// spec.providerID; Nodes without one are left out.
func nodesByProviderID(nodes map[string]*corev1.Node) map[string]*corev1.Node {
	out := make(map[string]*corev1.Node, len(nodes))
	for _, n := range nodes {
		if n.Spec.ProviderID != "" {
			out[n.Spec.ProviderID] = n
		}
	}
	return out
}
