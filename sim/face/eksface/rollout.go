package eksface

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	bootstraputil "k8s.io/cluster-bootstrap/token/util"

	"github.com/mpool-dev/mpool/internal/drain"
	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/nodeagent"
)

// eksCallTimeout bounds each call the face makes to a workload cluster.
const eksCallTimeout = 10 * time.Second

// kick starts the loop that advances the node groups, unless it runs.
func (f *EKSFace) kick(env core.FaceEnv) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.kickLocked(env)
}

// kickLocked is kick with f.mu held: the loop stops only with f.mu held
// and nothing to do, so work recorded under f.mu is never missed.
func (f *EKSFace) kickLocked(env core.FaceEnv) {
	if f.running || !eksBusy(readEKSData(env.Cloud.FaceData(EKSFaceName))) {
		return
	}
	f.running = true
	go f.run(env)
}

// eksBusy reports whether a node group is in a transitional state,
// DEGRADED (the loop watches it recover) or has node repair on.
func eksBusy(d *eksFaceData) bool {
	for _, n := range d.Nodegroups {
		if n.Status == EKSStatusCreating || n.Status == EKSStatusUpdating || n.Status == EKSStatusDeleting || n.Status == EKSStatusDegraded || eksRepairing(n) {
			return true
		}
	}
	return false
}

// run advances the node groups every interval until none is in a
// transitional state or DEGRADED.
func (f *EKSFace) run(env core.FaceEnv) {
	t := env.Cloud.Clock().NewTicker(f.interval())
	defer t.Stop()
	for range t.C() {
		f.mu.Lock()
		busy := f.advance(env)
		if !busy {
			f.running = false
			f.mu.Unlock()
			return
		}
		f.mu.Unlock()
	}
}

// advance takes one step of every node group in a transitional state,
// checks the health of the others (checkHealth) and reports whether the
// loop is still needed (eksBusy). f.mu is held.
func (f *EKSFace) advance(env core.FaceEnv) bool {
	d := readEKSData(env.Cloud.FaceData(EKSFaceName))
	now := env.Cloud.Clock().Now().UTC()
	var keep []eksNodegroup
	for i := range d.Nodegroups {
		n := &d.Nodegroups[i]
		sc := asgScope(env, n)
		switch n.Status {
		case EKSStatusCreating:
			g, err := sc.GetGroup(n.ASG)
			if err == nil {
				g = f.relaunch(env, n, g)
			}
			switch {
			case err == nil && eksSettled(g, n):
				n.Status, n.ModifiedAt = EKSStatusActive, now
			case now.Sub(n.CreatedAt) > f.nodeCreationTimeout():
				// What held the launches back, then the instances that
				// did not join.
				issues := slices.DeleteFunc(f.issues(env, n, g, err, int(n.DesiredSize), now), func(i eksIssue) bool { return i.Code == EKSIssueNodeCreationFailure })
				var ids []string
				if err == nil {
					for _, in := range g.Instances {
						if in.State != core.StateDeleting && !eksUp(n, in) {
							ids = append(ids, in.ID)
						}
					}
				}
				if len(ids) > 0 || len(issues) == 0 {
					issues = append(issues, eksIssue{Code: EKSIssueNodeCreationFailure, Message: eksNodeJoinMessage, ResourceIDs: ids})
				}
				n.Status, n.ModifiedAt, n.Health = EKSStatusCreateFailed, now, issues
			}
		case EKSStatusUpdating:
			u := d.running(n)
			if u == nil {
				n.Status, n.ModifiedAt = EKSStatusActive, now
				break
			}
			done, fail := f.stepHealthy(env, n, u, now)
			switch {
			case fail != nil:
				u.Status, u.Errors = EKSUpdateFailed, []eksUpdateError{*fail}
				n.Status, n.ModifiedAt, n.LaunchBlockedSince = EKSStatusActive, now, time.Time{}
				f.rollBack(env, n, u)
				f.checkHealth(env, n, now)
			case done:
				u.Status, u.Draining = EKSUpdateSuccessful, nil
				n.Status, n.ModifiedAt, n.LaunchBlockedSince = EKSStatusActive, now, time.Time{}
				f.checkHealth(env, n, now)
			}
		case EKSStatusActive, EKSStatusDegraded:
			f.repairNodes(env, n, now)
			f.checkHealth(env, n, now)
		case EKSStatusDeleting:
			g, err := sc.GetGroup(n.ASG)
			if core.CodeOf(err) == core.CodeNotFound {
				f.cleanUp(env, n)
				// Its updates go with it: a new node group of the name
				// starts with none.
				d.Updates = slices.DeleteFunc(d.Updates, func(u eksUpdate) bool {
					return u.Account == n.Account && u.Region == n.Region && u.Cluster == n.Cluster && u.Nodegroup == n.Name
				})
				continue
			}
			if err == nil && (g.Operation == nil || g.Operation.Type != core.OperationDelete) {
				_, _ = sc.DeleteGroup(n.ASG)
			}
		}
		keep = append(keep, *n)
	}
	d.Nodegroups = keep
	if err := saveEKSData(env.Cloud, d); err != nil {
		env.Log.Error(err, "Saving the EKS face's data failed")
	}
	return eksBusy(d)
}

// eksSettled reports whether the node group's ASG has its desired nodes,
// all of the current release and joined.
func eksSettled(g *core.Group, n *eksNodegroup) bool {
	live := g.Live()
	for _, in := range live {
		if in.ModelHash != n.release() || !eksUp(n, in) {
			return false
		}
	}
	return len(live) == int(n.DesiredSize)
}

// eksUp reports whether an instance serves: its Node joined, or, for a
// node group with no workload cluster to join, it runs.
func eksUp(n *eksNodegroup, in core.Instance) bool {
	if n.Endpoint == "" {
		return in.State == core.StateRunning
	}
	return in.Join == core.JoinJoined
}

// step advances an update of n: it surges new nodes while old ones
// remain, cordons and drains old nodes (and, on a scale-down, the excess)
// within the update budget and terminates them once drained. It reports
// whether the update is done, or why it failed.
func (f *EKSFace) step(env core.FaceEnv, n *eksNodegroup, u *eksUpdate, now time.Time) (bool, *eksUpdateError) {
	sc := asgScope(env, n)
	g, err := sc.GetGroup(n.ASG)
	if err != nil {
		return false, nil
	}
	cs := f.client(env, n)
	if u.Relabel && cs != nil {
		if f.relabel(cs, n, u) == nil {
			u.Relabel = false
		}
	}
	if u.Draining == nil {
		u.Draining = map[string]time.Time{}
	}
	byID := map[string]core.Instance{}
	live := g.Live()
	var old []core.Instance
	for _, in := range live {
		byID[in.ID] = in
		if in.ModelHash != n.release() {
			old = append(old, in)
		}
	}
	for id := range u.Draining {
		if _, ok := byID[id]; !ok {
			delete(u.Draining, id)
		}
	}
	desired, budget := int(n.DesiredSize), n.maxUnavailable()
	rolling := u.Type == EKSUpdateVersion
	available := 0
	for _, in := range live {
		if _, draining := u.Draining[in.ID]; !draining && eksUp(n, in) {
			available++
		}
	}
	target := desired
	if rolling && len(old) > 0 {
		// EKS surges new nodes before it takes old ones down.
		target = desired + min(budget, len(old))
		sort.SliceStable(old, func(i, j int) bool { return old[i].CreatedAt.Before(old[j].CreatedAt) })
		for _, in := range old {
			if len(u.Draining) >= budget || available-1 < desired-budget {
				break
			}
			if _, ok := u.Draining[in.ID]; ok {
				continue
			}
			u.Draining[in.ID] = now
			if eksUp(n, in) {
				available--
			}
		}
	}
	if excess := len(live) - len(u.Draining) - target; excess > 0 {
		env.Log.V(1).Info("EKS scales the node group in", "nodegroup", n.Name, "update", u.ID, "excess", excess)
		for _, id := range eksScaleInVictims(live, u.Draining, n.release(), excess) {
			u.Draining[id] = now
		}
	}
	if g.Capacity < int32(target) {
		env.Log.V(1).Info("EKS scales the node group up", "nodegroup", n.Name, "update", u.ID, "from", g.Capacity, "to", target, "live", len(live), "old", len(old))
		if _, err := f.applyASG(env, n, int32(target)); err != nil {
			env.Log.Error(err, "Scaling the node group's Auto Scaling group failed", "nodegroup", n.Name)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(u.Draining)) {
		in := byID[id]
		drained, blocked := f.drainOne(cs, in, u.Draining[id], now)
		if !drained && blocked != "" && now.Sub(u.Draining[id]) > f.podEvictionTimeout() {
			if !u.Force {
				return false, &eksUpdateError{ErrorCode: "PodEvictionFailure", ResourceIDs: []string{in.NodeName},
					ErrorMessage: fmt.Sprintf("Reached max retries while trying to evict pods from nodes in node group %s: %s", n.Name, blocked)}
			}
			drained = true
		}
		if !drained {
			continue
		}
		if _, err := sc.DeleteInstances(n.ASG, []string{id}); err != nil {
			continue
		}
		env.Log.V(1).Info("EKS terminated a drained node", "nodegroup", n.Name, "update", u.ID, "instance", id, "node", in.NodeName)
		deleteNode(env, cs, in.NodeName)
		delete(u.Draining, id)
	}
	done := len(old) == 0 && len(u.Draining) == 0 && len(live) == desired && !u.Relabel && eksSettled(g, n)
	return done, nil
}

// eksScaleInVictims picks n instances to remove on a scale-down, as its
// Auto Scaling group would (core.PickScaleIn): instances already draining
// are not candidates; one of an older release than release is stale.
func eksScaleInVictims(live []core.Instance, draining map[string]time.Time, release string, n int) []string {
	var cands []core.Instance
	for _, in := range live {
		if _, ok := draining[in.ID]; !ok {
			cands = append(cands, in)
		}
	}
	var out []string
	for _, in := range core.PickScaleIn(cands, n, nil, func(in core.Instance) core.ScaleInKey {
		return core.ScaleInKey{Zone: in.Zone, Failed: in.State == core.StateFailed, Stale: in.ModelHash != release, CreatedAt: in.CreatedAt}
	}) {
		out = append(out, in.ID)
	}
	return out
}

// drainOne makes one drain pass over an instance's Node; drained is true
// once nothing is left to evict (or there is no Node to drain), blocked
// says what a PodDisruptionBudget holds back.
func (f *EKSFace) drainOne(cs kubernetes.Interface, in core.Instance, started, now time.Time) (drained bool, blocked string) {
	if cs == nil || in.NodeName == "" {
		return true, ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), eksCallTimeout)
	defer cancel()
	node, err := cs.CoreV1().Nodes().Get(ctx, in.NodeName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return true, ""
	}
	if err != nil {
		return false, ""
	}
	res, err := drain.Node(ctx, cs, node, drain.Options{StartedAt: started, Now: now})
	if err != nil {
		return false, ""
	}
	if len(res.Blocked) > 0 {
		return res.Done, res.Message()
	}
	return res.Done, ""
}

// rollBack restores the node group's release after a failed update: new
// nodes launch from the previous one again.
func (f *EKSFace) rollBack(env core.FaceEnv, n *eksNodegroup, u *eksUpdate) {
	if u.Type != EKSUpdateVersion {
		return
	}
	n.Version, n.ReleaseVersion = u.PrevVersion, u.PrevRelease
	if n.LaunchTemplate != nil && u.PrevLTVersion != "" {
		n.LaunchTemplate.Version = u.PrevLTVersion
	}
	_ = f.reapplyASG(env, n)
}

// relabel applies the node group's labels and taints to its Nodes, as EKS
// applies a configuration update to the nodes it has.
func (f *EKSFace) relabel(cs kubernetes.Interface, n *eksNodegroup, u *eksUpdate) error {
	ctx, cancel := context.WithTimeout(context.Background(), eksCallTimeout)
	defer cancel()
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: EKSLabelNodegroup + "=" + n.Name})
	if err != nil {
		return err
	}
	labels := map[string]any{}
	for k := range u.OldLabels {
		labels[k] = nil
	}
	for k, v := range n.Labels {
		labels[k] = v
	}
	isOld := func(t corev1.Taint) bool {
		return slices.ContainsFunc(u.OldTaints, func(o eksTaint) bool { return o.Key == t.Key && eksTaintEffects[o.Effect] == string(t.Effect) })
	}
	for _, node := range nodes.Items {
		taints := slices.DeleteFunc(slices.Clone(node.Spec.Taints), isOld)
		for _, t := range n.Taints {
			taints = append(taints, corev1.Taint{Key: t.Key, Value: t.Value, Effect: corev1.TaintEffect(eksTaintEffects[t.Effect])})
		}
		patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": labels}, "spec": map[string]any{"taints": taints}})
		if _, err := cs.CoreV1().Nodes().Patch(ctx, node.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return nil
}

// cleanUp removes what a deleted node group leaves in the workload
// cluster: the Nodes of its terminated instances (the cloud controller
// manager's part) and its bootstrap token.
func (f *EKSFace) cleanUp(env core.FaceEnv, n *eksNodegroup) {
	cs := f.client(env, n)
	if cs == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), eksCallTimeout)
	defer cancel()
	_ = cs.CoreV1().Nodes().DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: EKSLabelNodegroup + "=" + n.Name})
	if id, _, ok := cutToken(n.Token); ok {
		_ = cs.CoreV1().Secrets(metav1.NamespaceSystem).Delete(ctx, bootstraputil.BootstrapTokenSecretName(id), metav1.DeleteOptions{})
	}
}

func cutToken(t string) (id, secret string, ok bool) {
	if len(t) != 23 || t[6] != '.' {
		return "", "", false
	}
	return t[:6], t[7:], true
}

// server returns the node agent's credentials for the workload API server
// at endpoint ("" for the first), nil when there is none.
func eksServer(env core.FaceEnv, endpoint string) *rest.Config {
	for _, s := range env.Cloud.Agent().Servers() {
		if endpoint == "" || s.Host == endpoint {
			return s
		}
	}
	return nil
}

// client returns a client of the workload cluster the node group's nodes
// join, nil when it has none.
func (f *EKSFace) client(env core.FaceEnv, n *eksNodegroup) kubernetes.Interface {
	if n.Endpoint == "" {
		return nil
	}
	if cs := f.clients[n.Endpoint]; cs != nil {
		return cs
	}
	cfg := eksServer(env, n.Endpoint)
	if cfg == nil {
		return nil
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil
	}
	if f.clients == nil {
		f.clients = map[string]kubernetes.Interface{}
	}
	f.clients[n.Endpoint] = cs
	return cs
}

// ensureToken gives a new node group what its nodes join with: the
// workload API server (the node agent's first), its CA's pin and a
// bootstrap token created in its kube-system namespace. Without a workload
// API server it does nothing: the nodes boot and never join.
func (f *EKSFace) ensureToken(env core.FaceEnv, n *eksNodegroup) error {
	cfg := eksServer(env, "")
	if cfg == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), eksCallTimeout)
	defer cancel()
	t, err := nodeagent.IssueJoinTicket(ctx, cfg, map[string]string{EKSLabelNodegroup: n.Name}, "EKS managed node group "+n.ARN)
	if err != nil {
		return fmt.Errorf("the node group's join ticket: %w", err)
	}
	n.Endpoint, n.CAHash, n.Token = t.Endpoint, t.CAHash, t.Token
	return nil
}
