package core

import "fmt"

// ReleaseInstance lets an instance held Creating (InstanceIdentity.Hold)
// go on: it provisions and boots from now on, after the group's delays as
// they were when it was created. Releasing an instance that is not held
// does nothing. It returns a NotFound error when the group or the instance
// does not exist.
func (s Scope) ReleaseInstance(name, id string) (*Group, error) {
	return s.c.releaseInstance(s.key(name), id)
}

func (c *Cloud) releaseInstance(k GroupKey, id string) (*Group, error) {
	c.mu.Lock()
	now := c.clock.Now()
	g := c.advanceByKey(k)
	if g == nil {
		c.mu.Unlock()
		return nil, NotFound(k)
	}
	in := g.find(id)
	if in == nil {
		c.mu.Unlock()
		return nil, &Error{Code: CodeNotFound, Message: fmt.Sprintf("instance %q of scale group %q not found", id, k.String())}
	}
	if in.Held {
		in.Held = false
		// The delays run from the release: a held VM was not provisioning.
		if wait := now.Sub(in.CreatedAt); wait > 0 {
			in.ProvisionAt = in.ProvisionAt.Add(wait)
			in.BootAt = in.BootAt.Add(wait)
		}
	}
	return c.commitLocked(g, now), nil
}
