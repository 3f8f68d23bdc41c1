package core

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"time"

	"k8s.io/utils/clock"
)

// wake nudges the simulation loop to recompute its next wake-up.
func (c *Cloud) wake() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// simulate advances groups as their transitions fall due.
func (c *Cloud) simulate(ctx context.Context) {
	for {
		c.mu.Lock()
		now := c.clock.Now()
		var next time.Time
		for k, g := range c.st.Groups {
			if !g.next.IsZero() && !now.Before(g.next) {
				c.advance(g, now)
			}
			if _, ok := c.st.Groups[k]; ok && !g.next.IsZero() && (next.IsZero() || g.next.Before(next)) {
				next = g.next
			}
		}
		events := c.takeEvents()
		c.mu.Unlock()
		c.dispatch(events)

		var timerC <-chan time.Time
		var timer clock.Timer
		if !next.IsZero() {
			// Measure from the clock's time now, not the time of the pass: a
			// clock stepped in between must not push the wake-up later.
			d := next.Sub(c.clock.Now())
			if d <= 0 {
				if ctx.Err() != nil {
					return
				}
				continue
			}
			timer = c.clock.NewTimer(max(d, minWake))
			timerC = timer.C()
		}
		select {
		case <-ctx.Done():
			if timer != nil {
				timer.Stop()
			}
			return
		case <-c.kick:
		case <-timerC:
		}
		if timer != nil {
			timer.Stop()
		}
	}
}

// advanceByKey brings group k up to date and returns it, or nil when it
// does not exist (or has just finished deleting). Callers hold c.mu.
func (c *Cloud) advanceByKey(k GroupKey) *groupState {
	g := c.st.Groups[k]
	if g == nil {
		return nil
	}
	c.advance(g, c.clock.Now())
	return c.st.Groups[k]
}

// advance applies every transition of g due at now: Creating → Booting →
// Running or Failed, Deleting → gone, and removes a deleted group once its
// last instance is gone. Callers hold c.mu.
func (c *Cloud) advance(g *groupState, now time.Time) {
	changed := false
	kept := g.Instances[:0]
	for _, in := range g.Instances {
		if in.State == StateCreating && !in.Held && !now.Before(in.ProvisionAt) {
			in.State = StateBooting
			changed = true
		}
		if in.State == StateBooting && !now.Before(in.BootAt) {
			changed = true
			if g.Simulation.FailureRate > 0 && c.rng.Float64() < g.Simulation.FailureRate {
				in.State = StateFailed
				in.Message = "Simulated boot failure"
			} else {
				in.State = StateRunning
				c.bootEvent(g, in)
			}
		}
		if in.State == StateDeleting && !now.Before(in.DeleteAt) {
			changed = true
			if g.index != nil {
				delete(g.index, in.ID)
			}
			c.addressGone(g, in.PrivateIP)
			continue
		}
		kept = append(kept, in)
	}
	clear(g.Instances[len(kept):])
	g.Instances = kept
	if changed {
		c.changed(g)
		g.gcModels()
	}
	if g.Deleting && len(g.Instances) == 0 {
		delete(c.st.Groups, g.key())
		c.dirty = true
		return
	}
	c.refresh(g, now)
}

// refresh recomputes g's operation and next due transition. Callers hold
// c.mu.
func (c *Cloud) refresh(g *groupState, now time.Time) {
	var next time.Time
	var creating, deleting int
	consider := func(t time.Time) {
		if next.IsZero() || t.Before(next) {
			next = t
		}
	}
	for _, in := range g.Instances {
		switch in.State {
		case StateCreating:
			creating++
			if !in.Held {
				consider(in.ProvisionAt)
			}
		case StateBooting:
			consider(in.BootAt)
		case StateDeleting:
			deleting++
			consider(in.DeleteAt)
		}
	}
	g.next = next

	typ := ""
	switch {
	case g.Deleting:
		typ = OperationDelete
	case creating > 0 || deleting > 0:
		typ = OperationScale
	}
	if typ == "" {
		g.Operation = nil
		return
	}
	if g.Operation == nil || g.Operation.Type != typ {
		c.st.NextOp++
		g.Operation = &Operation{ID: fmt.Sprintf("op-%d", c.st.NextOp), Type: typ, StartedAt: now}
	}
	g.Operation.Message = fmt.Sprintf("%d instances creating, %d deleting", creating, deleting)
}

// scale creates or deletes instances so that g has Capacity live ones.
// Callers hold c.mu.
func (c *Cloud) scale(g *groupState, now time.Time) {
	want := int(g.Capacity)
	have := live(g)
	if have < want {
		model := g.Models[g.ModelRef]
		perZone := map[string]int{}
		for _, in := range g.Instances {
			if in.State != StateDeleting {
				perZone[in.Zone]++
			}
		}
		for range want - have {
			zone := ""
			for _, z := range model.Zones {
				if zone == "" || perZone[z] < perZone[zone] {
					zone = z
				}
			}
			perZone[zone]++
			g.add(c.newInstance(g, model, zone, now))
		}
		return
	}
	if have > want {
		for _, in := range c.scaleInVictims(g, have-want) {
			c.deleteInstance(g, in, now)
		}
	}
}

// scaleInVictims picks n live instances to remove, by the cloud's one
// scale-in policy (PickScaleIn).
func (c *Cloud) scaleInVictims(g *groupState, n int) []*instanceState {
	var cands []*instanceState
	for _, in := range g.Instances {
		if in.State != StateDeleting {
			cands = append(cands, in)
		}
	}
	return PickScaleIn(cands, n, nil, func(in *instanceState) ScaleInKey {
		return ScaleInKey{Zone: in.Zone, Failed: in.State == StateFailed, CreatedAt: in.CreatedAt}
	})
}

func live(g *groupState) int {
	n := 0
	for _, in := range g.Instances {
		if in.State != StateDeleting {
			n++
		}
	}
	return n
}

// newInstance creates an instance of g's current model in zone, named by
// g's face. Callers hold c.mu.
func (c *Cloud) newInstance(g *groupState, model *Model, zone string, now time.Time) *instanceState {
	c.st.NextSeq++
	seq := c.st.NextSeq
	id := fmt.Sprintf("i-%08x", seq)
	ip := fmt.Sprintf("10.%d.%d.%d", (seq>>16)&0xff, (seq>>8)&0xff, seq&0xff)
	var ident InstanceIdentity
	addrs := c.addressIndex()
	scope := scopeID{g.Face, g.Scope}
	if f := c.faces[g.Face]; f != nil {
		ident = f.InstanceIdentity(NewInstance{
			Group: g.key(), Seq: seq, Ordinal: g.Created, ID: id, Zone: zone, PrivateIP: ip, Model: model, GroupPayload: g.Payload,
			AddressInUse: func(ip string) bool { return addrs[addrKey{scope, ip}] > 0 },
		})
	}
	g.Created++
	if ident.ID != "" && g.find(ident.ID) == nil {
		id = ident.ID
	}
	if ident.PrivateIP != "" {
		ip = ident.PrivateIP
	}
	addrs[addrKey{scope, ip}]++
	if ident.Hostname == "" {
		ident.Hostname = hostname(g.Name, id)
	}
	if ident.ProviderID == "" {
		ident.ProviderID = g.Face + ":///" + strings.TrimPrefix(g.Scope+"/", "/") + g.Name + "/" + id
	}
	payload := ident.Payload
	if checkPayload(payload) != nil {
		c.log.Error(nil, "Face returned an instance payload that is not JSON; dropping it", "face", g.Face, "instance", id)
		payload = nil
	}

	sim := g.Simulation
	boot := sim.BootDelay
	if sim.BootJitter > 0 {
		boot += time.Duration(c.rng.Int64N(int64(2*sim.BootJitter)+1)) - sim.BootJitter
	}
	boot = max(boot, 0)
	provisionAt := now.Add(sim.ProvisionDelay)
	wrongToken := g.WrongTokens > 0
	if wrongToken {
		g.WrongTokens--
	}
	var fault InstanceFault
	if g.NeverJoins > 0 {
		g.NeverJoins--
		fault = FaultNeverJoins
	}
	in := &instanceState{
		ID:          id,
		Seq:         seq,
		ProviderID:  ident.ProviderID,
		Hostname:    ident.Hostname,
		PrivateIP:   ip,
		Zone:        zone,
		State:       StateCreating,
		CreatedAt:   now,
		ProvisionAt: provisionAt,
		BootAt:      provisionAt.Add(boot),
		ModelHash:   g.ModelHash,
		ModelRef:    g.ModelRef,
		WrongToken:  wrongToken,
		Held:        ident.Hold,
		Fault:       fault,
		Payload:     clonePayload(payload),
	}
	if fault != FaultNone {
		in.FaultSince = now
	}
	if len(ident.Metadata) > 0 {
		in.Metadata = maps.Clone(ident.Metadata)
	}
	in.meta = defaultMetadata(in, in.Metadata)
	return in
}

// deleteInstance starts deleting in: the VM powers off at once (its Node
// stops heartbeating) and is gone after the group's DeleteDelay. Callers
// hold c.mu.
func (c *Cloud) deleteInstance(g *groupState, in *instanceState, now time.Time) {
	wasRunning := in.State == StateRunning
	in.State = StateDeleting
	in.DeleteAt = now.Add(g.Simulation.DeleteDelay)
	if wasRunning && c.agent != nil {
		c.events = append(c.events, agentEvent{kind: eventPowerOff, inst: c.agentInstance(g, in)})
	}
}
