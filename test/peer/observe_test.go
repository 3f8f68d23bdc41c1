package peer

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"testing"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/sim/face/awsface"
)

// TestTokenRotationAtRest records what each system does when the
// bootstrap token in a pool's data is rotated while the pool is at rest
// (Running, no change asked): how many launch template versions it
// creates and how many instances it replaces (CAPA #2321/#2354: the token
// must reach the launch template, or a later scale-up cannot join; CAPA
// #4071/#4245: a data change that is only the token should not replace
// instances). The token's expiry is brought forward, as time would, so
// that the bootstrap provider (upstream's CABPK, mpool's own) rotates it.
// A scale-up follows, whose instance must join with the new token. It
// fails only if a system does not rotate the token, the pool does not come
// back Running or the new instance does not join; what it did is logged,
// not judged.
func TestTokenRotationAtRest(t *testing.T) {
	const n = 2
	onEachSystem(t, n, func(t *testing.T, f *Fixture) {
		sys := f.Sys
		before := instanceIDs(f)
		lt := f.launchTemplateID()
		v0 := launchTemplateVersion(t, lt)
		refreshes := ops(awsface.OpAWSStartInstanceRefresh)
		token := f.dataToken()
		f.expireSoon(token)
		testenv.Eventually(t, 3*time.Minute, func() error {
			f.poke(KubeadmConfigGVK)
			if got := f.dataToken(); got == token {
				return fmt.Errorf("the pool's data still carries token %s", token)
			}
			return nil
		})
		// The system has looked at its group twice since the data
		// changed (CAPA and mpool read it on every reconcile of the
		// pool), and the pool is Running with n instances again.
		reads := ops(awsface.OpAWSDescribeAutoScalingGroups)
		testenv.Eventually(t, 3*time.Minute, func() error {
			f.poke(AWSMachinePoolGVK)
			if got := ops(awsface.OpAWSDescribeAutoScalingGroups) - reads; got < 2 {
				return fmt.Errorf("%d reads of the group since the rotation", got)
			}
			return f.Running(n, instanceType)
		})
		replaced := 0
		for _, id := range before {
			if !slices.Contains(instanceIDs(f), id) {
				replaced++
			}
		}
		v1 := launchTemplateVersion(t, lt)
		t.Logf("%s: token rotation at rest: launch template versions %d → %d, instance refreshes started %d, instances replaced %d of %d",
			sys.Name, v0, v1, ops(awsface.OpAWSStartInstanceRefresh)-refreshes, replaced, n)
		// A scale-up after the rotation: the new instance must join
		// with the new token, from whichever version carries it.
		f.Scale(n + 1)
		f.waitRunning(n+1, instanceType)
		t.Logf("%s: a scale-up after the rotation joined; launch template versions %d → %d", sys.Name, v1, launchTemplateVersion(t, lt))
		f.Delete()
		testenv.Eventually(t, converge, f.Gone)
	})
}

// onEachSystem runs observe on the peer and on mpool, each in a subtest
// of its own with a fixture whose pool of n instances of instanceType is
// Running.
func onEachSystem(t *testing.T, n int, observe func(*testing.T, *Fixture)) {
	for _, sys := range []*System{peerSys, mpoolSys} {
		t.Run(sys.Name, func(t *testing.T) {
			f := NewFixture(t, sys, cloud)
			logOnFailure(t, f)
			f.CreatePool(n, instanceType)
			f.waitRunning(n, instanceType)
			observe(t, f)
		})
	}
}

// waitRunning waits until Running(n, instanceType) holds.
func (f *Fixture) waitRunning(n int, instanceType string) {
	f.T.Helper()
	testenv.Eventually(f.T, converge, func() error {
		if err := f.Sys.Running(); err != nil {
			f.T.Fatal(err)
		}
		return f.Running(n, instanceType)
	})
}

func instanceIDs(f *Fixture) []string {
	var ids []string
	for _, in := range f.Instances() {
		ids = append(ids, in.ID)
	}
	return ids
}

// launchTemplateID is the AWSMachinePool's status.launchTemplateID (both
// systems report it).
func (f *Fixture) launchTemplateID() string {
	f.T.Helper()
	amp := f.Get(AWSMachinePoolGVK, PoolName)
	id, _, _ := unstructured.NestedString(amp.Object, "status", "launchTemplateID")
	if id == "" {
		f.T.Fatal("the AWSMachinePool reports no launch template")
	}
	return id
}

// launchTemplateVersion is launch template id's latest version, read with
// the real SDK.
func launchTemplateVersion(t testing.TB, id string) int64 {
	t.Helper()
	out, err := ec2Client().DescribeLaunchTemplates(context.Background(), &ec2.DescribeLaunchTemplatesInput{LaunchTemplateIds: []string{id}})
	if err != nil || len(out.LaunchTemplates) != 1 {
		t.Fatalf("describing launch template %s: %v", id, err)
	}
	return awssdk.ToInt64(out.LaunchTemplates[0].LatestVersionNumber)
}

// bootstrapToken is a kubeadm bootstrap token as join data carries it.
var bootstrapToken = regexp.MustCompile(`\b([a-z0-9]{6})\.[a-z0-9]{16}\b`)

// dataToken returns the ID of the bootstrap token the pool's bootstrap
// data carries.
func (f *Fixture) dataToken() string {
	f.T.Helper()
	mp := f.Get(MachinePoolGVK, PoolName)
	name, _, _ := unstructured.NestedString(mp.Object, "spec", "template", "spec", "bootstrap", "dataSecretName")
	s := &corev1.Secret{}
	if err := f.Env.Client.Get(f.Ctx, types.NamespacedName{Namespace: f.NS, Name: name}, s); err != nil {
		f.T.Fatalf("reading the pool's data Secret %q: %v", name, err)
	}
	m := bootstrapToken.FindSubmatch(s.Data["value"])
	if m == nil {
		f.T.Fatalf("the pool's data Secret %s carries no bootstrap token", name)
	}
	return string(m[1])
}

// expireSoon brings the expiry of token id forward to a minute from now,
// less than half of any bootstrap provider's TTL (both rotate a pool's
// token at rest once less than that is left).
func (f *Fixture) expireSoon(id string) {
	f.T.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceSystem, Name: "bootstrap-token-" + id}}
	patch := mustJSON(map[string]any{"stringData": map[string]any{"expiration": time.Now().Add(time.Minute).UTC().Format(time.RFC3339)}})
	if err := f.Env.Client.Patch(f.Ctx, s, client.RawPatch(types.MergePatchType, patch)); err != nil {
		f.T.Fatalf("bringing token %s's expiry forward: %v", id, err)
	}
}

// poke annotates the pool's object of kind gvk, so that its controllers
// reconcile it now rather than at their next resync; at most every two
// seconds.
func (f *Fixture) poke(gvk schema.GroupVersionKind) {
	f.T.Helper()
	if time.Since(f.poked) < 2*time.Second {
		return
	}
	f.poked = time.Now()
	f.Patch(gvk, PoolName, map[string]any{"metadata": map[string]any{"annotations": map[string]any{"test.mpool.dev/poke": time.Now().Format(time.RFC3339Nano)}}})
}

// TestPDBDuringScaleIn records, for each system, whether a scale-in drains
// an instance's Node before it terminates the instance: the pool runs 4
// instances, each Node with one pod (bound to it, as a DaemonSet's or a
// local volume's would be) under a PodDisruptionBudget of minAvailable 2,
// and is scaled in to 2. Of the instances that go, it counts those whose
// pod had been evicted (deleted or terminating) by the time the instance
// left the group, and the lowest count of healthy pods (not terminating,
// on a Node of a live instance) against the budget. It fails only if the
// scale-in does not complete; what it saw is logged, not judged.
func TestPDBDuringScaleIn(t *testing.T) {
	const n, minAvailable = 4, 2
	onEachSystem(t, n, func(t *testing.T, f *Fixture) {
		sys := f.Sys
		nodeOf := map[string]string{} // instance ID → Node name
		nodes, err := f.ReadyNodes()
		if err != nil {
			t.Fatal(err)
		}
		for _, in := range f.Instances() {
			for _, node := range nodes {
				if node.Spec.ProviderID == in.ProviderID {
					nodeOf[in.ID] = node.Name
				}
			}
		}
		labels := map[string]string{"app": "pdb-observed"}
		for id, node := range nodeOf {
			f.Create(&corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Namespace: f.NS, Name: "on-" + id, Labels: labels},
				Spec: corev1.PodSpec{
					NodeName:   node,
					Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}},
				},
			})
		}
		pdb := &policyv1.PodDisruptionBudget{
			ObjectMeta: metav1.ObjectMeta{Namespace: f.NS, Name: "observed"},
			Spec: policyv1.PodDisruptionBudgetSpec{
				MinAvailable: ptr.To(intstr.FromInt32(minAvailable)),
				Selector:     &metav1.LabelSelector{MatchLabels: labels},
			},
		}
		f.Create(pdb)
		pods := func() map[string]corev1.Pod {
			l := &corev1.PodList{}
			if err := f.Env.Client.List(f.Ctx, l, client.InNamespace(f.NS), client.MatchingLabels(labels)); err != nil {
				t.Fatal(err)
			}
			out := map[string]corev1.Pod{}
			for _, p := range l.Items {
				out[p.Spec.NodeName] = p
			}
			return out
		}
		testenv.Eventually(t, time.Minute, func() error {
			for _, p := range pods() {
				if !podReady(&p) {
					return fmt.Errorf("pod %s is not Ready yet", p.Name)
				}
			}
			return nil
		})

		f.Scale(n / 2)
		gone := map[string]bool{} // instance ID → drained before it left
		lowest := n
		testenv.Eventually(t, converge, func() error {
			if err := f.Sys.Running(); err != nil {
				t.Fatal(err)
			}
			live := map[string]bool{}
			for _, in := range f.Instances() {
				live[in.ID] = true
			}
			ps := pods()
			healthy := 0
			for id, node := range nodeOf {
				p, ok := ps[node]
				evicted := !ok || p.DeletionTimestamp != nil
				if _, seen := gone[id]; !live[id] && !seen {
					gone[id] = evicted
				}
				if live[id] && !evicted {
					healthy++
				}
			}
			lowest = min(lowest, healthy)
			return f.Running(n/2, instanceType)
		})
		drained := 0
		for _, d := range gone {
			if d {
				drained++
			}
		}
		t.Logf("%s: scale-in %d → %d under a PodDisruptionBudget of minAvailable %d: %d of the %d instances that went were drained before they left the group; lowest healthy pods %d",
			sys.Name, n, n/2, minAvailable, drained, len(gone), lowest)
		if err := f.Env.Client.Delete(f.Ctx, pdb); err != nil {
			t.Fatal(err)
		}
		f.Delete()
		testenv.Eventually(t, converge, f.Gone)
	})
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// TestSecondChangeDuringRoll records what each system does with a second
// change that arrives while the first is being rolled (CAPA #5543: CAPA
// lets the first instance refresh finish and then starts another, so the
// pool is rolled twice): the pool of 4 is changed to rolledType, and once
// the first instance of that type has been launched, to thirdType. It
// counts the instances launched until all 4 run thirdType, and those
// launched of the intermediate type, the instance refreshes started and
// cancelled, and whether the controllers' Machines and per-instance
// objects settle to one per instance within 15 seconds (a bounded wait on
// purpose: a system that leaves Machines behind is an observation, not a
// failure). It fails only if the pool does not end serving on thirdType
// (Serving); what it saw is logged, not judged.
func TestSecondChangeDuringRoll(t *testing.T) {
	const n, thirdType = 4, "m5.2xlarge"
	onEachSystem(t, n, func(t *testing.T, f *Fixture) {
		sys := f.Sys
		original := map[string]bool{}
		for _, id := range instanceIDs(f) {
			original[id] = true
		}
		refreshes, cancels := ops(awsface.OpAWSStartInstanceRefresh), ops(awsface.OpAWSCancelInstanceRefresh)
		launched := map[string]string{} // instance ID → type
		see := func() {
			for _, in := range f.Instances() {
				if !original[in.ID] {
					launched[in.ID] = in.Metadata["instance_type"]
				}
			}
		}
		f.SetInstanceType(rolledType)
		testenv.Eventually(t, converge, func() error {
			see()
			if len(launched) == 0 {
				return fmt.Errorf("no instance of %s launched yet", rolledType)
			}
			return nil
		})
		f.SetInstanceType(thirdType)
		testenv.Eventually(t, converge, func() error {
			if err := f.Sys.Running(); err != nil {
				t.Fatal(err)
			}
			see()
			return f.Serving(n, thirdType)
		})
		// The controllers' bookkeeping: a system may be left with
		// Machines of instances that came and went.
		settled := "settled within 15 s"
		deadline := time.Now().Add(15 * time.Second)
		for err := f.settled(n); err != nil; err = f.settled(n) {
			if time.Now().After(deadline) {
				settled = fmt.Sprintf("not settled 15 s later: %v", err)
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		intermediate := 0
		for _, typ := range launched {
			if typ == rolledType {
				intermediate++
			}
		}
		t.Logf("%s: a second change during the roll: %d instances launched for %d (%d of them %s, the first change's), %d instance refreshes started, %d cancelled; Machines and per-instance objects %s",
			sys.Name, len(launched), n, intermediate, rolledType, ops(awsface.OpAWSStartInstanceRefresh)-refreshes, ops(awsface.OpAWSCancelInstanceRefresh)-cancels, settled)
		f.Delete()
		testenv.Eventually(t, converge, f.Gone)
	})
}
