package cloudsim

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/clock"

	"github.com/mpool-dev/mpool/internal/cloudsim/nodeagent"
)

// flushInterval bounds how often the state file is rewritten: changes are
// batched, so 10,000 instances booting cost a handful of writes.
const flushInterval = 200 * time.Millisecond

// minWake is the shortest time the simulation loop sleeps between two due
// transitions; transitions due within it are processed together.
const minWake = 10 * time.Millisecond

// DefaultKubeletVersion is the version simulated Nodes report when the model
// sets no ExtraVersion.
const DefaultKubeletVersion = "v1.37.1"

// Options configure the simulated cloud.
type Options struct {
	// Addr is the HTTP listen address of the Server (default 127.0.0.1:0).
	// Unused by NewCloud.
	Addr string
	// DataDir holds the cloud's state; empty keeps it in memory only.
	DataDir string
	// Clock drives every simulated delay (default: the real clock).
	Clock clock.WithTicker
	// Seed seeds the simulation's and the fault injector's random numbers.
	// Zero picks a random seed.
	Seed uint64
	// DefaultSimulation are the knobs of groups that set none (default
	// DefaultSimulation()).
	DefaultSimulation *Simulation
	// MaxInstances is the instance quota across all groups; 0 is unlimited.
	MaxInstances int
	// Faults are the initial fault injection switches of the Server.
	Faults Faults
	// NodeAgent configures the simulated VMs' join. Without credentials, no
	// instance joins a cluster.
	NodeAgent nodeagent.Options
}

// Cloud is the simulated cloud's core: scale groups, their instances and
// the node agent that joins booted instances. It has no wire protocol; faces
// (face_local.go) translate requests into its methods. Every method is safe
// for concurrent use and first brings the group up to date with the clock,
// so the state a caller sees is never stale.
type Cloud struct {
	clock clock.WithTicker
	log   logr.Logger
	store *store
	agent *nodeagent.Agent

	mu           sync.Mutex
	st           *cloudState
	rng          *rand.Rand
	defaultSim   Simulation
	maxInstances int
	dirty        bool
	events       []agentEvent

	flushMu sync.Mutex
	kick    chan struct{}
	cancel  context.CancelFunc
	done    sync.WaitGroup
	stopped sync.Once
}

// agentEvent is a boot or power-off the node agent must hear about, collected
// under the lock and delivered after it.
type agentEvent struct {
	powerOff bool
	inst     nodeagent.Instance
}

// NewCloud loads the state in opts.DataDir and starts the cloud's background
// loops (simulation, persistence, node agent). They stop when ctx is
// cancelled or Stop is called.
func NewCloud(ctx context.Context, opts Options) (*Cloud, error) {
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	seed := opts.Seed
	if seed == 0 {
		seed = rand.Uint64()
	}
	sim := DefaultSimulation()
	if opts.DefaultSimulation != nil {
		sim = *opts.DefaultSimulation
	}
	if err := sim.validate(); err != nil {
		return nil, fmt.Errorf("default simulation: %w", err)
	}
	c := &Cloud{
		clock:        opts.Clock,
		log:          logr.FromContextOrDiscard(ctx).WithName("cloudsim"),
		rng:          rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		defaultSim:   sim,
		maxInstances: opts.MaxInstances,
		kick:         make(chan struct{}, 1),
		st:           newState(),
	}
	if opts.DataDir != "" {
		c.store = &store{dir: opts.DataDir}
		st, err := c.store.load()
		if err != nil {
			return nil, err
		}
		c.st = st
	}
	if len(opts.NodeAgent.Credentials) > 0 {
		a, err := nodeagent.New(opts.NodeAgent, opts.Clock, c.reportJoin)
		if err != nil {
			return nil, fmt.Errorf("starting the node agent: %w", err)
		}
		c.agent = a
	}

	ctx, cancel := context.WithCancel(ctx)
	c.cancel = cancel
	c.resume()
	if c.agent != nil {
		c.done.Add(1)
		go func() { defer c.done.Done(); c.agent.Run(ctx) }()
	}
	c.done.Add(2)
	go func() { defer c.done.Done(); c.simulate(ctx) }()
	go func() { defer c.done.Done(); c.flushLoop(ctx) }()
	return c, nil
}

// Stop stops the background loops and writes the state. It is safe to call
// more than once.
func (c *Cloud) Stop() error {
	var err error
	c.stopped.Do(func() {
		c.cancel()
		c.done.Wait()
		err = c.Flush()
	})
	return err
}

// resume re-arms what was in flight when the state was saved: booting
// instances boot on schedule (their times are absolute), running instances
// join or resume their heartbeat, deleted ones stay powered off.
func (c *Cloud) resume() {
	c.mu.Lock()
	now := c.clock.Now()
	for _, g := range c.st.Groups {
		for _, in := range g.Instances {
			switch {
			case in.State == StateRunning && in.Join != JoinFailed:
				c.bootEvent(g, in)
			case in.State == StateDeleting && in.Join == JoinJoined:
				c.events = append(c.events, agentEvent{powerOff: true, inst: c.agentInstance(g, in)})
			}
		}
		c.refresh(g, now)
	}
	events := c.takeEvents()
	c.mu.Unlock()
	c.dispatch(events)
}

// ListGroups returns the names of all groups, sorted.
func (c *Cloud) ListGroups() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	names := make([]string, 0, len(c.st.Groups))
	for n := range c.st.Groups {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// GetGroup returns the group with its instances, or a NotFound error.
func (c *Cloud) GetGroup(name string) (*Group, error) {
	c.mu.Lock()
	g := c.advanceByName(name)
	var out *Group
	if g != nil {
		out = c.snapshot(g)
	}
	events := c.takeEvents()
	c.mu.Unlock()
	c.dispatch(events)
	if out == nil {
		return nil, notFound(name)
	}
	return out, nil
}

// ApplyGroup creates the group or updates its model, capacity and
// simulation knobs, then creates or deletes instances to reach the capacity.
// Existing instances keep their model. When the capacity shrinks the cloud
// picks the victims: failed instances first, then from the zone with the
// most instances, newest first.
func (c *Cloud) ApplyGroup(name string, spec GroupSpec) (*Group, error) {
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 || len(name) > 200 {
		return nil, invalidf("invalid group name %q: must be a DNS-1123 subdomain of at most 200 characters", name)
	}
	if spec.Capacity < 0 {
		return nil, invalidf("capacity must not be negative, got %d", spec.Capacity)
	}
	for _, z := range spec.Model.Zones {
		if z == "" {
			return nil, invalidf("zones must not be empty strings")
		}
	}

	c.mu.Lock()
	g := c.advanceByName(name)
	now := c.clock.Now()
	sim := c.defaultSim
	if g != nil {
		sim = g.Simulation
	}
	sim = sim.apply(spec.Simulation)
	if err := sim.validate(); err != nil {
		c.mu.Unlock()
		return nil, err
	}
	if g != nil && g.Deleting {
		c.mu.Unlock()
		return nil, &Error{Code: CodeConflict, Message: fmt.Sprintf("scale group %q is being deleted", name)}
	}
	if err := c.checkQuota(name, g, spec.Capacity); err != nil {
		c.mu.Unlock()
		return nil, err
	}
	if g == nil {
		g = &groupState{Name: name, CreatedAt: now, Models: map[string]*Model{}}
		c.st.Groups[name] = g
	}
	m := copyModel(spec.Model)
	key := modelKey(m)
	g.Models[key] = m
	g.ModelRef = key
	g.ModelHash = spec.ModelHash
	g.Simulation = sim
	g.Capacity = spec.Capacity
	c.scale(g, now)
	g.gcModels()
	return c.commitLocked(g, now), nil
}

// SetCapacity changes only the capacity of an existing group, the way a
// cloud's own autoscaler or an operator does (`az vmss scale`, the ASG's
// SetDesiredCapacity): the model and custom data stay. When the capacity
// shrinks the cloud picks the victims, as ApplyGroup does. The quota applies
// to increases.
func (c *Cloud) SetCapacity(name string, capacity int32) (*Group, error) {
	if capacity < 0 {
		return nil, invalidf("capacity must not be negative, got %d", capacity)
	}
	c.mu.Lock()
	g := c.advanceByName(name)
	if g == nil {
		c.mu.Unlock()
		return nil, notFound(name)
	}
	if g.Deleting {
		c.mu.Unlock()
		return nil, &Error{Code: CodeConflict, Message: fmt.Sprintf("scale group %q is being deleted", name)}
	}
	if err := c.checkQuota(name, g, capacity); err != nil {
		c.mu.Unlock()
		return nil, err
	}
	now := c.clock.Now()
	g.Capacity = capacity
	c.scale(g, now)
	return c.commitLocked(g, now), nil
}

// checkQuota refuses a capacity for group name (g, nil when it does not
// exist yet) that would take the instances of all groups above the quota.
// Lowering or keeping a group's capacity is always allowed. Callers hold
// c.mu.
func (c *Cloud) checkQuota(name string, g *groupState, capacity int32) error {
	if c.maxInstances <= 0 || g != nil && capacity <= g.Capacity {
		return nil
	}
	others := 0
	for n, og := range c.st.Groups {
		if n != name {
			others += live(og)
		}
	}
	if others+int(capacity) > c.maxInstances {
		return &Error{Code: CodeQuotaExceeded, Message: fmt.Sprintf(
			"capacity %d for scale group %q exceeds the instance quota: %d of %d instances are used by other groups",
			capacity, name, others, c.maxInstances)}
	}
	return nil
}

// SetGroupFaults arms instance-level faults of a group (see GroupFaults).
// It returns a NotFound error when the group does not exist.
func (c *Cloud) SetGroupFaults(name string, f GroupFaults) (*Group, error) {
	if f.WrongTokens < 0 {
		return nil, invalidf("wrongTokens must not be negative, got %d", f.WrongTokens)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	g := c.advanceByName(name)
	if g == nil {
		return nil, notFound(name)
	}
	g.WrongTokens = f.WrongTokens
	c.dirty = true
	return c.snapshot(g), nil
}

// DeleteInstances deletes the instances with these IDs and lowers the
// capacity by the number it deleted. Unknown or already deleting IDs are
// ignored. It returns a NotFound error when the group does not exist.
func (c *Cloud) DeleteInstances(name string, ids []string) (*Group, error) {
	c.mu.Lock()
	g := c.advanceByName(name)
	if g == nil {
		c.mu.Unlock()
		return nil, notFound(name)
	}
	now := c.clock.Now()
	for _, id := range ids {
		in := g.find(id)
		if in == nil || in.State == StateDeleting {
			continue
		}
		c.deleteInstance(g, in, now)
		if g.Capacity > 0 {
			g.Capacity--
		}
	}
	return c.commitLocked(g, now), nil
}

// DeleteGroup starts deleting the group and all its instances. The group is
// reported with a Delete operation until its last instance is gone. It
// returns a NotFound error when the group does not exist.
func (c *Cloud) DeleteGroup(name string) (*Group, error) {
	c.mu.Lock()
	g := c.advanceByName(name)
	if g == nil {
		c.mu.Unlock()
		return nil, notFound(name)
	}
	now := c.clock.Now()
	g.Deleting = true
	g.Capacity = 0
	for _, in := range g.Instances {
		if in.State != StateDeleting {
			c.deleteInstance(g, in, now)
		}
	}
	return c.commitLocked(g, now), nil
}

// SetSimulation changes a group's simulation knobs. They apply to instances
// created (and deleted) from now on.
func (c *Cloud) SetSimulation(name string, p SimulationPatch) (*Group, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	g := c.advanceByName(name)
	if g == nil {
		return nil, notFound(name)
	}
	sim := g.Simulation.apply(&p)
	if err := sim.validate(); err != nil {
		return nil, err
	}
	g.Simulation = sim
	c.dirty = true
	return c.snapshot(g), nil
}

// DefaultSimulationKnobs returns the knobs new groups start with.
func (c *Cloud) DefaultSimulationKnobs() Simulation {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.defaultSim
}

// SetDefaultSimulation changes the knobs new groups start with.
func (c *Cloud) SetDefaultSimulation(p SimulationPatch) (Simulation, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	sim := c.defaultSim.apply(&p)
	if err := sim.validate(); err != nil {
		return Simulation{}, err
	}
	c.defaultSim = sim
	return sim, nil
}

// MaxInstances returns the instance quota (0: unlimited).
func (c *Cloud) MaxInstances() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.maxInstances
}

// SetMaxInstances sets the instance quota (0: unlimited). Running instances
// are never removed for it; it limits later capacity increases.
func (c *Cloud) SetMaxInstances(n int) error {
	if n < 0 {
		return invalidf("maxInstances must not be negative")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.maxInstances = n
	return nil
}

// Flush writes the state file now if anything changed.
func (c *Cloud) Flush() error {
	if c.store == nil {
		return nil
	}
	c.flushMu.Lock()
	defer c.flushMu.Unlock()
	c.mu.Lock()
	if !c.dirty {
		c.mu.Unlock()
		return nil
	}
	data, err := json.Marshal(c.st)
	c.dirty = false
	c.mu.Unlock()
	if err != nil {
		return fmt.Errorf("encoding cloud state: %w", err)
	}
	if err := c.store.write(data); err != nil {
		c.mu.Lock()
		c.dirty = true
		c.mu.Unlock()
		return err
	}
	return nil
}

func (c *Cloud) flushLoop(ctx context.Context) {
	if c.store == nil {
		return
	}
	t := c.clock.NewTicker(flushInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
			if err := c.Flush(); err != nil {
				c.log.Error(err, "Writing cloud state")
			}
		}
	}
}

// hostname derives an instance's host name (and default Node name) from the
// group name and the instance ID.
func hostname(group, id string) string {
	return strings.ReplaceAll(group, ".", "-") + "-" + id
}

// ProviderID returns the Node providerID of an instance of the simulated
// cloud: local:///<group>/<instance>.
func ProviderID(group, id string) string {
	return "local:///" + group + "/" + id
}

// bootEvent queues the node agent's boot of a running instance, or records
// why it will not join. Callers hold c.mu.
func (c *Cloud) bootEvent(g *groupState, in *instanceState) {
	if c.agent == nil {
		in.Message = "Not joining a cluster: the simulated cloud runs without node-agent credentials"
		return
	}
	if in.Join == JoinNone {
		in.Join = JoinJoining
	}
	c.events = append(c.events, agentEvent{inst: c.agentInstance(g, in)})
}

func (c *Cloud) agentInstance(g *groupState, in *instanceState) nodeagent.Instance {
	m := g.Models[in.ModelRef]
	if m == nil {
		m = &Model{}
	}
	get := func(k, def string) string {
		if v := m.Extra[k]; v != "" {
			return v
		}
		return def
	}
	return nodeagent.Instance{
		Key:            g.Name + "/" + in.ID,
		ID:             in.ID,
		Hostname:       in.Hostname,
		PrivateIP:      in.PrivateIP,
		Zone:           in.Zone,
		ProviderID:     ProviderID(g.Name, in.ID),
		InstanceType:   m.InstanceType,
		Image:          m.Image,
		KubeletVersion: get(ExtraVersion, DefaultKubeletVersion),
		CPU:            get(ExtraCPU, "2"),
		Memory:         get(ExtraMemory, "8Gi"),
		CustomData:     m.CustomData,
		WrongToken:     in.WrongToken,
		Joined:         in.Join == JoinJoined,
		NodeName:       in.NodeName,
		Endpoint:       in.Endpoint,
	}
}

func (c *Cloud) takeEvents() []agentEvent {
	ev := c.events
	c.events = nil
	return ev
}

// dispatch hands events to the node agent; called without c.mu.
func (c *Cloud) dispatch(events []agentEvent) {
	if c.agent == nil {
		return
	}
	for _, e := range events {
		if e.powerOff {
			c.agent.PowerOff(e.inst)
		} else {
			c.agent.Boot(e.inst)
		}
	}
}

// reportJoin records the node agent's progress on an instance.
func (c *Cloud) reportJoin(r nodeagent.Result) {
	group, id, _ := strings.Cut(r.Key, "/")
	c.mu.Lock()
	defer c.mu.Unlock()
	g := c.st.Groups[group]
	if g == nil {
		return
	}
	in := g.find(id)
	if in == nil || in.State != StateRunning {
		return
	}
	in.Join = JoinPhase(r.Phase)
	in.Message = r.Message
	if r.NodeName != "" {
		in.NodeName = r.NodeName
	}
	if r.Endpoint != "" {
		in.Endpoint = r.Endpoint
	}
	c.dirty = true
}

// snapshot copies g for callers, without custom data. Callers hold c.mu.
func (c *Cloud) snapshot(g *groupState) *Group {
	out := &Group{
		Name:       g.Name,
		Capacity:   g.Capacity,
		ModelHash:  g.ModelHash,
		Simulation: g.Simulation,
		CreatedAt:  g.CreatedAt,
		Instances:  make([]Instance, len(g.Instances)),
	}
	if m := g.Models[g.ModelRef]; m != nil {
		out.Model = *copyModel(*m)
		out.Model.CustomData = nil
	}
	if g.Operation != nil {
		op := *g.Operation
		out.Operation = &op
	}
	for i, in := range g.Instances {
		out.Instances[i] = Instance{
			ID:         in.ID,
			ProviderID: ProviderID(g.Name, in.ID),
			Hostname:   in.Hostname,
			PrivateIP:  in.PrivateIP,
			Zone:       in.Zone,
			State:      in.State,
			CreatedAt:  in.CreatedAt,
			ModelHash:  in.ModelHash,
			Message:    in.Message,
			Join:       in.Join,
			NodeName:   in.NodeName,
			WrongToken: in.WrongToken,
		}
	}
	out.Faults = GroupFaults{WrongTokens: g.WrongTokens}
	return out
}

// commitLocked finishes a change to g made under c.mu: it refreshes the
// group's derived state, marks the state for the next flush, takes a
// snapshot for the caller, releases c.mu, then hands pending events to the
// node agent and wakes the background loop.
func (c *Cloud) commitLocked(g *groupState, now time.Time) *Group {
	c.refresh(g, now)
	c.dirty = true
	out := c.snapshot(g)
	events := c.takeEvents()
	c.mu.Unlock()
	c.dispatch(events)
	c.wake()
	return out
}
