package core

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/clock"

	"github.com/mpool-dev/mpool/sim/nodeagent"
)

// flushInterval bounds how often the state file is rewritten: changes are
// batched, so 10,000 instances booting cost a handful of writes.
const flushInterval = 200 * time.Millisecond

// flushShare and maxFlushInterval stretch the interval for a large state:
// after a write that took d, the next waits d×flushShare (at least
// flushInterval, at most maxFlushInterval), so rewriting the state keeps
// to about 1/flushShare of a core. Every write is the whole state: at
// 10,000 instances (tens of megabytes) a write every 200 ms took 5% of
// the process that serves the cloud, the manager and the node agent.
const (
	flushShare       = 40
	maxFlushInterval = 2 * time.Second
)

// nextFlushWait is the wait after a flush that took took (0: nothing was
// written).
func nextFlushWait(took time.Duration) time.Duration {
	return min(max(flushInterval, took*flushShare), maxFlushInterval)
}

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
	// Faces are the cloud's faces besides the local face, whose groups the
	// core holds without it being registered. server.Start serves the local
	// face at the root of its URL and each of these under /<name>/;
	// cloud.Start adds the built-in ones (cloud.BuiltinFaces).
	Faces []Face
	// FaceAddrs optionally serves faces on listeners of their own as well,
	// at the root: face name → listen address (e.g. "127.0.0.1:0"). Unused
	// by NewCloud.
	FaceAddrs map[string]string
}

// Cloud is the simulated cloud's core: scale groups, their instances and
// the node agent that joins booted instances. It has no wire protocol; faces
// translate requests into its methods, each in its scopes (Scope). The
// methods of Cloud that take a group name are the local face's (empty
// scope). Every method is safe for concurrent use and first brings the group
// up to date with the clock, so the state a caller sees is never stale.
type Cloud struct {
	clock clock.WithTicker
	log   logr.Logger
	store *store
	agent *nodeagent.Agent
	faces map[string]Face

	mu           sync.Mutex
	st           *cloudState
	rng          *rand.Rand
	defaultSim   Simulation
	maxInstances int
	scopeQuotas  map[scopeID]int
	// addrs counts the live instances by face, scope and private address
	// (NewInstance.AddressInUse); nil until first needed, then kept as
	// instances come and go.
	addrs map[addrKey]int
	// faceGen counts the changes of each face's data, and views holds
	// each face's data decoded as its face reads it (FaceDataAs), valid
	// while faceGen has not moved.
	faceGen map[string]uint64
	views   map[string]faceView
	dirty   bool
	events  []agentEvent

	flushMu sync.Mutex
	kick    chan struct{}
	cancel  context.CancelFunc
	done    sync.WaitGroup
	stopped sync.Once
}

// agentEvent is a boot, power-off or health change the node agent must
// hear about, collected under the lock and delivered after it.
type agentEvent struct {
	kind agentEventKind
	inst nodeagent.Instance
}

type agentEventKind int

const (
	eventBoot agentEventKind = iota
	eventPowerOff
	eventHealth
)

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
	faces, err := checkFaces(opts.Faces)
	if err != nil {
		return nil, err
	}
	c := &Cloud{
		faces:        faces,
		scopeQuotas:  map[scopeID]int{},
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

// Clock is the cloud's clock: every simulated delay, and a face's own
// timing (throttles, lifecycle hooks, rollouts), runs on it.
func (c *Cloud) Clock() clock.WithTicker { return c.clock }

// Log is the cloud's logger.
func (c *Cloud) Log() logr.Logger { return c.log }

// Agent is the node agent that joins booted instances, or nil when the
// cloud has none.
func (c *Cloud) Agent() *nodeagent.Agent { return c.agent }

// Face returns the registered face named name, or nil: how a face built on
// another (EKS's node groups are the AWS face's Auto Scaling groups) finds
// it.
func (c *Cloud) Face(name string) Face { return c.faces[name] }

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
				c.events = append(c.events, agentEvent{kind: eventPowerOff, inst: c.agentInstance(g, in)})
			}
		}
		c.refresh(g, now)
	}
	events := c.takeEvents()
	c.mu.Unlock()
	c.dispatch(events)
}

// listGroups returns the names of the groups of face in scope, sorted.
func (c *Cloud) listGroups(face, scope string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var names []string
	for k := range c.st.Groups {
		if k.Face == face && k.Scope == scope {
			names = append(names, k.Name)
		}
	}
	slices.Sort(names)
	return names
}

// Groups returns the keys of all groups of all faces, sorted by face, scope
// and name.
func (c *Cloud) Groups() []GroupKey {
	c.mu.Lock()
	defer c.mu.Unlock()
	keys := make([]GroupKey, 0, len(c.st.Groups))
	for k := range c.st.Groups {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b GroupKey) int {
		switch {
		case a.less(b):
			return -1
		case b.less(a):
			return 1
		}
		return 0
	})
	return keys
}

func (c *Cloud) getGroup(k GroupKey) (*Group, error) {
	c.mu.Lock()
	g := c.advanceByKey(k)
	var out *Group
	if g != nil {
		out = c.snapshot(g)
	}
	events := c.takeEvents()
	c.mu.Unlock()
	c.dispatch(events)
	if out == nil {
		return nil, NotFound(k)
	}
	return out, nil
}

// validateName checks a group name: the local face's names are DNS-1123
// subdomains (its host names derive from them); other faces' names are
// checked by their face, the core only refuses empty, overlong or control
// characters.
func validateName(k GroupKey) error {
	if k.Face == LocalFace {
		if errs := validation.IsDNS1123Subdomain(k.Name); len(errs) > 0 || len(k.Name) > 200 {
			return Invalidf("invalid group name %q: must be a DNS-1123 subdomain of at most 200 characters", k.Name)
		}
		return nil
	}
	if k.Name == "" || len(k.Name) > 255 || strings.ContainsFunc(k.Name, unicode.IsControl) {
		return Invalidf("invalid group name %q: must be 1 to 255 characters without control characters", k.Name)
	}
	return nil
}

func (c *Cloud) applyGroup(k GroupKey, spec GroupSpec) (*Group, error) {
	if err := validateName(k); err != nil {
		return nil, err
	}
	if k.Face != LocalFace && c.faces[k.Face] == nil {
		return nil, Invalidf("no face %q is registered", k.Face)
	}
	if spec.Capacity < 0 {
		return nil, Invalidf("capacity must not be negative, got %d", spec.Capacity)
	}
	for _, z := range spec.Model.Zones {
		if z == "" {
			return nil, Invalidf("zones must not be empty strings")
		}
	}
	if err := checkPayload(spec.Payload); err != nil {
		return nil, err
	}

	c.mu.Lock()
	g := c.advanceByKey(k)
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
		return nil, &Error{Code: CodeConflict, Message: fmt.Sprintf("scale group %q is being deleted", k.String())}
	}
	if err := c.checkQuota(k, g, spec.Capacity); err != nil {
		c.mu.Unlock()
		return nil, err
	}
	if g == nil {
		g = &groupState{Face: k.Face, Scope: k.Scope, Name: k.Name, CreatedAt: now, Models: map[string]*Model{}}
		c.st.Groups[k] = g
	}
	if spec.Payload != nil {
		g.Payload = clonePayload(spec.Payload)
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

func (c *Cloud) setCapacity(k GroupKey, capacity int32) (*Group, error) {
	if capacity < 0 {
		return nil, Invalidf("capacity must not be negative, got %d", capacity)
	}
	g, err := c.lockGroup(k)
	if err != nil {
		return nil, err
	}
	if g.Deleting {
		c.mu.Unlock()
		return nil, &Error{Code: CodeConflict, Message: fmt.Sprintf("scale group %q is being deleted", k.String())}
	}
	if err := c.checkQuota(k, g, capacity); err != nil {
		c.mu.Unlock()
		return nil, err
	}
	now := c.clock.Now()
	g.Capacity = capacity
	c.scale(g, now)
	return c.commitLocked(g, now), nil
}

// scopeID is a face's scope, the unit of per-scope quotas.
type scopeID struct{ face, scope string }

// addrKey is one private address in a face's scope.
type addrKey struct {
	scopeID
	ip string
}

// addressIndex returns c.addrs, counting the live instances of every group
// the first time. Callers hold c.mu.
func (c *Cloud) addressIndex() map[addrKey]int {
	if c.addrs == nil {
		c.addrs = map[addrKey]int{}
		for _, g := range c.st.Groups {
			for _, in := range g.Instances {
				c.addrs[addrKey{scopeID{g.Face, g.Scope}, in.PrivateIP}]++
			}
		}
	}
	return c.addrs
}

// addressGone forgets one live instance of g with address ip. Callers hold
// c.mu.
func (c *Cloud) addressGone(g *groupState, ip string) {
	if c.addrs == nil {
		return
	}
	k := addrKey{scopeID{g.Face, g.Scope}, ip}
	if c.addrs[k] <= 1 {
		delete(c.addrs, k)
		return
	}
	c.addrs[k]--
}

// checkQuota refuses a capacity for group k (g, nil when it does not exist
// yet) that would take the instances of all groups above the instance quota,
// or those of k's scope above the scope's quota. Lowering or keeping a
// group's capacity is always allowed. Callers hold c.mu.
func (c *Cloud) checkQuota(k GroupKey, g *groupState, capacity int32) error {
	scopeMax := c.scopeQuotas[scopeID{k.Face, k.Scope}]
	if c.maxInstances <= 0 && scopeMax <= 0 || g != nil && capacity <= g.Capacity {
		return nil
	}
	others, inScope := 0, 0
	for ok, og := range c.st.Groups {
		if ok == k {
			continue
		}
		n := live(og)
		others += n
		if ok.Face == k.Face && ok.Scope == k.Scope {
			inScope += n
		}
	}
	if c.maxInstances > 0 && others+int(capacity) > c.maxInstances {
		return &Error{Code: CodeQuotaExceeded, Message: fmt.Sprintf(
			"capacity %d for scale group %q exceeds the instance quota: %d of %d instances are used by other groups",
			capacity, k.String(), others, c.maxInstances)}
	}
	if scopeMax > 0 && inScope+int(capacity) > scopeMax {
		return &Error{Code: CodeQuotaExceeded, Message: fmt.Sprintf(
			"capacity %d for scale group %q exceeds the instance quota of scope %q: %d of %d instances are used by other groups",
			capacity, k.Name, k.Scope, inScope, scopeMax)}
	}
	return nil
}

func (c *Cloud) setGroupFaults(k GroupKey, f GroupFaults) (*Group, error) {
	if f.WrongTokens < 0 || f.NeverJoins < 0 {
		return nil, Invalidf("wrongTokens and neverJoins must not be negative, got %d and %d", f.WrongTokens, f.NeverJoins)
	}
	return c.changeGroup(k, func(g *groupState) error {
		g.WrongTokens = f.WrongTokens
		g.NeverJoins = f.NeverJoins
		return nil
	})
}

// changeGroup runs fn on the group k, up to date, with c.mu held (it must
// not call the Cloud) and, unless fn fails, records the change and returns
// the group.
func (c *Cloud) changeGroup(k GroupKey, fn func(g *groupState) error) (*Group, error) {
	g, err := c.lockGroup(k)
	if err != nil {
		return nil, err
	}
	defer c.mu.Unlock()
	if err := fn(g); err != nil {
		return nil, err
	}
	c.changed(g)
	return c.snapshot(g), nil
}

// lockGroup takes c.mu and brings the group k up to date; when there is
// no such group it releases c.mu and returns NotFound.
func (c *Cloud) lockGroup(k GroupKey) (*groupState, error) {
	c.mu.Lock()
	g := c.advanceByKey(k)
	if g == nil {
		c.mu.Unlock()
		return nil, NotFound(k)
	}
	return g, nil
}

func (c *Cloud) deleteInstances(k GroupKey, ids []string) (*Group, error) {
	g, err := c.lockGroup(k)
	if err != nil {
		return nil, err
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

func (c *Cloud) deleteGroup(k GroupKey) (*Group, error) {
	g, err := c.lockGroup(k)
	if err != nil {
		return nil, err
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

func (c *Cloud) setSimulation(k GroupKey, p SimulationPatch) (*Group, error) {
	return c.changeGroup(k, func(g *groupState) error {
		sim := g.Simulation.apply(&p)
		if err := sim.validate(); err != nil {
			return err
		}
		g.Simulation = sim
		return nil
	})
}

// PayloadFunc computes a new payload from the current one (nil when none).
// It runs with the core's lock held: it must be quick and must not call the
// Cloud. Returning an error leaves the payload unchanged; returning nil
// clears it.
type PayloadFunc func(old json.RawMessage) (json.RawMessage, error)

func (c *Cloud) updateGroupPayload(k GroupKey, fn PayloadFunc) (*Group, error) {
	return c.changeGroup(k, func(g *groupState) error {
		p, err := runPayloadFunc(fn, g.Payload)
		if err == nil {
			g.Payload = p
		}
		return err
	})
}

func (c *Cloud) updateInstancePayload(k GroupKey, id string, fn PayloadFunc) (*Group, error) {
	return c.changeGroup(k, func(g *groupState) error {
		in := g.find(id)
		if in == nil {
			return &Error{Code: CodeNotFound, Message: fmt.Sprintf("instance %q of scale group %q not found", id, k.String())}
		}
		p, err := runPayloadFunc(fn, in.Payload)
		if err == nil {
			in.Payload = p
		}
		return err
	})
}

// FaceData returns a copy of face's own data (nil when none).
func (c *Cloud) FaceData(face string) json.RawMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	return clonePayload(c.st.FaceData[face])
}

// UpdateFaceData changes face's own data: objects of the face that are not
// groups or instances (launch templates and their versions, node groups,
// ...), persisted with the cloud's state and opaque to the core. fn runs
// with the core's lock held (see PayloadFunc). It returns the new data.
func (c *Cloud) UpdateFaceData(face string, fn PayloadFunc) (json.RawMessage, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, err := runPayloadFunc(fn, c.st.FaceData[face])
	if err != nil {
		return nil, err
	}
	if p == nil {
		delete(c.st.FaceData, face)
	} else {
		c.st.FaceData[face] = p
	}
	c.st.facesEnc = nil
	if c.faceGen == nil {
		c.faceGen = map[string]uint64{}
	}
	c.faceGen[face]++
	c.dirty = true
	return clonePayload(p), nil
}

// FaceRecord returns a copy of the record key of face's own records (nil
// when there is none). A face keeps in records what it has one of per
// object (a launch template, a group's scaling activities), so that reading
// or changing one costs that one, not everything the face keeps.
func (c *Cloud) FaceRecord(face, key string) json.RawMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	return clonePayload(c.st.FaceRecords[face][key])
}

// FaceRecords returns copies of face's records whose keys begin with
// prefix, by key.
func (c *Cloud) FaceRecords(face, prefix string) map[string]json.RawMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]json.RawMessage{}
	for k, d := range c.st.FaceRecords[face] {
		if strings.HasPrefix(k, prefix) {
			out[k] = clonePayload(d)
		}
	}
	return out
}

// UpdateFaceRecord changes the record key of face's own records, persisted
// with the cloud's state and opaque to the core: fn gets the record (nil
// when there is none) and returns the new one, nil to delete it. fn runs
// with the core's lock held (see PayloadFunc); its error leaves the record
// unchanged. It returns the new record.
func (c *Cloud) UpdateFaceRecord(face, key string, fn PayloadFunc) (json.RawMessage, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, err := runPayloadFunc(fn, c.st.FaceRecords[face][key])
	if err != nil {
		return nil, err
	}
	recs := c.st.FaceRecords[face]
	switch {
	case p == nil && recs == nil:
		return nil, nil
	case p == nil:
		delete(recs, key)
		if len(recs) == 0 {
			delete(c.st.FaceRecords, face)
		}
	default:
		if recs == nil {
			recs = map[string]json.RawMessage{}
			c.st.FaceRecords[face] = recs
		}
		recs[key] = compactPayload(p)
	}
	c.st.recordsEnc = nil
	c.dirty = true
	return clonePayload(p), nil
}

// compactPayload is p without insignificant space (p is valid JSON): how
// records are kept, so the state file copies them as they are.
func compactPayload(p json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if err := json.Compact(&b, p); err != nil {
		return p
	}
	if b.Len() == len(p) {
		return p
	}
	return b.Bytes()
}

// faceView is a face's data decoded (FaceDataAs) and the count of the
// data's changes it was decoded at.
type faceView struct {
	gen uint64
	v   any
}

// FaceDataAs returns face's own data decoded as a T (DecodePayload),
// decoded once per change of the data and shared by every caller until the
// next change: a face reads its data on every request (its keys, to check
// a signature), and decoding all of it each time made a request's cost
// grow with everything the face keeps. The T returned is shared: read it,
// never change anything it holds (copy first, or change the data through
// UpdateFaceData).
func FaceDataAs[T any](c *Cloud, face string) T {
	c.mu.Lock()
	gen := c.faceGen[face]
	if v, ok := c.views[face]; ok && v.gen == gen {
		if t, ok := v.v.(T); ok {
			c.mu.Unlock()
			return t
		}
	}
	// The stored bytes are never changed in place (UpdateFaceData
	// replaces them), so they are decoded outside the lock.
	raw := c.st.FaceData[face]
	c.mu.Unlock()
	t := DecodePayload[T](raw)
	c.mu.Lock()
	if c.faceGen[face] == gen {
		if c.views == nil {
			c.views = map[string]faceView{}
		}
		c.views[face] = faceView{gen: gen, v: t}
	}
	c.mu.Unlock()
	return t
}

func runPayloadFunc(fn PayloadFunc, old json.RawMessage) (json.RawMessage, error) {
	p, err := fn(clonePayload(old))
	if err != nil {
		return nil, err
	}
	if err := checkPayload(p); err != nil {
		return nil, err
	}
	return clonePayload(p), nil
}

// checkPayload refuses a payload that is not JSON: it is stored as such in
// the state file.
func checkPayload(p json.RawMessage) error {
	if len(p) > 0 && !json.Valid(p) {
		return Invalidf("a face payload must be valid JSON")
	}
	return nil
}

// clonePayload copies p; empty is nil.
func clonePayload(p json.RawMessage) json.RawMessage {
	if len(p) == 0 {
		return nil
	}
	return slices.Clone(p)
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

// MaxInstances returns the instance quota across all groups of all faces
// (0: unlimited).
func (c *Cloud) MaxInstances() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.maxInstances
}

// SetMaxInstances sets the instance quota across all groups of all faces
// (0: unlimited). Running instances are never removed for it; it limits
// later capacity increases.
func (c *Cloud) SetMaxInstances(n int) error {
	if n < 0 {
		return Invalidf("maxInstances must not be negative")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.maxInstances = n
	return nil
}

// Flush writes the state file now if anything changed.
func (c *Cloud) Flush() error {
	_, err := c.flush()
	return err
}

// flush is Flush, and how long it took when it wrote (0 when there was
// nothing to write).
func (c *Cloud) flush() (time.Duration, error) {
	if c.store == nil {
		return 0, nil
	}
	c.flushMu.Lock()
	defer c.flushMu.Unlock()
	c.mu.Lock()
	// Timed from here: the write's own cost, not the wait for the lock.
	start := time.Now()
	if !c.dirty {
		c.mu.Unlock()
		return 0, nil
	}
	parts, err := c.st.encodeParts()
	c.dirty = false
	c.mu.Unlock()
	if err != nil {
		return 0, fmt.Errorf("encoding cloud state: %w", err)
	}
	if err := c.store.write(parts.join()); err != nil {
		c.mu.Lock()
		c.dirty = true
		c.mu.Unlock()
		return 0, err
	}
	return time.Since(start), nil
}

func (c *Cloud) flushLoop(ctx context.Context) {
	if c.store == nil {
		return
	}
	t := c.clock.NewTimer(flushInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
			took, err := c.flush()
			if err != nil {
				c.log.Error(err, "Writing cloud state")
			}
			t.Reset(nextFlushWait(took))
		}
	}
}

// hostname derives an instance's host name (and default Node name) from the
// group name and the instance ID: the local face's, and the default of
// other faces.
func hostname(group, id string) string {
	return strings.ReplaceAll(group, ".", "-") + "-" + id
}

// ProviderID returns the Node providerID of an instance of the local face:
// local:///<group>/<instance>. Other faces choose their own
// (Face.InstanceIdentity); Instance.ProviderID is always the one in use.
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
	if in.Fault == FaultNeverJoins {
		in.Join = JoinJoining
		in.Message = neverJoinsMessage
		return
	}
	if in.Join == JoinNone {
		in.Join = JoinJoining
	}
	c.events = append(c.events, agentEvent{kind: eventBoot, inst: c.agentInstance(g, in)})
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
		Key:            agentKey(g.key(), in.ID),
		ID:             in.ID,
		Hostname:       in.Hostname,
		PrivateIP:      in.PrivateIP,
		Zone:           in.Zone,
		ProviderID:     in.ProviderID,
		Metadata:       in.meta,
		InstanceType:   m.InstanceType,
		Image:          m.Image,
		KubeletVersion: get(ExtraVersion, DefaultKubeletVersion),
		CPU:            get(ExtraCPU, "2"),
		Memory:         get(ExtraMemory, "8Gi"),
		CustomData:     m.CustomData,
		WrongToken:     in.WrongToken,
		Health:         in.Fault.kubelet(),
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
		switch e.kind {
		case eventPowerOff:
			c.agent.PowerOff(e.inst)
		case eventHealth:
			c.agent.SetHealth(e.inst.Key, e.inst.Health)
		default:
			c.agent.Boot(e.inst)
		}
	}
}

// agentKey is the node agent's key of an instance: <group>/<id> for the
// local face (as logged before faces), a JSON array of face, scope, group
// and ID otherwise.
func agentKey(k GroupKey, id string) string {
	if k.Face == LocalFace && k.Scope == "" {
		return k.Name + "/" + id
	}
	b, _ := json.Marshal([]string{k.Face, k.Scope, k.Name, id})
	return string(b)
}

// parseAgentKey is the inverse of agentKey.
func parseAgentKey(key string) (GroupKey, string, bool) {
	if strings.HasPrefix(key, "[") {
		var parts []string
		if err := json.Unmarshal([]byte(key), &parts); err != nil || len(parts) != 4 {
			return GroupKey{}, "", false
		}
		return GroupKey{Face: parts[0], Scope: parts[1], Name: parts[2]}, parts[3], true
	}
	name, id, ok := strings.Cut(key, "/")
	return LocalKey(name), id, ok
}

// reportJoin records the node agent's progress on an instance.
func (c *Cloud) reportJoin(r nodeagent.Result) {
	k, id, ok := parseAgentKey(r.Key)
	if !ok {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	g := c.st.Groups[k]
	if g == nil {
		return
	}
	in := g.find(id)
	if in == nil || in.State != StateRunning || in.Fault == FaultNeverJoins {
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
	c.changed(g)
}

// changed marks g for the next flush: its encoding is redone. Callers hold
// c.mu.
func (c *Cloud) changed(g *groupState) {
	c.dirty = true
	g.enc = nil
}

// snapshot copies g for callers, without custom data. Callers hold c.mu.
func (c *Cloud) snapshot(g *groupState) *Group {
	out := &Group{
		Face:       g.Face,
		Scope:      g.Scope,
		Name:       g.Name,
		Payload:    clonePayload(g.Payload),
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
			ProviderID: in.ProviderID,
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
			Held:       in.Held,
			Fault:      in.Fault,
			FaultSince: in.FaultSince,
			Metadata:   in.meta,
			Payload:    clonePayload(in.Payload),
		}
	}
	out.Faults = GroupFaults{WrongTokens: g.WrongTokens, NeverJoins: g.NeverJoins}
	return out
}

// commitLocked finishes a change to g made under c.mu: it refreshes the
// group's derived state, marks the state for the next flush, takes a
// snapshot for the caller, releases c.mu, then hands pending events to the
// node agent and wakes the background loop.
func (c *Cloud) commitLocked(g *groupState, now time.Time) *Group {
	c.refresh(g, now)
	c.changed(g)
	out := c.snapshot(g)
	events := c.takeEvents()
	c.mu.Unlock()
	c.dispatch(events)
	c.wake()
	return out
}
