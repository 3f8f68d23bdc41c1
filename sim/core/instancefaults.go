package core

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/mpool-dev/mpool/sim/nodeagent"
)

// InstanceFault is an instance's health fault: what goes wrong inside a
// running VM, for health checks to find (a MachineHealthCheck reading the
// Node, a cloud's own instance health checks). It is part of the instance's
// state, persisted, and shown in its snapshot (Instance.Fault); every face
// gets it, since the node agent and the core play it.
type InstanceFault string

// Instance faults.
const (
	// FaultNone: the instance is healthy.
	FaultNone InstanceFault = ""
	// FaultKubeletStopped: the kubelet stops heartbeating. Its Lease and
	// Node status are no longer renewed, its pods no longer tended, and the
	// node agent sets the Node's conditions Unknown (NodeStatusUnknown) the
	// node monitor grace period after the last renewal
	// (nodeagent.Options.NodeMonitorGracePeriod), as the node lifecycle
	// controller would. An instance that has not joined yet registers its
	// Node first. Clearing the fault restarts the kubelet: Ready=True
	// again.
	FaultKubeletStopped InstanceFault = "KubeletStopped"
	// FaultNodeNotReady: the kubelet keeps heartbeating but reports
	// Ready=False, reason KubeletNotReady (its network plugin is not
	// ready).
	FaultNodeNotReady InstanceFault = "NodeNotReady"
	// FaultNeverJoins: the instance runs but never joins: cloud-init never
	// gets to kubeadm join, no Node is registered; the instance stays
	// JoinJoining with a Message saying so. It applies to instances that
	// have not joined (SetInstanceFault refuses a joined one); clearing it
	// lets a running instance join. GroupFaults.NeverJoins arms it for a
	// group's next instances.
	FaultNeverJoins InstanceFault = "NeverJoins"
	// FaultCloudCheckFailing: the instance fails the cloud's own status
	// check (an EC2 instance status check impaired, an Azure VM's
	// application health Unhealthy) while its kubelet is unaffected. Faces
	// read it for their clouds' health checks and automatic repairs.
	FaultCloudCheckFailing InstanceFault = "CloudCheckFailing"
)

// InstanceFaults are the faults other than FaultNone.
var InstanceFaults = []InstanceFault{FaultKubeletStopped, FaultNodeNotReady, FaultNeverJoins, FaultCloudCheckFailing}

// neverJoinsMessage is the Message of an instance with FaultNeverJoins.
const neverJoinsMessage = "Not joined: the instance never gets to kubeadm join (simulated fault NeverJoins)"

// Validate reports whether f is FaultNone or one of InstanceFaults.
func (f InstanceFault) Validate() error {
	if f == FaultNone || slices.Contains(InstanceFaults, f) {
		return nil
	}
	return Invalidf("unknown instance fault %q: want one of %s, or empty to clear", string(f), joinFaults())
}

func joinFaults() string {
	s := make([]string, len(InstanceFaults))
	for i, f := range InstanceFaults {
		s[i] = string(f)
	}
	return strings.Join(s, ", ")
}

// ParseInstanceFault reads a fault by its name (KubeletStopped) or its
// kebab-case form (kubelet-stopped), case-insensitively; "none" and ""
// are FaultNone.
func ParseInstanceFault(s string) (InstanceFault, error) {
	norm := func(v string) string { return strings.ToLower(strings.ReplaceAll(v, "-", "")) }
	if n := norm(s); n == "" || n == "none" {
		return FaultNone, nil
	}
	for _, f := range InstanceFaults {
		if norm(string(f)) == norm(s) {
			return f, nil
		}
	}
	return FaultNone, InstanceFault(s).Validate()
}

// kubelet is what the node agent's kubelet does under f.
func (f InstanceFault) kubelet() nodeagent.Health {
	switch f {
	case FaultKubeletStopped:
		return nodeagent.HealthKubeletStopped
	case FaultNodeNotReady:
		return nodeagent.HealthNotReady
	}
	return nodeagent.HealthOK
}

// SetInstanceFault sets (FaultNone: clears) the fault of the instance with
// this ID or providerID, in whichever group of whichever face it is. It
// returns a NotFound error when no instance has it, and an InvalidParameter
// error when the ID is several groups' (a scale set's instance IDs are
// ordinals: use the providerID or Scope.SetInstanceFault) or when
// FaultNeverJoins is set on an instance that has joined.
func (c *Cloud) SetInstanceFault(id string, f InstanceFault) error {
	if err := f.Validate(); err != nil {
		return err
	}
	c.mu.Lock()
	var keys []GroupKey
	for k, g := range c.st.Groups {
		for _, in := range g.Instances {
			if in.ID == id || in.ProviderID == id {
				keys = append(keys, k)
				break
			}
		}
	}
	c.mu.Unlock()
	switch len(keys) {
	case 0:
		return &Error{Code: CodeNotFound, Message: fmt.Sprintf("instance %q not found", id)}
	case 1:
	default:
		return Invalidf("instance ID %q is in %d groups: name it by its providerID", id, len(keys))
	}
	g, err := c.lockGroup(keys[0])
	if err != nil {
		return err
	}
	in := g.findByIDOrProviderID(id)
	if in == nil {
		c.mu.Unlock()
		return &Error{Code: CodeNotFound, Message: fmt.Sprintf("instance %q not found", id)}
	}
	now := c.clock.Now()
	if err := c.setFaultLocked(g, in, f, now); err != nil {
		c.mu.Unlock()
		return err
	}
	c.commitLocked(g, now)
	return nil
}

// SetInstanceFault sets (FaultNone: clears) the fault of the instance id
// of group name (see Cloud.SetInstanceFault) and returns the group. It
// returns a NotFound error when the group or the instance does not exist.
func (s Scope) SetInstanceFault(name, id string, f InstanceFault) (*Group, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	k := s.key(name)
	g, err := s.c.lockGroup(k)
	if err != nil {
		return nil, err
	}
	in := g.find(id)
	if in == nil {
		s.c.mu.Unlock()
		return nil, &Error{Code: CodeNotFound, Message: fmt.Sprintf("instance %q of scale group %q not found", id, k.String())}
	}
	now := s.c.clock.Now()
	if err := s.c.setFaultLocked(g, in, f, now); err != nil {
		s.c.mu.Unlock()
		return nil, err
	}
	return s.c.commitLocked(g, now), nil
}

// SetGroupInstanceFault gives the fault f to a fraction in [0, 1] of the
// group's live instances (neither deleting nor failed), chosen with the
// cloud's seeded random numbers among those that do not have it yet (for
// FaultNeverJoins: that have not joined either). The number is the
// fraction of the live instances rounded to the nearest integer, at least
// one for a positive fraction, at most the candidates. FaultNone clears
// the faults of that many faulted instances (1: all). It returns the IDs
// chosen, in creation order, or a NotFound error when the group does not
// exist.
func (s Scope) SetGroupInstanceFault(name string, fraction float64, f InstanceFault) ([]string, error) {
	return s.c.SetGroupInstanceFault(s.key(name), fraction, f)
}

// SetGroupInstanceFault is Scope.SetGroupInstanceFault for the group k.
func (c *Cloud) SetGroupInstanceFault(k GroupKey, fraction float64, f InstanceFault) ([]string, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	if fraction < 0 || fraction > 1 || math.IsNaN(fraction) {
		return nil, Invalidf("fraction must be within [0, 1], got %v", fraction)
	}
	g, err := c.lockGroup(k)
	if err != nil {
		return nil, err
	}
	now := c.clock.Now()
	live := 0
	var cands []*instanceState
	for _, in := range g.Instances {
		if in.State == StateDeleting || in.State == StateFailed {
			continue
		}
		live++
		if in.Fault == f || f == FaultNeverJoins && in.Join == JoinJoined {
			continue
		}
		cands = append(cands, in)
	}
	n := 0
	if fraction > 0 {
		n = min(len(cands), max(1, int(math.Round(fraction*float64(live)))))
	}
	picked := c.rng.Perm(len(cands))[:n]
	slices.Sort(picked)
	ids := make([]string, 0, n)
	for _, i := range picked {
		// Candidates are eligible: this cannot fail.
		_ = c.setFaultLocked(g, cands[i], f, now)
		ids = append(ids, cands[i].ID)
	}
	c.commitLocked(g, now)
	return ids, nil
}

// setFaultLocked changes in's fault and tells the node agent what its VM
// does now. Callers hold c.mu.
func (c *Cloud) setFaultLocked(g *groupState, in *instanceState, f InstanceFault, now time.Time) error {
	old := in.Fault
	if old == f {
		return nil
	}
	if f == FaultNeverJoins && in.Join == JoinJoined {
		return Invalidf("instance %q has joined already: NeverJoins applies to instances that have not (KubeletStopped stops a joined one's kubelet)", in.ID)
	}
	in.Fault, in.FaultSince = f, now
	if f == FaultNone {
		in.FaultSince = time.Time{}
	}
	c.changed(g)
	if in.State != StateRunning || in.Join == JoinFailed || c.agent == nil {
		return nil
	}
	switch {
	case f == FaultNeverJoins:
		// The join in progress is abandoned.
		c.events = append(c.events, agentEvent{kind: eventPowerOff, inst: c.agentInstance(g, in)})
		in.Join, in.Message = JoinJoining, neverJoinsMessage
	case old == FaultNeverJoins:
		in.Message = ""
		c.bootEvent(g, in)
	default:
		c.events = append(c.events, agentEvent{kind: eventHealth, inst: c.agentInstance(g, in)})
	}
	return nil
}

// findByIDOrProviderID returns the instance with this ID or providerID, or
// nil.
func (g *groupState) findByIDOrProviderID(id string) *instanceState {
	if in := g.find(id); in != nil {
		return in
	}
	for _, in := range g.Instances {
		if in.ProviderID == id {
			return in
		}
	}
	return nil
}
