// Package drain cordons and drains workload-cluster Nodes before their
// instances are deleted. It is a thin, non-blocking layer over
// k8s.io/kubectl/pkg/drain: one call to Node makes one pass (cordon, list the
// Node's pods with kubectl's filters, evict what is left through the eviction
// API) and reports whether the Node is empty, so a controller can drain
// hundreds of Nodes concurrently and resume after a restart instead of
// blocking a worker until every pod is gone.
//
// Evictions respect PodDisruptionBudgets: an eviction the API server refuses
// with 429 Too Many Requests leaves the pod in place and the pass reports it
// as blocked. DaemonSet pods and mirror pods are left alone, emptyDir data is
// deleted, and pods without a controller are evicted too (kubectl's --force),
// as Cluster API drains Machines. The drain is bounded by a timeout measured
// from when it started; once it has passed, Node reports TimedOut and the
// caller proceeds.
//
// A Node whose kubelet is unreachable (its Ready condition Unknown) is
// drained as Cluster API drains one: its pods are evicted with a grace
// period of one second, and a pod whose deletion is more than a second due
// no longer holds the drain back, since no kubelet will ever confirm it.
package drain

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	kubedrain "k8s.io/kubectl/pkg/drain"
)

// Options bound one drain.
type Options struct {
	// StartedAt is when the drain of this Node began (persisted by the caller
	// so that a restarted controller keeps counting from the same moment).
	StartedAt time.Time
	// Now is the time of this pass.
	Now time.Time
	// Timeout bounds the drain from StartedAt; zero means no bound, as with
	// Cluster API's nodeDrainTimeout.
	Timeout time.Duration
}

// Result is the outcome of one drain pass.
type Result struct {
	// Done reports that no pod that must be evicted is left on the Node.
	Done bool
	// TimedOut reports that the Node is not empty but Options.Timeout has
	// passed; the caller proceeds with the deletion anyway.
	TimedOut bool
	// Evicted is how many evictions this pass issued.
	Evicted int
	// Remaining are the pods still on the Node that must go, as namespace/name.
	Remaining []string
	// Blocked are the Remaining pods whose eviction a PodDisruptionBudget
	// refused in this pass.
	Blocked []string
	// Terminating are the Remaining pods already evicted (or deleted) that
	// have not terminated yet: their grace period runs.
	Terminating []string
	// Budgets are the PodDisruptionBudgets (namespace/name) that refused
	// those evictions, as the API server names them in its refusal.
	Budgets []string
	// Warnings are kubectl's notes about pods it skips or deletes with data
	// loss (DaemonSet pods, emptyDir volumes, unmanaged pods).
	Warnings string
}

// Message summarises r for conditions and events.
func (r Result) Message() string {
	switch {
	case r.Done:
		return "Node drained"
	case len(r.Blocked) > 0:
		msg := fmt.Sprintf("%d pods left to evict, %d blocked by a PodDisruptionBudget: %s", len(r.Remaining), len(r.Blocked), summarize(r.Blocked))
		if len(r.Budgets) > 0 {
			msg += fmt.Sprintf(" (PodDisruptionBudget %s)", strings.Join(r.Budgets, ", "))
		}
		return msg
	case len(r.Terminating) == len(r.Remaining):
		return fmt.Sprintf("%d pods evicted, still terminating (their grace period): %s", len(r.Remaining), summarize(r.Remaining))
	case len(r.Terminating) > 0:
		return fmt.Sprintf("%d pods left to evict, %d of them evicted and still terminating: %s", len(r.Remaining), len(r.Terminating), summarize(r.Remaining))
	default:
		return fmt.Sprintf("%d pods left to evict: %s", len(r.Remaining), summarize(r.Remaining))
	}
}

func summarize(pods []string) string {
	const show = 3
	if len(pods) <= show {
		return strings.Join(pods, ", ")
	}
	return strings.Join(pods[:show], ", ") + fmt.Sprintf(" and %d more", len(pods)-show)
}

// Node cordons node and evicts its pods once. It returns Done when no pod
// that must go is left, TimedOut when some are left past the timeout, and
// otherwise the pods still to go; call it again later. An error means the
// pass could not be made (API errors other than PDB refusals).
func Node(ctx context.Context, cs kubernetes.Interface, node *corev1.Node, opts Options) (Result, error) {
	h := &kubedrain.Helper{
		Ctx:                 ctx,
		Client:              cs,
		Force:               true,
		GracePeriodSeconds:  -1, // the pods' own terminationGracePeriodSeconds
		IgnoreAllDaemonSets: true,
		DeleteEmptyDirData:  true,
		Out:                 io.Discard,
		ErrOut:              io.Discard,
	}
	unreachable := Unreachable(node)
	if unreachable {
		h.GracePeriodSeconds = 1
	}
	if err := kubedrain.RunCordonOrUncordon(h, node.DeepCopy(), true); err != nil {
		if apierrors.IsNotFound(err) {
			return Result{Done: true}, nil
		}
		return Result{}, fmt.Errorf("cordoning Node %s: %w", node.Name, err)
	}
	list, errs := h.GetPodsForDeletion(node.Name)
	if len(errs) > 0 {
		return Result{}, fmt.Errorf("listing the pods of Node %s: %w", node.Name, errors.Join(errs...))
	}
	res := Result{Warnings: list.Warnings()}
	for _, pod := range list.Pods() {
		key := pod.Namespace + "/" + pod.Name
		if pod.DeletionTimestamp != nil {
			if unreachable && opts.Now.After(pod.DeletionTimestamp.Add(time.Second)) {
				// No kubelet will confirm the deletion: it is as good as gone.
				continue
			}
			// Evicted before (or deleted by someone else): wait for it to go.
			res.Remaining = append(res.Remaining, key)
			res.Terminating = append(res.Terminating, key)
			continue
		}
		gone, blocked, err := evict(ctx, h, cs, pod)
		switch {
		case blocked:
			res.Remaining = append(res.Remaining, key)
			res.Blocked = append(res.Blocked, key)
			for _, b := range Budgets(err) {
				if b = pod.Namespace + "/" + b; !slices.Contains(res.Budgets, b) {
					res.Budgets = append(res.Budgets, b)
				}
			}
		case err != nil:
			return Result{}, fmt.Errorf("evicting pod %s from Node %s: %w", key, node.Name, err)
		case gone:
			res.Evicted++
		default:
			res.Evicted++
			res.Remaining = append(res.Remaining, key)
			res.Terminating = append(res.Terminating, key)
		}
	}
	slices.Sort(res.Remaining)
	slices.Sort(res.Terminating)
	slices.Sort(res.Blocked)
	slices.Sort(res.Budgets)
	res.Done = len(res.Remaining) == 0
	if !res.Done && opts.Timeout > 0 && !opts.Now.Before(opts.StartedAt.Add(opts.Timeout)) {
		res.TimedOut = true
	}
	return res, nil
}

// Unreachable reports whether node's kubelet is unreachable: its Ready
// condition is Unknown, as Cluster API's noderefutil.IsNodeUnreachable.
func Unreachable(node *corev1.Node) bool {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionUnknown
		}
	}
	return false
}

// Budgets returns the names of the PodDisruptionBudgets an eviction's
// refusal (429 Too Many Requests) names: the API server lists each as a
// cause of type DisruptionBudget whose message starts "The disruption
// budget NAME ...". Nil for other errors.
func Budgets(err error) []string {
	var status apierrors.APIStatus
	if !errors.As(err, &status) || !apierrors.IsTooManyRequests(err) {
		return nil
	}
	d := status.Status().Details
	if d == nil {
		return nil
	}
	var names []string
	for _, c := range d.Causes {
		if c.Type != policyv1.DisruptionBudgetCause {
			continue
		}
		rest, ok := strings.CutPrefix(c.Message, "The disruption budget ")
		if !ok {
			continue
		}
		if name, _, _ := strings.Cut(rest, " "); name != "" && !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	return names
}

// evict evicts pod through the policy/v1 eviction API. It reports whether
// the pod is already gone afterwards (pods without a grace period are
// deleted at once) and whether a PodDisruptionBudget refused the eviction.
func evict(ctx context.Context, h *kubedrain.Helper, cs kubernetes.Interface, pod corev1.Pod) (gone, blocked bool, err error) {
	err = h.EvictPod(pod, policyv1.SchemeGroupVersion)
	switch {
	case apierrors.IsNotFound(err):
		return true, false, nil
	case apierrors.IsTooManyRequests(err):
		return false, true, err
	case err != nil:
		return false, false, err
	}
	cur, err := cs.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return true, false, nil
	case err != nil:
		return false, false, fmt.Errorf("checking the evicted pod: %w", err)
	}
	return cur.UID != pod.UID, false, nil
}

// Uncordon marks the Node name schedulable again: a drain the caller
// gives up on (kept with its pods) serves as before. The patch is sent
// whatever a cache says of the Node. A Node already gone is fine.
func Uncordon(ctx context.Context, cs kubernetes.Interface, name string) error {
	_, err := cs.CoreV1().Nodes().Patch(ctx, name, types.MergePatchType, []byte(`{"spec":{"unschedulable":false}}`), metav1.PatchOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("uncordoning Node %s: %w", name, err)
	}
	return nil
}
