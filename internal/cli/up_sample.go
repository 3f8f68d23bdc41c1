package cli

import (
	"context"
	"errors"
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

	corev1beta1 "github.com/mpool-dev/mpool/api/core/v1beta1"
	"github.com/mpool-dev/mpool/examples"
	"github.com/mpool-dev/mpool/templates"
)

// samplePool is the MachinePool of the local flavor generated for the
// cluster name "local", the same as examples/local/machinepool.yaml.
const samplePool = "local-mp-0"

// checkSample refuses a --sample that cannot become Running yet.
func checkSample(sample string) error {
	switch sample {
	case "local":
		return nil
	case "azure":
		return errors.New("the Azure provider is not implemented yet; use --sample local " +
			"(mpool generate cluster NAME --infrastructure azure --flavor machinepool writes the Azure pool's manifests)")
	case "aws":
		return errors.New("the AWS provider is not implemented yet; use --sample local " +
			"(mpool generate cluster NAME --infrastructure aws --flavor machinepool writes the AWS pool's manifests)")
	case "eks":
		return errors.New("the EKS provider is not implemented yet; use --sample local " +
			"(mpool generate cluster NAME --infrastructure aws --flavor eks-managedmachinepool writes the EKS pool's manifests)")
	default:
		return fmt.Errorf("unknown --sample %q: local, azure, aws or eks", sample)
	}
}

// sampleObjects are the sample pool's objects: the local machinepool flavor
// for the cluster name "local" in namespace default, with the flavor's
// defaults only (no environment, no config file), so every `mpool up`
// creates the same pool.
func sampleObjects() ([]*unstructured.Unstructured, error) {
	f, err := templates.Lookup("local", "machinepool")
	if err != nil {
		return nil, err
	}
	tpl, err := f.Template()
	if err != nil {
		return nil, err
	}
	manifest, _, err := generateManifest(tpl, templateVars{flags: map[string]string{"CLUSTER_NAME": localClusterName, "NAMESPACE": "default"}})
	if err != nil {
		return nil, err
	}
	return examples.Objects(manifest, "default")
}

// applySample creates the sample pool's objects in namespace default, leaving
// any that already exist (a restarted `mpool up` keeps the user's changes).
func applySample(ctx context.Context, c client.Client) error {
	objs, err := sampleObjects()
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
func watchSample(ctx context.Context, out io.Writer, c client.Client) error {
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
				mp.Status.Replicas, ptr.Deref(mp.Spec.Replicas, 0), mp.Status.ReadyReplicas)
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

// nextSteps is what `mpool up` suggests once the sample pool runs, with
// mpool the command that runs this binary again (see mpoolCommand).
func nextSteps(out io.Writer, kubeconfig, mpool string, haveKubectl bool) {
	fmt.Fprintf(out, "\nTry next (in another terminal):\n  export KUBECONFIG=%s\n", kubeconfig)
	if mpool != "mpool" {
		fmt.Fprintf(out, "  # mpool is not on your PATH (go install ./cmd/mpool puts it there); so:\n")
	}
	fmt.Fprintf(out, "  %s describe machinepool %s          # the pool, its instances and Nodes\n", mpool, samplePool)
	fmt.Fprintf(out, "  %s scale machinepool %s --replicas 5\n", mpool, samplePool)
	if !haveKubectl {
		fmt.Fprintf(out, "  # kubectl is not on your PATH; install it for the next line\n")
	}
	fmt.Fprintf(out, "  kubectl patch machinepool %s --type merge -p '{\"spec\":{\"template\":{\"spec\":{\"version\":\"v1.37.2\"}}}}'\n", samplePool)
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
