package core

// Scope is the core as one face sees it in one of its scopes: the groups
// whose key has that face and scope. A face obtains it with Cloud.Scope for
// every request, from whatever its protocol scopes resources by
// (subscription and resource group, account and region, ...). The local
// face's scope is Cloud.Scope(LocalFace, ""), whose methods Cloud's own
// name-based methods are.
type Scope struct {
	c     *Cloud
	face  string
	scope string
}

// Scope returns face's view of the core under scope.
func (c *Cloud) Scope(face, scope string) Scope { return Scope{c: c, face: face, scope: scope} }

func (s Scope) key(name string) GroupKey { return GroupKey{Face: s.face, Scope: s.scope, Name: name} }

// Face is the scope's face name.
func (s Scope) Face() string { return s.face }

// Name is the scope's opaque string.
func (s Scope) Name() string { return s.scope }

// ListGroups returns the names of the scope's groups, sorted.
func (s Scope) ListGroups() []string { return s.c.listGroups(s.face, s.scope) }

// GetGroup returns the group with its instances, or a NotFound error.
func (s Scope) GetGroup(name string) (*Group, error) { return s.c.getGroup(s.key(name)) }

// ApplyGroup creates the group or updates its model, capacity, simulation
// knobs and payload, then creates or deletes instances to reach the
// capacity; new instances are named by the face (Face.InstanceIdentity).
// Existing instances keep their model. When the capacity shrinks the cloud
// picks the victims: failed instances first, then from the zone with the
// most instances, newest first. The quotas (global and the scope's) apply to
// increases.
func (s Scope) ApplyGroup(name string, spec GroupSpec) (*Group, error) {
	return s.c.applyGroup(s.key(name), spec)
}

// SetCapacity changes only the capacity of an existing group, the way a
// cloud's own autoscaler or an operator does (`az vmss scale`, the ASG's
// SetDesiredCapacity): the model and custom data stay. When the capacity
// shrinks the cloud picks the victims, as ApplyGroup does. The quotas apply
// to increases.
func (s Scope) SetCapacity(name string, capacity int32) (*Group, error) {
	return s.c.setCapacity(s.key(name), capacity)
}

// SetGroupFaults arms instance-level faults of a group (see GroupFaults).
// It returns a NotFound error when the group does not exist.
func (s Scope) SetGroupFaults(name string, f GroupFaults) (*Group, error) {
	return s.c.setGroupFaults(s.key(name), f)
}

// DeleteInstances deletes the instances with these IDs and lowers the
// capacity by the number it deleted. Unknown or already deleting IDs are
// ignored. It returns a NotFound error when the group does not exist.
func (s Scope) DeleteInstances(name string, ids []string) (*Group, error) {
	return s.c.deleteInstances(s.key(name), ids)
}

// DeleteGroup starts deleting the group and all its instances. The group is
// reported with a Delete operation until its last instance is gone. It
// returns a NotFound error when the group does not exist.
func (s Scope) DeleteGroup(name string) (*Group, error) { return s.c.deleteGroup(s.key(name)) }

// SetSimulation changes a group's simulation knobs. They apply to instances
// created (and deleted) from now on.
func (s Scope) SetSimulation(name string, p SimulationPatch) (*Group, error) {
	return s.c.setSimulation(s.key(name), p)
}

// UpdateGroupPayload replaces the group's face payload by fn's answer,
// atomically (fn runs under the core's lock; see PayloadFunc). It returns a
// NotFound error when the group does not exist.
func (s Scope) UpdateGroupPayload(name string, fn PayloadFunc) (*Group, error) {
	return s.c.updateGroupPayload(s.key(name), fn)
}

// UpdateInstancePayload replaces an instance's face payload by fn's answer,
// atomically (see PayloadFunc). It returns a NotFound error when the group
// or the instance does not exist.
func (s Scope) UpdateInstancePayload(name, id string, fn PayloadFunc) (*Group, error) {
	return s.c.updateInstancePayload(s.key(name), id, fn)
}

// MaxInstances returns the scope's instance quota (0: unlimited; the
// global quota, Cloud.MaxInstances, applies as well).
func (s Scope) MaxInstances() int {
	s.c.mu.Lock()
	defer s.c.mu.Unlock()
	return s.c.scopeQuotas[scopeID{s.face, s.scope}]
}

// SetMaxInstances sets the scope's instance quota, e.g. a region's (0:
// unlimited). Like the global quota it limits later capacity increases of
// the scope's groups and is not persisted: faces set it when they start.
func (s Scope) SetMaxInstances(n int) error {
	if n < 0 {
		return Invalidf("maxInstances must not be negative")
	}
	s.c.mu.Lock()
	defer s.c.mu.Unlock()
	if n == 0 {
		delete(s.c.scopeQuotas, scopeID{s.face, s.scope})
	} else {
		s.c.scopeQuotas[scopeID{s.face, s.scope}] = n
	}
	return nil
}

// The local face's groups, by name (the empty scope of LocalFace).

func (c *Cloud) local() Scope { return c.Scope(LocalFace, "") }

// ListGroups returns the names of the local face's groups, sorted.
func (c *Cloud) ListGroups() []string { return c.local().ListGroups() }

// GetGroup returns the local face's group name (see Scope.GetGroup).
func (c *Cloud) GetGroup(name string) (*Group, error) { return c.local().GetGroup(name) }

// ApplyGroup creates or updates the local face's group name (see
// Scope.ApplyGroup).
func (c *Cloud) ApplyGroup(name string, spec GroupSpec) (*Group, error) {
	return c.local().ApplyGroup(name, spec)
}

// SetCapacity changes the capacity of the local face's group name (see
// Scope.SetCapacity).
func (c *Cloud) SetCapacity(name string, capacity int32) (*Group, error) {
	return c.local().SetCapacity(name, capacity)
}

// SetGroupFaults arms instance-level faults of the local face's group name
// (see Scope.SetGroupFaults).
func (c *Cloud) SetGroupFaults(name string, f GroupFaults) (*Group, error) {
	return c.local().SetGroupFaults(name, f)
}

// DeleteInstances deletes instances of the local face's group name (see
// Scope.DeleteInstances).
func (c *Cloud) DeleteInstances(name string, ids []string) (*Group, error) {
	return c.local().DeleteInstances(name, ids)
}

// DeleteGroup starts deleting the local face's group name (see
// Scope.DeleteGroup).
func (c *Cloud) DeleteGroup(name string) (*Group, error) { return c.local().DeleteGroup(name) }

// SetSimulation changes the knobs of the local face's group name (see
// Scope.SetSimulation).
func (c *Cloud) SetSimulation(name string, p SimulationPatch) (*Group, error) {
	return c.local().SetSimulation(name, p)
}

// CustomData returns a copy of the custom data of the group's current model
// (snapshots leave it out), for a face whose partial updates keep it. It
// returns a NotFound error when the group does not exist.
func (s Scope) CustomData(name string) ([]byte, error) {
	s.c.mu.Lock()
	defer s.c.mu.Unlock()
	g := s.c.st.Groups[s.key(name)]
	if g == nil {
		return nil, NotFound(s.key(name))
	}
	if m := g.Models[g.ModelRef]; m != nil && m.CustomData != nil {
		return append([]byte(nil), m.CustomData...), nil
	}
	return nil, nil
}
