package azure

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/face/azureface"
)

// converge bounds every wait for a pool to settle.
const converge = 2 * time.Minute

// seedVersion is the version seed 000's MachinePool asks for.
const seedVersion = "v1.22.0"

// uniformNodeName is CAPZ's Uniform host name: the computerNamePrefix (the
// pool's name) and six base-36 digits.
var uniformNodeName = regexp.MustCompile(`^` + regexp.QuoteMeta(poolName) + `[0-9a-z]{6}$`)

// TestSeedUniform: seed 000's example, applied unchanged, becomes a
// Running pool of VMSS VMs joined as Nodes with Azure's providerIDs and
// host names; it scales 2→5→1 honouring deletePolicy Oldest; a vmSize
// change and a version change each roll every VM within maxSurge and
// maxUnavailable; deleting one AzureMachinePoolMachine replaces that VM;
// deleting the pool leaves nothing behind.
func TestSeedUniform(t *testing.T) {
	cloud := startCloud(t, 0)
	f := newFixture(t, cloud)
	startManager(t, f, nil)
	f.applySeed(nil)
	f.waitConverged(2, seedVersion, converge)

	prefix := "azure:///subscriptions/" + azureface.AzureDefaultSubscriptionID + "/resourceGroups/" + azureface.AzureDefaultResourceGroup +
		"/providers/Microsoft.Compute/virtualMachineScaleSets/" + f.vmss() + "/virtualMachines/"
	for _, n := range f.poolNodes() {
		if !strings.HasPrefix(n.Spec.ProviderID, prefix) {
			t.Errorf("Node %s has providerID %s, want %s<n>", n.Name, n.Spec.ProviderID, prefix)
		}
		if !uniformNodeName.MatchString(n.Name) {
			t.Errorf("Node name %s is not %s + 6 base-36 digits", n.Name, poolName)
		}
	}
	ap := &infrav1.AzureMachinePool{}
	if err := env.Client.Get(f.ctx, f.key(poolName), ap); err != nil {
		t.Fatal(err)
	}
	if ap.Status.ProvisioningState == nil || *ap.Status.ProvisioningState != infrav1.Succeeded {
		t.Errorf("AzureMachinePool provisioningState %v, want Succeeded", ap.Status.ProvisioningState)
	}
	for _, c := range []string{infrav1.ScaleSetModelUpdatedCondition, infrav1.ScaleSetDesiredReplicasCondition} {
		if got := meta.FindStatusCondition(ap.Status.Conditions, c); got == nil || got.Status != metav1.ConditionTrue {
			t.Errorf("condition %s: %+v", c, got)
		}
	}

	t.Log("scale 2 → 5 → 1 (deletePolicy Oldest)")
	f.scale(5)
	f.waitConverged(5, seedVersion, converge)
	newest := f.newestInstance()
	f.scale(1)
	f.waitConverged(1, seedVersion, converge)
	if g := f.group(); g.Instances[0].ID != newest {
		t.Errorf("deletePolicy Oldest kept VM %s, want the newest, %s", g.Instances[0].ID, newest)
	}

	f.scale(4)
	f.waitConverged(4, seedVersion, converge)

	t.Log("vmSize change rolls every VM")
	before := f.instanceIDs()
	w := f.watchBudget(4, 5, 3)
	f.updateAzurePool(func(p *infrav1.AzureMachinePool) { p.Spec.Template.VMSize = "Standard_D4s_v3" })
	f.waitRolled(before, 4, seedVersion)
	w.stop(t)
	for _, in := range f.group().Instances {
		var vm struct {
			VMSize string `json:"vmSize"`
		}
		_ = json.Unmarshal(in.Payload, &vm)
		if vm.VMSize != "Standard_D4s_v3" {
			t.Errorf("VM %s has size %q after the roll", in.ID, vm.VMSize)
		}
	}

	t.Log("version change rolls every VM")
	before = f.instanceIDs()
	w = f.watchBudget(4, 5, 3)
	f.updateMachinePool(func(mp *clusterv1.MachinePool) { mp.Spec.Template.Spec.Version = "v1.23.1" })
	f.waitRolled(before, 4, "v1.23.1")
	w.stop(t)

	t.Log("deleting one AzureMachinePoolMachine replaces that VM only")
	before = f.instanceIDs()
	ampms := &infrav1.AzureMachinePoolMachineList{}
	if err := env.Client.List(f.ctx, ampms, client.InNamespace(f.ns)); err != nil {
		t.Fatal(err)
	}
	victim := ampms.Items[0]
	if err := env.Client.Delete(f.ctx, &victim); err != nil {
		t.Fatal(err)
	}
	f.waitRolled([]string{victim.Spec.InstanceID}, 4, "v1.23.1")
	after := f.instanceIDs()
	kept := 0
	for _, id := range before {
		if slices.Contains(after, id) {
			kept++
		}
	}
	if kept != 3 {
		t.Errorf("deleting one AzureMachinePoolMachine kept %d of the other 3 VMs (before %v, after %v)", kept, before, after)
	}

	t.Log("deleting the pool leaves nothing behind")
	f.deletePoolAndWaitGone()
}

// newestInstance is the ID of the scale set's most recently created VM.
func (f *fixture) newestInstance() string {
	g := f.group()
	in := slices.MaxFunc(g.Instances, func(a, b core.Instance) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		ai, _ := strconv.Atoi(a.ID)
		bi, _ := strconv.Atoi(b.ID)
		return ai - bi
	})
	return in.ID
}

func (f *fixture) instanceIDs() []string {
	var out []string
	if g := f.group(); g != nil {
		for _, in := range g.Instances {
			out = append(out, in.ID)
		}
	}
	slices.Sort(out)
	return out
}

// waitRolled waits until none of the VMs in before is left and the pool
// has converged again with n VMs on version.
func (f *fixture) waitRolled(before []string, n int, version string) {
	f.t.Helper()
	testenv.Eventually(f.t, converge, func() error {
		for _, id := range f.instanceIDs() {
			if slices.Contains(before, id) {
				return fmt.Errorf("VM %s has not been replaced yet", id)
			}
		}
		return f.converged(n, version)
	})
}

// budgetWatch checks, on every state it observes while a roll runs, that
// the scale set never has more than maxTotal VMs and the pool never fewer
// than minReady Ready Nodes.
type budgetWatch struct {
	done     chan struct{}
	wg       sync.WaitGroup
	mu       sync.Mutex
	problems []string
	samples  int
}

func (f *fixture) watchBudget(replicas, maxTotal, minReady int) *budgetWatch {
	w := &budgetWatch{done: make(chan struct{})}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-w.done:
				return
			case <-tick.C:
			}
			total := 0
			if g := f.group(); g != nil {
				for _, in := range g.Instances {
					if in.State != core.StateDeleting {
						total++
					}
				}
			}
			list, err := f.cs.CoreV1().Nodes().List(f.ctx, metav1.ListOptions{})
			if err != nil {
				continue
			}
			ready := 0
			for i := range list.Items {
				n := &list.Items[i]
				if f.ownsProviderID(n.Spec.ProviderID) && testenv.NodeReady(n) && !n.Spec.Unschedulable {
					ready++
				}
			}
			w.mu.Lock()
			w.samples++
			if total > maxTotal {
				w.problems = append(w.problems, fmt.Sprintf("%d VMs, more than %d (replicas %d + maxSurge)", total, maxTotal, replicas))
			}
			if ready < minReady {
				w.problems = append(w.problems, fmt.Sprintf("%d Ready Nodes, fewer than %d (replicas %d - maxUnavailable)", ready, minReady, replicas))
			}
			w.mu.Unlock()
		}
	}()
	return w
}

func (w *budgetWatch) stop(t testing.TB) {
	t.Helper()
	close(w.done)
	w.wg.Wait()
	if w.samples == 0 {
		t.Error("the roll was never observed")
	}
	for i, p := range w.problems {
		if i == 5 {
			t.Errorf("... and %d more", len(w.problems)-5)
			break
		}
		t.Error(p)
	}
}

// deletePoolAndWaitGone deletes the MachinePool and waits until no scale
// set, Node, AzureMachinePool(Machine), Machine or bootstrap data Secret
// is left.
func (f *fixture) deletePoolAndWaitGone() {
	f.t.Helper()
	mp := &clusterv1.MachinePool{}
	if err := env.Client.Get(f.ctx, f.key(poolName), mp); err != nil {
		f.t.Fatal(err)
	}
	dataSecret := ptr.Deref(mp.Spec.Template.Spec.Bootstrap.DataSecretName, "")
	if err := env.Client.Delete(f.ctx, mp); err != nil {
		f.t.Fatal(err)
	}
	testenv.Eventually(f.t, converge, func() error {
		if g := f.group(); g != nil {
			return fmt.Errorf("scale set still has %d VMs", len(g.Instances))
		}
		if n := len(f.poolNodes()); n > 0 {
			return fmt.Errorf("%d Nodes left", n)
		}
		for _, l := range []client.ObjectList{&infrav1.AzureMachinePoolMachineList{}, &infrav1.AzureMachinePoolList{}, &clusterv1.MachineList{}, &clusterv1.MachinePoolList{}} {
			if err := env.Client.List(f.ctx, l, client.InNamespace(f.ns)); err != nil {
				return err
			}
			if n := len(mustItems(l)); n > 0 {
				return fmt.Errorf("%d %T items left", n, l)
			}
		}
		if dataSecret != "" {
			err := env.Client.Get(f.ctx, f.key(dataSecret), &corev1.Secret{})
			if !apierrors.IsNotFound(err) {
				return fmt.Errorf("bootstrap data Secret %s still there (%v)", dataSecret, err)
			}
		}
		return nil
	})
}

func mustItems(l client.ObjectList) []any {
	switch l := l.(type) {
	case *infrav1.AzureMachinePoolMachineList:
		return anySlice(l.Items)
	case *infrav1.AzureMachinePoolList:
		return anySlice(l.Items)
	case *clusterv1.MachineList:
		return anySlice(l.Items)
	case *clusterv1.MachinePoolList:
		return anySlice(l.Items)
	}
	return nil
}

func anySlice[T any](in []T) []any {
	out := make([]any, len(in))
	for i := range in {
		out[i] = in[i]
	}
	return out
}
