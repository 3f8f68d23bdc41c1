package azureface

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/wire/azureapi"
)

// AKSCodePodDrainFailure is the error code of a scale-in (a lower count, or
// deleteMachines) AKS gave up on: a node it could not drain within
// drainTimeoutInMinutes, kept.
const AKSCodePodDrainFailure = "PodDrainFailure"

// aksScaleIn is an agent pool's scale-in: AKS cordons and drains the nodes
// it removes (PodDisruptionBudgets honoured) before deleting them, as it
// does on scale-down ("nodes are carefully cordoned and drained to minimize
// disruption to running applications"). A lower count picks the cordoned
// nodes first, then the highest instance IDs; deleteMachines names them.
// A node not drained within the pool's upgradeSettings.drainTimeoutInMinutes
// is uncordoned and kept, and the operation fails with PodDrainFailure; the
// next write of the pool (or deleteMachines) drains it again.
type aksScaleIn struct {
	// Draining are the nodes being drained (by instance ID), and since when.
	Draining map[string]time.Time `json:"draining,omitempty"`
	// Kept are the nodes that could not be drained, Message why.
	Kept    []string `json:"kept,omitempty"`
	Message string   `json:"message,omitempty"`
	// Failed is why the scale-in failed; it is over.
	Failed *azureapi.ErrorBody `json:"failed,omitempty"`
}

// extra is how many more nodes than its count the pool's scale set holds
// for the scale-in: those draining, and those kept.
func (s *aksScaleIn) extra() int32 {
	if s == nil {
		return 0
	}
	return int32(len(s.Draining) + len(s.Kept))
}

// resume starts the drains again after a failed scale-in: its kept nodes
// are drained anew from now.
func (s *aksScaleIn) resume(now time.Time) {
	if s.Draining == nil {
		s.Draining = map[string]time.Time{}
	}
	for _, id := range s.Kept {
		s.Draining[id] = now
	}
	s.Kept, s.Message, s.Failed = nil, "", nil
}

// drains reports whether the pool's nodes are drained before they go: they
// join a workload cluster.
func (h *azureHandler) drains(p *aksPool) bool { return h.workloadOf(p) != nil }

// startScaleIn starts draining the nodes a write of count removes from
// g: the cordoned ones first, then the highest instance IDs. A write
// while nodes are draining for an earlier one adds to them or, when the
// count grew, stops the newest drains (their nodes uncordoned).
func (h *azureHandler) startScaleIn(p *aksPool, g *core.Group, count int, now time.Time) {
	if p.ScaleIn != nil && p.ScaleIn.Failed != nil {
		p.ScaleIn.resume(now)
	}
	s := p.ScaleIn
	if s == nil {
		s = &aksScaleIn{Draining: map[string]time.Time{}}
	}
	var idle []core.Instance
	live := 0
	for _, in := range g.Instances {
		if in.State == core.StateDeleting {
			continue
		}
		live++
		if _, ok := s.Draining[in.ID]; !ok {
			idle = append(idle, in)
		}
	}
	switch excess := live - len(s.Draining) - count; {
	case excess > 0:
		cordoned := map[string]bool{}
		h.onWorkload(p, func(ctx context.Context, cs kubernetes.Interface) {
			for _, in := range idle {
				if n, err := cs.CoreV1().Nodes().Get(ctx, nodeOf(in), metav1.GetOptions{}); err == nil && n.Spec.Unschedulable {
					cordoned[in.ID] = true
				}
			}
		})
		slices.SortFunc(idle, func(a, b core.Instance) int {
			if cordoned[a.ID] != cordoned[b.ID] {
				if cordoned[a.ID] {
					return -1
				}
				return 1
			}
			return compareInstanceIDs(b.ID, a.ID)
		})
		for _, in := range idle[:excess] {
			s.Draining[in.ID] = now
		}
	case excess < 0:
		// More nodes wanted again: the newest drains stop.
		ids := slices.SortedFunc(maps.Keys(s.Draining), func(a, b string) int { return s.Draining[b].Compare(s.Draining[a]) })
		for _, id := range ids[:min(-excess, len(ids))] {
			delete(s.Draining, id)
			if in, ok := instanceByID(g, id); ok {
				h.onBlocked(h.workloadOf(p), in, AKSUndrainableSchedule)
			}
		}
	}
	p.ScaleIn = nil
	if len(s.Draining) > 0 {
		p.ScaleIn = s
	}
}

// advanceScaleIn takes one step of p's scale-in and reports whether p
// changed: a drained node goes with its Node (the scale set's capacity
// lowered by one); a node not drained within drainTimeoutInMinutes is
// uncordoned and kept; once no node drains, the scale-in ends, Failed with
// PodDrainFailure when a node was kept.
func (h *azureHandler) advanceScaleIn(c *aksCluster, p *aksPool) bool {
	s := p.ScaleIn
	sc := aksScope(h, c)
	g, err := sc.GetGroup(groupName(p.VMSS))
	if err != nil {
		return false
	}
	now := h.env.Cloud.Clock().Now()
	set := h.upgradeSettings(p)
	cs := h.workloadOf(p)
	changed := false
	var gone []core.Instance
	for _, id := range slices.Sorted(maps.Keys(s.Draining)) {
		in, ok := instanceByID(g, id)
		if !ok || in.State == core.StateDeleting {
			delete(s.Draining, id)
			changed = true
			continue
		}
		done, blocked := h.drainPass(cs, in, s.Draining[id], now)
		switch {
		case done:
			delete(s.Draining, id)
			gone, changed = append(gone, in), true
		case now.Sub(s.Draining[id]) >= set.drainTimeout:
			delete(s.Draining, id)
			s.Kept, changed = append(s.Kept, id), true
			s.Message = fmt.Sprintf("Drain node %s failed when evicting pods within drainTimeoutInMinutes (%s): %s. This is often caused by a restrictive Pod Disruption Budget (PDB) policy.",
				nodeOf(in), set.drainTimeout, blocked)
			h.onBlocked(cs, in, AKSUndrainableSchedule)
		}
	}
	if len(gone) > 0 {
		h.removeInstances(sc, p, gone)
	}
	if len(s.Draining) > 0 {
		return changed
	}
	p.OpStart = now
	if len(s.Kept) == 0 {
		p.ScaleIn = nil
		return true
	}
	s.Failed = &azureapi.ErrorBody{Code: AKSCodePodDrainFailure, Message: s.Message +
		fmt.Sprintf(" %d node(s) could not be drained and were kept; fix what blocks their eviction, then update the agent pool again to retry.", len(s.Kept))}
	return true
}

// instanceByID finds the instance id of g.
func instanceByID(g *core.Group, id string) (core.Instance, bool) {
	i := slices.IndexFunc(g.Instances, func(in core.Instance) bool { return in.ID == id })
	if i < 0 {
		return core.Instance{}, false
	}
	return g.Instances[i], true
}

// compareInstanceIDs orders a Uniform scale set's instance IDs
// numerically (0, 1, ..., 10).
func compareInstanceIDs(a, b string) int {
	na, errA := strconv.Atoi(a)
	nb, errB := strconv.Atoi(b)
	if errA == nil && errB == nil {
		return na - nb
	}
	return strings.Compare(a, b)
}
