package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	corev1beta1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/mpool-dev/mpool/examples"
	"github.com/mpool-dev/mpool/templates"
)

// sample is one pool `mpool up --sample` can create: an embedded flavor
// generated for a cluster of the sample's name in namespace default.
type sample struct {
	// infrastructure and flavor name the embedded flavor.
	infrastructure, flavor string
	// cluster is the flavor's CLUSTER_NAME.
	cluster string
	// vars are the variables set besides CLUSTER_NAME and NAMESPACE.
	vars map[string]string
	// version, when set, is the Kubernetes version of the sample's
	// MachinePool, for a flavor whose pool has none of its own (EKS's
	// follows its cluster's).
	version string
	// nextVersion is the Kubernetes version `up`'s "Try next" lines roll
	// the pool to: one the sample's cloud has images of (for EKS, one
	// minor version after version, not newer than the EKS cluster's).
	nextVersion string
	// poolSuffix names the flavor's MachinePool, <cluster><poolSuffix>;
	// "" is "-mp-0".
	poolSuffix string
}

// pool is the sample's MachinePool, as the flavors name it.
func (s sample) pool() string {
	if s.poolSuffix != "" {
		return s.cluster + s.poolSuffix
	}
	return s.cluster + "-mp-0"
}

// samples are the pools of `mpool up --sample`, 3 replicas each. The local
// one is examples/v1beta2/local-machinepool.yaml; the Azure, AWS and EKS ones are
// their own Clusters (with an AzureCluster, an AWSCluster or an
// AWSManagedControlPlane), whose workload cluster `up`'s API server becomes
// (see sandboxClusters), in the simulated clouds the flavors default to. The
// EKS one is a node group of the simulated EKS cluster `up` registers
// (eksface.EKSDefaultClusterName, at eksface.EKSDefaultVersion), one minor
// version behind it so that "Try next" can upgrade it: EKS updates a node
// group one minor version at a time, never past its cluster's. The AKS one
// is CAPZ's aks flavor's System pool in the simulated AKS cluster aks
// (azureface.AKSSampleClusterName, at azureface.AKSSampleVersion), which `up`
// registers a minor version ahead of the pool's, for the same reason.
var samples = map[string]sample{
	"local": {infrastructure: "local", flavor: "machinepool", cluster: localClusterName, nextVersion: "v1.37.2"},
	"azure": {infrastructure: "azure", flavor: "machinepool", cluster: "azure", vars: map[string]string{"WORKER_MACHINE_COUNT": "3"}, nextVersion: "v1.37.2"},
	"aws":   {infrastructure: "aws", flavor: "machinepool", cluster: "aws", vars: map[string]string{"WORKER_MACHINE_COUNT": "3"}, nextVersion: "v1.33.1"},
	"gcp":   {infrastructure: "gcp", flavor: "machinepool", cluster: "gcp", vars: map[string]string{"WORKER_MACHINE_COUNT": "3"}, nextVersion: "v1.31.2"},
	"eks": {infrastructure: "aws", flavor: "eks-managedmachinepool", cluster: "eks", vars: map[string]string{"WORKER_MACHINE_COUNT": "3"},
		poolSuffix: "-pool-0", version: "v1.30.0", nextVersion: "v1.31.0"},
	"aks": {infrastructure: "azure", flavor: "aks", cluster: "aks", vars: map[string]string{"WORKER_MACHINE_COUNT": "3"},
		poolSuffix: "-pool0", nextVersion: "v1.32.0"},
}

// lookupSample returns the --sample name, or why `up` refuses it.
func lookupSample(name string) (sample, error) {
	if s, ok := samples[name]; ok {
		return s, nil
	}
	return sample{}, fmt.Errorf("unknown --sample %q: local, azure, aws, gcp, eks or aks", name)
}

// objects are the sample pool's objects: its flavor for the sample's
// cluster name in namespace default, with the flavor's defaults and the
// sample's variables only (no environment, no config file), so every
// `mpool up` creates the same pool; and the sample's version, if any, on
// its MachinePool.
func (s sample) objects() ([]*unstructured.Unstructured, error) {
	f, err := templates.Lookup(s.infrastructure, s.flavor)
	if err != nil {
		return nil, err
	}
	tpl, err := f.Template()
	if err != nil {
		return nil, err
	}
	flags := map[string]string{"CLUSTER_NAME": s.cluster, "NAMESPACE": "default"}
	for k, v := range s.vars {
		flags[k] = v
	}
	manifest, _, err := generateManifest(tpl, templateVars{flags: flags}, false)
	if err != nil {
		return nil, err
	}
	objs, err := examples.Objects(manifest, "default")
	if err != nil || s.version == "" {
		return objs, err
	}
	for _, u := range objs {
		if u.GetKind() == "MachinePool" && u.GetName() == s.pool() {
			if err := unstructured.SetNestedField(u.Object, s.version, "spec", "template", "spec", "version"); err != nil {
				return nil, err
			}
			return objs, nil
		}
	}
	return nil, fmt.Errorf("the %s %s flavor has no MachinePool %s", s.infrastructure, s.flavor, s.pool())
}

// applySample creates the sample pool's objects in namespace default, leaving
// any that already exist (a restarted `mpool up` keeps the user's changes).
func applySample(ctx context.Context, c client.Client, s sample) error {
	objs, err := s.objects()
	if err != nil {
		return fmt.Errorf("generating the sample pool: %w", err)
	}
	for _, u := range objs {
		if err := c.Create(ctx, u); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating the sample %s %s: %w", u.GetKind(), u.GetName(), err)
		}
	}
	return nil
}

// watchSample prints a progress line whenever the sample pool's state
// changes, until it is Running or ctx ends.
func watchSample(ctx context.Context, out io.Writer, c client.Client, samplePool string) error {
	start := time.Now()
	last := ""
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		mp := &corev1beta1.MachinePool{}
		err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: samplePool}, mp)
		switch {
		case apierrors.IsNotFound(err):
			fmt.Fprintf(out, "mpool: the sample pool default/%s was deleted; not waiting for it\n", samplePool)
			return nil
		case err != nil && ctx.Err() == nil:
			return fmt.Errorf("reading the sample pool: %w", err)
		case err == nil:
			line := fmt.Sprintf("phase %s, %d/%d instances, %d Ready nodes", orPending(mp.Status.Phase),
				ptr.Deref(mp.Status.Replicas, 0), ptr.Deref(mp.Spec.Replicas, 0), ptr.Deref(mp.Status.ReadyReplicas, 0))
			if line != last {
				fmt.Fprintf(out, "mpool: sample pool default/%s: %s (%s)\n", samplePool, line, time.Since(start).Round(time.Second))
				last = line
			}
			if mp.Status.Phase == string(corev1beta1.MachinePoolPhaseRunning) {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

func orPending(phase string) string {
	if phase == "" {
		return "Pending"
	}
	return phase
}

// nextSteps is what `mpool up` suggests once sample s runs, with mpool the
// command that runs this binary again (see mpoolCommand).
func nextSteps(out io.Writer, s sample, kubeconfig, mpool string, haveKubectl bool) {
	samplePool := s.pool()
	fmt.Fprintf(out, "\nTry next (in another terminal):\n  export KUBECONFIG=%s\n", kubeconfig)
	if mpool != "mpool" {
		fmt.Fprintf(out, "  # mpool is not on your PATH (go install ./cmd/mpool puts it there); so:\n")
	}
	fmt.Fprintf(out, "  %s describe machinepool %s          # the pool, its instances and Nodes\n", mpool, samplePool)
	fmt.Fprintf(out, "  %s scale machinepool %s --replicas 5\n", mpool, samplePool)
	if !haveKubectl {
		fmt.Fprintf(out, "  # kubectl is not on your PATH; install it for the next line\n")
	}
	fmt.Fprintf(out, "  kubectl patch machinepool %s --type merge -p '{\"spec\":{\"template\":{\"spec\":{\"version\":\"%s\"}}}}'\n", samplePool, s.nextVersion)
	fmt.Fprintf(out, "  %s rollout status %s --watch        # watch the rolling replacement\n", mpool, samplePool)
}

// mpoolCommand is how the user runs this binary again, as printed: "mpool"
// when that is this binary on PATH, "go run ./cmd/mpool" when this binary
// was built by `go run` (into a go-build temporary directory), else this
// executable's own path.
func mpoolCommand(lookPath func(string) (string, error), executable string) string {
	if strings.Contains(filepath.ToSlash(executable), "/go-build") {
		return "go run ./cmd/mpool"
	}
	if p, err := lookPath("mpool"); err == nil && sameFile(p, executable) {
		return "mpool"
	}
	if executable == "" {
		return "mpool"
	}
	return executable
}

func sameFile(a, b string) bool {
	sa, err := os.Stat(a)
	if err != nil {
		return false
	}
	sb, err := os.Stat(b)
	return err == nil && os.SameFile(sa, sb)
}

// runningCommand is mpoolCommand for this process.
func runningCommand() (mpool string, haveKubectl bool) {
	exe, _ := os.Executable()
	_, err := exec.LookPath("kubectl")
	return mpoolCommand(exec.LookPath, exe), err == nil
}
