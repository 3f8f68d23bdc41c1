// Package nodeagent is what runs inside a simulated VM once it has booted: it
// reads the instance's bootstrap data as cloud-init would, performs kubeadm's
// token discovery (check the API server's CA against caCertHashes,
// authenticate with the bootstrap token) and then registers a Node and keeps
// its Lease fresh, kwok-style. It also plays the kubelet for the pods bound
// to its Nodes (see Pods below).
//
// # Identity
//
// A real kubelet uses the bootstrap token only to obtain a client certificate
// through a CertificateSigningRequest; no CSR signer runs for the simulated
// cloud's clusters. The node agent therefore checks the token exactly as
// kubeadm does (a SelfSubjectReview with it as bearer token: a wrong or
// expired token is refused and the instance never joins) and then acts as the
// kubelet's identity with credentials the cloud is configured with, one
// kubeconfig per workload API server (Options.Credentials). Those credentials
// must allow creating and patching Nodes (and their status) and Leases in
// kube-node-lease, and listing, watching and deleting Pods and patching
// their status in every namespace.
//
// # Pods
//
// No kubelet runs, so the agent does a kubelet's visible part for every pod
// bound (spec.nodeName) to a Node it keeps alive: a pod that is not yet
// running gets phase Running, the PodScheduled, PodReadyToStartContainers,
// Initialized, ContainersReady and Ready conditions True, every container
// running and ready (init containers completed), startTime, hostIP (the
// instance's private IP) and a fake pod IP. A terminating pod (deletion
// timestamp set, e.g. evicted by a drain) is deleted with grace period 0,
// after Options.PodStopDelay capped by its grace period. Pods of a powered-off
// instance's Node are no longer tended, like a dead kubelet's; pods on Nodes
// the agent does not own are never touched.
//
// # Health
//
// An instance's kubelet can be made unhealthy (Health, SetHealth): stopped
// (no Lease renewals, pods untended, and since no node lifecycle
// controller runs, the agent itself sets the Node's conditions Unknown
// Options.NodeMonitorGracePeriod after the last renewal) or NotReady (the
// Lease is renewed, Ready=False with reason KubeletNotReady). Back to
// healthy, it posts Ready=True again.
//
// # Cost
//
// Joins run on a bounded worker pool with one shared client per API server
// and one shared TLS transport per API server and CA. A join costs three
// requests (SelfSubjectReview, Node create with status, Lease create). Lease
// renewals are spread with jitter and capped at Options.MaxHeartbeatQPS,
// lengthening the interval for very large pools.
//
// Pods are watched with one informer per API server that has a joined Node
// (bound pods of all namespaces, started with the first such Node, stopped
// with the agent), whatever the number of Nodes; a pod costs one status
// patch to start and one delete to finish, through the same rate-limited
// client as the Nodes and Leases.
//
// The agent never logs bootstrap data or tokens.
package nodeagent

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
)

// Options configure the node agent.
type Options struct {
	// Credentials are the node agent's identities, one per workload API
	// server; an instance joins the server whose address matches its join
	// configuration's apiServerEndpoint.
	Credentials []*rest.Config
	// Workers bounds concurrent joins (default 64). Real instances join
	// each on its own; with 16, a scale-up of a thousand beside a busy
	// manager waited on the simulator's join queue.
	Workers int
	// QPS and Burst limit each API server client (defaults 500 and 1000).
	QPS   float32
	Burst int
	// HeartbeatInterval is how often a Node's Lease is renewed (default 10s).
	HeartbeatInterval time.Duration
	// MaxHeartbeatQPS caps Lease renewals per second across all Nodes
	// (default 50); with more Nodes the interval grows.
	MaxHeartbeatQPS float64
	// AuthAttempts is how often a token the API server refuses (401) is tried
	// before the instance gives up (default 5): the token may be created just
	// after the instance boots.
	AuthAttempts int
	// RetryBackoff is the first retry delay, doubled per attempt up to
	// MaxRetryBackoff (defaults 1s and 30s).
	RetryBackoff    time.Duration
	MaxRetryBackoff time.Duration
	// JoinTimeout is how long an instance keeps retrying transient failures
	// before it gives up, like kubeadm's discovery timeout (default 5m).
	JoinTimeout time.Duration
	// PodWorkers bounds concurrent pod updates per API server (default 4).
	PodWorkers int
	// PodStopDelay is how long a terminating pod's containers take to stop
	// before the pod is deleted, capped by its grace period (default 0:
	// at once).
	PodStopDelay time.Duration
	// NodeMonitorGracePeriod is how long a Node whose kubelet stopped
	// (HealthKubeletStopped) keeps its status before the agent marks it
	// Unknown, as kube-controller-manager's node lifecycle controller does
	// after its --node-monitor-grace-period (default 50s, its default).
	NodeMonitorGracePeriod time.Duration
	// WrapTransport, when set, wraps the HTTP transport of every request
	// the agent makes to an API server (the bootstrap token's check, Nodes,
	// Leases, pods), for example to count them.
	WrapTransport transport.WrapperFunc
}

func (o *Options) defaults() {
	if o.Workers <= 0 {
		o.Workers = 64
	}
	if o.QPS == 0 {
		o.QPS = 500
	}
	if o.Burst == 0 {
		o.Burst = 1000
	}
	if o.HeartbeatInterval <= 0 {
		o.HeartbeatInterval = 10 * time.Second
	}
	if o.MaxHeartbeatQPS <= 0 {
		o.MaxHeartbeatQPS = 50
	}
	if o.AuthAttempts <= 0 {
		o.AuthAttempts = 5
	}
	if o.RetryBackoff <= 0 {
		o.RetryBackoff = time.Second
	}
	if o.MaxRetryBackoff <= 0 {
		o.MaxRetryBackoff = 30 * time.Second
	}
	if o.JoinTimeout <= 0 {
		o.JoinTimeout = 5 * time.Minute
	}
	if o.PodWorkers <= 0 {
		o.PodWorkers = 4
	}
	if o.PodStopDelay < 0 {
		o.PodStopDelay = 0
	}
	if o.NodeMonitorGracePeriod <= 0 {
		o.NodeMonitorGracePeriod = DefaultNodeMonitorGracePeriod
	}
}

// Instance is a booted VM as the node agent sees it.
type Instance struct {
	// Key identifies the instance; opaque, unique within the cloud.
	Key string
	ID  string
	// Hostname is the VM's host name (local_hostname): the Node's default
	// name, hostname label and address.
	Hostname   string
	PrivateIP  string
	Zone       string
	ProviderID string
	// Metadata is the instance data cloud-init exposes to templates
	// (ds.meta_data: local_hostname, instance_id, ...). Keys it lacks are
	// taken from the fields above.
	Metadata map[string]string
	// InstanceType and Image come from the instance's model.
	InstanceType string
	Image        string
	// KubeletVersion, CPU and Memory are what the Node reports.
	KubeletVersion string
	CPU            string
	Memory         string
	// CustomData is the bootstrap data the VM was created with.
	CustomData []byte
	// WrongToken makes the VM use a wrong bootstrap token (same token ID,
	// another secret), as one whose custom data carries a stale or mistyped
	// token: the API server refuses it and the instance never joins.
	WrongToken bool
	// Health is what the VM's kubelet does once registered (see Health).
	Health Health
	// Joined is set when the instance already joined (before a restart of
	// the cloud): the agent only resumes its heartbeat.
	Joined   bool
	NodeName string
	Endpoint string
}

// Phase is an instance's join progress.
type Phase string

// Phases.
const (
	PhaseJoining    Phase = "Joining"
	PhaseJoined     Phase = "Joined"
	PhaseJoinFailed Phase = "JoinFailed"
)

// Result reports an instance's join progress to the cloud.
type Result struct {
	Key      string
	Phase    Phase
	NodeName string
	// Endpoint is the normalized API server address the Node registered with.
	Endpoint string
	// Message says why the instance has not joined (empty once joined).
	Message string
}

// Agent joins booted instances and heartbeats their Nodes.
type Agent struct {
	opts   Options
	clock  clock.WithTicker
	report func(Result)
	log    logr.Logger

	creds map[string]*rest.Config // by normalized endpoint
	queue workqueue.TypedDelayingInterface[task]
	beatC chan *beat

	mu        sync.Mutex
	rng       *rand.Rand
	health    map[string]Health // instances' health, by key
	jobs      map[string]*job
	powerOffs map[string]*powerOff
	beats     map[string]*beat
	// budget is how many Lease renewals the next tick may start (takeDue).
	budget      float64
	clients     map[string]kubernetes.Interface
	chains      map[string]*chainEntry
	authClients map[string]*http.Client
	kubelets    map[string]*kubelet // by endpoint
	kubeletWG   sync.WaitGroup      // the kubelets' goroutines

	// owned indexes beats by endpoint and Node name for the pod event
	// handlers; written with a.mu held, then ownMu.
	ownMu sync.RWMutex
	owned map[string]map[string]*beat
}

type taskKind int

const (
	taskJoin taskKind = iota
	taskPowerOff
)

type task struct {
	kind taskKind
	key  string
}

type job struct {
	inst Instance
	// health is the instance's health when the attempt started.
	health       Health
	started      time.Time
	attempts     int
	authFailures int
}

type powerOff struct {
	endpoint, nodeName string
	attempts           int
}

type beat struct {
	key, endpoint, nodeName string
	// hostIP is the instance's private IP, the hostIP of its pods.
	hostIP string
	next   time.Time
	// health is what the kubelet does now; posted is the Ready status the
	// Node shows ("" when not known, after a restart of the cloud).
	health Health
	posted corev1.ConditionStatus
	// renewed is when the Lease was last renewed (or the Node registered):
	// a stopped kubelet's Node goes Unknown NodeMonitorGracePeriod after.
	renewed time.Time
	// inflight is set while a beat worker has it.
	inflight bool
}

// New returns an agent that reports progress through report. Call Run to
// start it.
func New(opts Options, clk clock.WithTicker, report func(Result)) (*Agent, error) {
	opts.defaults()
	a := &Agent{
		opts:        opts,
		clock:       clk,
		report:      report,
		log:         logr.Discard(),
		creds:       map[string]*rest.Config{},
		queue:       workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[task]{Clock: clk}),
		beatC:       make(chan *beat, 1024),
		rng:         rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64())),
		health:      map[string]Health{},
		jobs:        map[string]*job{},
		powerOffs:   map[string]*powerOff{},
		beats:       map[string]*beat{},
		clients:     map[string]kubernetes.Interface{},
		chains:      map[string]*chainEntry{},
		authClients: map[string]*http.Client{},
		kubelets:    map[string]*kubelet{},
		owned:       map[string]map[string]*beat{},
	}
	for _, c := range opts.Credentials {
		ep, err := NormalizeEndpoint(c.Host)
		if err != nil {
			return nil, fmt.Errorf("node-agent credentials for %q: %w", c.Host, err)
		}
		a.creds[ep] = c
	}
	return a, nil
}

// Run runs the join workers, the heartbeat loop and the pod tending until
// ctx is cancelled.
func (a *Agent) Run(ctx context.Context) {
	a.log = logr.FromContextOrDiscard(ctx).WithName("node-agent")
	var wg sync.WaitGroup
	for range a.opts.Workers {
		wg.Add(1)
		go func() { defer wg.Done(); a.worker(ctx) }()
	}
	for range max(2, a.opts.Workers/4) {
		wg.Add(1)
		go func() { defer wg.Done(); a.beatWorker(ctx) }()
	}
	wg.Add(1)
	go func() { defer wg.Done(); a.heartbeatLoop(ctx) }()
	<-ctx.Done()
	a.queue.ShutDown()
	wg.Wait()
	// Join workers start kubelets; none is started once they are done.
	a.kubeletWG.Wait()
}

// Boot starts joining a booted instance, or resumes its heartbeat when it
// had already joined.
func (a *Agent) Boot(inst Instance) {
	a.mu.Lock()
	delete(a.powerOffs, inst.Key)
	a.jobs[inst.Key] = &job{inst: inst}
	a.health[inst.Key] = inst.Health
	a.mu.Unlock()
	a.queue.Add(task{taskJoin, inst.Key})
}

// PowerOff stops an instance like a powered-off VM: its join is abandoned,
// its heartbeat stops and its Node is marked NotReady (as the node lifecycle
// controller would once the Lease expires; none runs here). The Node object
// itself is left for its owner to delete.
func (a *Agent) PowerOff(inst Instance) {
	a.mu.Lock()
	delete(a.jobs, inst.Key)
	delete(a.health, inst.Key)
	po := &powerOff{endpoint: inst.Endpoint, nodeName: inst.NodeName}
	if b := a.disown(inst.Key); b != nil {
		po.endpoint, po.nodeName = b.endpoint, b.nodeName
	}
	if po.nodeName == "" || po.endpoint == "" {
		a.mu.Unlock()
		return
	}
	a.powerOffs[inst.Key] = po
	a.mu.Unlock()
	a.queue.Add(task{taskPowerOff, inst.Key})
}

// Heartbeats returns the number of Nodes the agent keeps alive.
func (a *Agent) Heartbeats() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.beats)
}

func (a *Agent) worker(ctx context.Context) {
	for {
		t, shutdown := a.queue.Get()
		if shutdown {
			return
		}
		switch t.kind {
		case taskJoin:
			a.processJoin(ctx, t.key)
		case taskPowerOff:
			a.processPowerOff(ctx, t.key)
		}
		a.queue.Done(t)
	}
}

func (a *Agent) backoff(attempts int) time.Duration {
	d := a.opts.RetryBackoff
	for i := 1; i < attempts && d < a.opts.MaxRetryBackoff; i++ {
		d *= 2
	}
	return min(d, a.opts.MaxRetryBackoff)
}

func (a *Agent) processPowerOff(ctx context.Context, key string) {
	a.mu.Lock()
	po := a.powerOffs[key]
	a.mu.Unlock()
	if po == nil {
		return
	}
	err := a.markNotReady(ctx, po.endpoint, po.nodeName)
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.powerOffs[key] != po {
		return
	}
	if err != nil && po.attempts < 10 {
		po.attempts++
		a.log.V(1).Info("Marking a powered-off node NotReady failed, retrying", "node", po.nodeName, "err", err.Error())
		a.queue.AddAfter(task{taskPowerOff, key}, a.backoff(po.attempts))
		return
	}
	delete(a.powerOffs, key)
}

// processJoin makes one join attempt and schedules the next one if needed.
func (a *Agent) processJoin(ctx context.Context, key string) {
	a.mu.Lock()
	j := a.jobs[key]
	a.mu.Unlock()
	if j == nil {
		return
	}
	now := a.clock.Now()
	if j.started.IsZero() {
		j.started = now
	}
	j.attempts++
	a.mu.Lock()
	j.health = a.health[key]
	a.mu.Unlock()
	nodeName, endpoint, err := a.join(ctx, j)
	if err == nil {
		a.mu.Lock()
		if a.jobs[key] != j {
			// Powered off while joining: the VM is gone, the Node must not
			// stay Ready.
			a.mu.Unlock()
			if err := a.markNotReady(ctx, endpoint, nodeName); err != nil {
				a.log.V(1).Info("Marking a powered-off node NotReady failed", "node", nodeName, "err", err.Error())
			}
			return
		}
		delete(a.jobs, key)
		b := &beat{key: key, endpoint: endpoint, nodeName: nodeName, hostIP: j.inst.PrivateIP, next: now.Add(a.jitter(a.interval())),
			health: j.health, posted: registeredReady(j), renewed: now}
		a.own(key, b)
		a.setHealthLocked(b, a.health[key], now)
		a.mu.Unlock()
		a.report(Result{Key: key, Phase: PhaseJoined, NodeName: nodeName, Endpoint: endpoint})
		a.tendNode(ctx, endpoint, nodeName)
		return
	}

	je := asJoinError(err)
	var msg string
	retry := false
	switch {
	case je.permanent:
		msg = je.Error()
	case je.unauthorized:
		j.authFailures++
		msg = je.Error()
		retry = j.authFailures < a.opts.AuthAttempts
	case now.Sub(j.started) >= a.opts.JoinTimeout:
		msg = fmt.Sprintf("Timed out joining after %s: %s", a.opts.JoinTimeout, je.Error())
	default:
		msg = je.Error()
		retry = true
	}
	a.mu.Lock()
	current := a.jobs[key] == j
	if current && !retry {
		delete(a.jobs, key)
		delete(a.health, key)
	}
	a.mu.Unlock()
	if !current {
		return
	}
	if retry {
		a.report(Result{Key: key, Phase: PhaseJoining, Message: "Not joined yet: " + msg})
		a.queue.AddAfter(task{taskJoin, key}, a.backoff(j.attempts))
		return
	}
	a.log.Info("Instance will not join the cluster", "instance", key, "reason", msg)
	a.report(Result{Key: key, Phase: PhaseJoinFailed, Message: msg})
}

// interval is the effective heartbeat interval for the current number of
// Nodes. Callers hold a.mu.
func (a *Agent) interval() time.Duration {
	perQPS := time.Duration(float64(len(a.beats)) / a.opts.MaxHeartbeatQPS * float64(time.Second))
	return max(a.opts.HeartbeatInterval, perQPS)
}

// jitter returns d ± 10%. Callers hold a.mu.
func (a *Agent) jitter(d time.Duration) time.Duration {
	return d - d/10 + time.Duration(a.rng.Int64N(int64(d/5)+1))
}

// heartbeatLoop hands due beats to the beat workers once a second.
func (a *Agent) heartbeatLoop(ctx context.Context) {
	t := a.clock.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
		for _, b := range a.takeDue(a.clock.Now()) {
			select {
			case a.beatC <- b:
			case <-ctx.Done():
				return
			}
		}
	}
}

// takeDue marks the beats due at now in flight and returns them, for one
// second's tick. A change to post (a health change, a stopped kubelet's
// Node to mark) always goes; plain Lease renewals go most overdue first, at
// most Options.MaxHeartbeatQPS a second on average, the rest
// wait for the next tick. The interval alone does not hold the rate: the
// Nodes of a pool that grew joined when the interval was shorter and their
// renewals bunch (73 in one second under a cap of 50 in
// TestLeaseRenewalsStayUnderTheCap), and every renewal that came due went
// out at once, however many (with 10,000 Nodes joined the API server saw
// 138 a second over 26 s, where the cap said 50).
func (a *Agent) takeDue(now time.Time) []*beat {
	a.mu.Lock()
	defer a.mu.Unlock()
	// The budget carries a fraction (and a debt of changes) to the next
	// second, never a second's unused renewals.
	a.budget = min(a.budget+a.opts.MaxHeartbeatQPS, a.opts.MaxHeartbeatQPS+1)
	iv := a.interval()
	var due, renew []*beat
	for _, b := range a.beats {
		if b.inflight || !a.beatDue(b, now) {
			continue
		}
		if b.renewalOnly() {
			renew = append(renew, b)
		} else {
			due = append(due, b)
		}
	}
	a.budget -= float64(len(due))
	if n := int(max(a.budget, 0)); len(renew) > n {
		slices.SortFunc(renew, func(x, y *beat) int { return x.next.Compare(y.next) })
		renew = renew[:n]
	}
	a.budget -= float64(len(renew))
	due = append(due, renew...)
	for _, b := range due {
		b.next = now.Add(a.jitter(iv))
		b.inflight = true
	}
	return due
}

func (a *Agent) beatWorker(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case b := <-a.beatC:
			a.beat(ctx, b)
		}
	}
}

// leaseDuration is 4× the heartbeat interval, at least 40s (the kubelet's
// default). Callers hold a.mu.
func (a *Agent) leaseDuration() int32 {
	return int32(max(40*time.Second, 4*a.interval()) / time.Second)
}

// NormalizeEndpoint turns an API server address (host:port, a URL, or a
// bare host) into host:port, with port 443 by default and "localhost" as
// 127.0.0.1, so a join configuration's apiServerEndpoint matches a
// kubeconfig's server.
func NormalizeEndpoint(s string) (string, error) {
	if !strings.Contains(s, "://") {
		s = "https://" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", fmt.Errorf("parsing API server address: %w", err)
	}
	host, port := u.Hostname(), u.Port()
	if host == "" {
		return "", fmt.Errorf("API server address %q has no host", s)
	}
	if port == "" {
		port = "443"
	}
	if host == "localhost" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}
