package azureface

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/mpool-dev/mpool/internal/drain"
	"github.com/mpool-dev/mpool/sim/admin"
	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/wire/azureapi"
)

// AKS's own upgrade of an agent pool (a change of orchestratorVersion):
// surge, cordon and drain through the eviction API, soak, delete; see the
// package doc, "AKS".

// AKS's upgradeSettings defaults and names.
const (
	// AKSDefaultDrainTimeoutInMinutes is AKS's drainTimeoutInMinutes when
	// upgradeSettings has none.
	AKSDefaultDrainTimeoutInMinutes = 30
	// AKSUndrainableCordon and AKSUndrainableSchedule are the values of
	// upgradeSettings.undrainableNodeBehavior (Schedule is AKS's default).
	AKSUndrainableCordon   = "Cordon"
	AKSUndrainableSchedule = "Schedule"
	// AKSLabelUpgradeStatus is the label AKS puts on a node it could not
	// drain under undrainableNodeBehavior Cordon, with the value
	// AKSUpgradeStatusQuarantined.
	AKSLabelUpgradeStatus       = "kubernetes.azure.com/upgrade-status"
	AKSUpgradeStatusQuarantined = "Quarantined"
	// AKSCodeUpgradeFailed is the error code of an upgrade AKS gave up on
	// (a node it could not drain within drainTimeoutInMinutes).
	AKSCodeUpgradeFailed = "UpgradeFailed"
)

// aksUpgradeSettings are an agent pool's upgradeSettings as AKS applies
// them, with the face's minute (AzureFace.AKSMinute).
type aksUpgradeSettings struct {
	drainTimeout, soak time.Duration
	undrainable        string
}

// upgradeSettings reads the pool's upgradeSettings.
func (h *azureHandler) upgradeSettings(p *aksPool) aksUpgradeSettings {
	minute := core.OrDefault(h.face.AKSMinute, time.Minute)
	s := aksUpgradeSettings{drainTimeout: AKSDefaultDrainTimeoutInMinutes * minute, undrainable: AKSUndrainableSchedule}
	us, _ := p.Properties["upgradeSettings"].(map[string]any)
	if n, ok := numberOf(us["drainTimeoutInMinutes"]); ok && n > 0 {
		s.drainTimeout = time.Duration(n) * minute
	}
	if n, ok := numberOf(us["nodeSoakDurationInMinutes"]); ok && n > 0 {
		s.soak = time.Duration(n) * minute
	}
	if b, _ := us["undrainableNodeBehavior"].(string); b == AKSUndrainableCordon {
		s.undrainable = b
	}
	return s
}

// keepUpgradeSettings carries the stored upgradeSettings.undrainableNodeBehavior
// over into props when the PUT does not send it: a client of an API version
// older than the property's (armcontainerservice/v6's 2025-02-01) cannot,
// and ARM keeps what such a client does not know.
func keepUpgradeSettings(stored, props map[string]any) {
	old, _ := stored["upgradeSettings"].(map[string]any)
	b, ok := old["undrainableNodeBehavior"]
	if !ok {
		return
	}
	us := child(props, true, "upgradeSettings")
	if _, sent := us["undrainableNodeBehavior"]; !sent {
		us["undrainableNodeBehavior"] = b
	}
}

// validUpgradeSettings checks a PUT's upgradeSettings as AKS does; it
// returns the offending property and a message, or "".
func validUpgradeSettings(props map[string]any) (string, string) {
	us, _ := props["upgradeSettings"].(map[string]any)
	if n, ok := numberOf(us["drainTimeoutInMinutes"]); ok && (n < 1 || n > 1440) {
		return "drainTimeoutInMinutes", fmt.Sprintf("upgradeSettings.drainTimeoutInMinutes %d is not within 1 and 1440.", n)
	}
	if n, ok := numberOf(us["nodeSoakDurationInMinutes"]); ok && (n < 0 || n > 30) {
		return "nodeSoakDurationInMinutes", fmt.Sprintf("upgradeSettings.nodeSoakDurationInMinutes %d is not within 0 and 30.", n)
	}
	if b, ok := us["undrainableNodeBehavior"].(string); ok && b != AKSUndrainableCordon && b != AKSUndrainableSchedule {
		return "undrainableNodeBehavior", fmt.Sprintf("upgradeSettings.undrainableNodeBehavior '%s' is not one of Cordon, Schedule.", b)
	}
	return "", ""
}

// advanceUpgrade takes one step of p's upgrade and reports whether p
// changed. While old nodes remain the pool runs at most count + surge
// nodes: new ones (of u.Hash) are created first; an old node is cordoned
// and drained only while count nodes serve without it, at most surge at a
// time; a drained node soaks for nodeSoakDurationInMinutes, then goes with
// its Node. A node not drained within drainTimeoutInMinutes is blocked:
// under Cordon it stays cordoned, labelled Quarantined, with a surge node
// kept in its place; under Schedule it is uncordoned and the surge nodes
// go. The other nodes are upgraded all the same; then the upgrade ends,
// Failed with UpgradeFailed when a node was blocked.
func (h *azureHandler) advanceUpgrade(c *aksCluster, p *aksPool) bool {
	u := p.Upgrade
	sc := aksScope(h, c)
	gname := groupName(p.VMSS)
	g, err := sc.GetGroup(gname)
	if err != nil {
		return false
	}
	now := h.env.Cloud.Clock().Now()
	set := h.upgradeSettings(p)
	count64, _ := numberOf(p.Properties["count"])
	count := int(count64)
	byID := map[string]core.Instance{}
	var old, newer []core.Instance
	readyNew := 0
	for _, in := range g.Instances {
		if in.State == core.StateDeleting {
			continue
		}
		byID[in.ID] = in
		if in.ModelHash != u.Hash {
			old = append(old, in)
			continue
		}
		newer = append(newer, in)
		if in.State == core.StateRunning && (p.Ticket == nil || in.Join == core.JoinJoined) {
			readyNew++
		}
	}
	changed := u.forget(byID)
	cs := h.workloadOf(p)

	// Drain passes; drained nodes soak, then go.
	for _, id := range slices.Sorted(maps.Keys(u.Draining)) {
		in := byID[id]
		done, blocked := h.drainPass(cs, in, u.Draining[id], now)
		switch {
		case done:
			delete(u.Draining, id)
			u.Soaking[id], changed = now, true
		case now.Sub(u.Draining[id]) >= set.drainTimeout:
			delete(u.Draining, id)
			u.Blocked, changed = append(u.Blocked, id), true
			u.Message = fmt.Sprintf("Drain node %s failed when evicting pods within drainTimeoutInMinutes (%s): %s. This is often caused by a restrictive Pod Disruption Budget (PDB) policy.",
				nodeOf(in), set.drainTimeout, blocked)
			h.onBlocked(cs, in, set.undrainable)
		}
	}
	var gone []core.Instance
	for _, id := range slices.Sorted(maps.Keys(u.Soaking)) {
		if now.Sub(u.Soaking[id]) >= set.soak {
			gone = append(gone, byID[id])
		}
	}
	if len(gone) > 0 {
		h.removeInstances(sc, p, gone)
		for _, in := range gone {
			delete(u.Soaking, in.ID)
			delete(byID, in.ID)
		}
		old = slices.DeleteFunc(old, func(in core.Instance) bool { return byID[in.ID].ID == "" })
		changed = true
	}

	// Start draining old nodes while count nodes serve without them.
	var idle []core.Instance
	for _, in := range old {
		if !u.busy(in.ID) {
			idle = append(idle, in)
		}
	}
	slices.SortFunc(idle, func(a, b core.Instance) int { return a.CreatedAt.Compare(b.CreatedAt) })
	serving := readyNew + len(idle)
	cordoned := len(u.Blocked)
	if set.undrainable == AKSUndrainableSchedule {
		// Blocked nodes are schedulable again: they serve.
		serving, cordoned = serving+len(u.Blocked), 0
	}
	for _, in := range idle {
		if serving-1 < count || len(u.Draining)+len(u.Soaking) >= int(u.Surge) {
			break
		}
		u.Draining[in.ID], changed = now, true
		serving--
	}

	// The scale set's capacity: the old nodes left and new ones, at most
	// count + surge nodes in all besides a surge node kept for each node
	// blocked under Cordon.
	live := len(old)
	if pending := live - len(u.Blocked); pending > 0 {
		want := int32(live + min(count, count+int(u.Surge)+cordoned-live))
		if g.Capacity != want {
			_, _ = sc.SetCapacity(gname, want)
		}
		return changed
	}
	return h.finishUpgrade(sc, p, newer, set, count) || changed
}

// finishUpgrade ends p's upgrade once only blocked old nodes are left:
// the surge nodes go (under Cordon one stays for each blocked node); with
// a blocked node the upgrade failed.
func (h *azureHandler) finishUpgrade(sc core.Scope, p *aksPool, newer []core.Instance, set aksUpgradeSettings, count int) bool {
	u := p.Upgrade
	keep := count
	if set.undrainable == AKSUndrainableSchedule {
		keep = max(0, count-len(u.Blocked))
	}
	if len(newer) > keep {
		// The newest surge nodes go, not the blocked ones the core's
		// scale-in would pick first.
		slices.SortFunc(newer, func(a, b core.Instance) int { return b.CreatedAt.Compare(a.CreatedAt) })
		h.removeInstances(sc, p, newer[:len(newer)-keep])
	}
	want := int32(keep + len(u.Blocked))
	if g, err := sc.GetGroup(groupName(p.VMSS)); err == nil && g.Capacity != want {
		_, _ = sc.SetCapacity(groupName(p.VMSS), want)
	}
	p.OpStart = h.env.Cloud.Clock().Now()
	if len(u.Blocked) == 0 {
		p.Upgrade = nil
		return true
	}
	u.Failed = &azureapi.ErrorBody{Code: AKSCodeUpgradeFailed, Message: u.Message +
		fmt.Sprintf(" %d node(s) could not be drained (undrainableNodeBehavior %s); fix what blocks their eviction, then update the agent pool again to retry.", len(u.Blocked), set.undrainable)}
	return true
}

// forget drops what the upgrade tracks of instances that are gone, and
// makes its maps; it reports whether u changed.
func (u *aksUpgrade) forget(byID map[string]core.Instance) bool {
	if u.Draining == nil {
		u.Draining = map[string]time.Time{}
	}
	if u.Soaking == nil {
		u.Soaking = map[string]time.Time{}
	}
	n := len(u.Draining) + len(u.Soaking) + len(u.Blocked)
	maps.DeleteFunc(u.Draining, func(id string, _ time.Time) bool { return byID[id].ID == "" })
	maps.DeleteFunc(u.Soaking, func(id string, _ time.Time) bool { return byID[id].ID == "" })
	u.Blocked = slices.DeleteFunc(u.Blocked, func(id string) bool { return byID[id].ID == "" })
	return n != len(u.Draining)+len(u.Soaking)+len(u.Blocked)
}

// busy reports whether the upgrade is draining, soaking or has blocked
// the instance id.
func (u *aksUpgrade) busy(id string) bool {
	_, d := u.Draining[id]
	_, s := u.Soaking[id]
	return d || s || slices.Contains(u.Blocked, id)
}

// nodeOf is the name of an instance's Node (its host name until it joined).
func nodeOf(in core.Instance) string {
	if in.NodeName != "" {
		return in.NodeName
	}
	return in.Hostname
}

// removeInstances deletes the instances' VMs and Nodes.
func (h *azureHandler) removeInstances(sc core.Scope, p *aksPool, ins []core.Instance) {
	var ids, names []string
	for _, in := range ins {
		ids, names = append(ids, in.ID), append(names, nodeOf(in))
	}
	h.deleteNodes(p, names)
	_, _ = sc.DeleteInstances(groupName(p.VMSS), ids)
}

// workloadOf is a client of the workload cluster the pool's nodes join,
// nil when they join none.
func (h *azureHandler) workloadOf(p *aksPool) kubernetes.Interface {
	if p.Ticket == nil {
		return nil
	}
	return h.workload(p.Ticket.Endpoint)
}

// drainPass makes one drain pass over the instance's Node (cordon, evict
// through the eviction API, PodDisruptionBudgets honoured): done once no
// pod is left to evict or there is no Node; blocked says what is left.
func (h *azureHandler) drainPass(cs kubernetes.Interface, in core.Instance, started, now time.Time) (done bool, blocked string) {
	if cs == nil {
		return true, ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), aksCallTimeout)
	defer cancel()
	node, err := cs.CoreV1().Nodes().Get(ctx, nodeOf(in), metav1.GetOptions{})
	if err != nil {
		return apierrors.IsNotFound(err), err.Error()
	}
	res, err := drain.Node(ctx, cs, node, drain.Options{StartedAt: started, Now: now})
	if err != nil {
		return false, err.Error()
	}
	return res.Done, res.Message()
}

// onBlocked treats a node AKS could not drain: under Cordon it stays
// cordoned, labelled Quarantined; under Schedule it is uncordoned.
func (h *azureHandler) onBlocked(cs kubernetes.Interface, in core.Instance, behavior string) {
	if cs == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), aksCallTimeout)
	defer cancel()
	if behavior != AKSUndrainableCordon {
		_ = drain.Uncordon(ctx, cs, nodeOf(in))
		return
	}
	body, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]any{AKSLabelUpgradeStatus: AKSUpgradeStatusQuarantined}}})
	_, _ = cs.CoreV1().Nodes().Patch(ctx, nodeOf(in), types.MergePatchType, body, metav1.PatchOptions{})
}

// AKSReleaseNodeImage makes image the newest node image of the AKS cluster
// name in resource group rg of subscription sub, as AKS's weekly releases
// do: new nodes get it, and an agent pool's upgradeNodeImageVersion moves
// its nodes to it.
func AKSReleaseNodeImage(c *core.Cloud, sub, rg, name, image string) error {
	_, err := updateAzureData(c, func(d *azureFaceData) error {
		cl := d.aksCluster(sub, rg, name)
		if cl == nil {
			return fmt.Errorf("no AKS cluster %s in resource group %s", name, rg)
		}
		cl.NodeImage = image
		return nil
	})
	return err
}

// upgradeNodeImage serves POST .../agentPools/{pool}/upgradeNodeImageVersion:
// AKS's own upgrade of the pool's nodes to the cluster's newest node image
// at the same version (surge, drain, soak: advanceUpgrade), 202 and an
// operation; 200 with the pool when its nodes run the newest image; 409
// while another upgrade runs or after one failed.
func (h *azureHandler) upgradeNodeImage(w http.ResponseWriter, r *http.Request) {
	h.face.aksMu.Lock()
	defer h.face.aksMu.Unlock()
	c, p, g, ok := h.poolOr404(w, r)
	if !ok {
		return
	}
	if p.Deleting || g == nil || p.Upgrade != nil {
		writeARMTargetError(w, http.StatusConflict, azureapi.CodeOperationNotAllowed, "",
			"Operation is not allowed: agent pool %s is being deleted, or upgraded, or its last upgrade failed (update the agent pool to retry it).", p.Name)
		return
	}
	if p.nodeImage() == c.nodeImage() {
		admin.WriteJSON(w, http.StatusOK, aksPoolResource(c, p, g))
		return
	}
	version, _ := p.Properties["orchestratorVersion"].(string)
	count, _ := numberOf(p.Properties["count"])
	vmSize, _ := p.Properties["vmSize"].(string)
	now := h.env.Cloud.Clock().Now()
	p.NodeImage = c.nodeImage()
	p.Upgrade = &aksUpgrade{From: version, To: version, Surge: aksMaxSurge(p.Properties, int32(count)), Hash: aksModelHash(version, p.NodeImage)}
	p.Writing, p.OpStart = "Upgrading", now
	g, err := h.applyPoolVMSS(c, p, findAzureSku(vmSize), aksZones(p.Properties), int32(count))
	if err == nil {
		err = h.saveAKSCluster(c)
	}
	if err != nil {
		writeAzureCloudError(w, err)
		return
	}
	h.setAKSOperationHeaders(w, r, azureOp{Kind: aksOpWrite, Name: c.Name + "/" + p.Name, Start: now.UnixNano()}, c.Location, true)
	admin.WriteJSON(w, http.StatusAccepted, aksPoolResource(c, p, g))
}
