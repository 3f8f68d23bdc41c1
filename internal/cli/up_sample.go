package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	corev1beta1 "github.com/mpool-dev/mpool/api/core/v1beta1"
	"github.com/mpool-dev/mpool/examples"
)

// samplePool is the MachinePool in examples/local/machinepool.yaml.
const samplePool = "local-mp-0"

// applySample creates the sample pool's objects in namespace default, leaving
// any that already exist (a restarted `mpool up` keeps the user's changes).
func applySample(ctx context.Context, c client.Client) error {
	objs, err := examples.Objects(examples.LocalMachinePool, "default")
	if err != nil {
		return fmt.Errorf("decoding the sample pool: %w", err)
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

// nextSteps is what `mpool up` suggests once the sample pool runs.
func nextSteps(out io.Writer, kubeconfig string) {
	fmt.Fprintf(out, `
Try next (in another terminal):
  export KUBECONFIG=%s
  mpool describe machinepool %s          # the pool, its instances and Nodes
  mpool scale machinepool %s --replicas 5
  kubectl patch machinepool %s --type merge -p '{"spec":{"template":{"spec":{"version":"v1.37.2"}}}}'
  mpool rollout status %s --watch        # watch the rolling replacement
`, kubeconfig, samplePool, samplePool, samplePool, samplePool)
}
