package azure

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/compute/armcompute/v7"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/mpool-dev/mpool/internal/provider/kit"
	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// Tags mpool reads on a scale set.
const (
	// TagModelHash is the scale set's tag holding the model hash
	// (scalegroup.GroupSpec.ModelHash). VMs created from the model carry it
	// in their tags.
	TagModelHash = "mpool.dev/model-hash"
	// TagKubernetesVersion is the scale set's tag holding the Kubernetes
	// version its VMs run (scalegroup.Model.Version), when set.
	TagKubernetesVersion = "mpool.dev/kubernetes-version"
)

// ScaleSets is scalegroup.ScaleGroup on Azure Virtual Machine Scale Sets,
// Uniform and Flexible, through armcompute. It keeps nothing between calls
// that Get needs: the cloud is the source of truth (the scale set's tags
// carry the model hash). It remembers only the pollers' resume tokens of
// the operations it started, to report them in Group.Operation.
type ScaleSets struct {
	opts    Options
	armOpts arm.ClientOptions

	// clients are the SDK clients by subscription and credential (tokens
	// stay cached in the credentials).
	clients kit.ClientCache[clientKey, *sdkClients]

	mu   sync.Mutex
	ops  map[string]startedOperation
	skus skuCatalog
}

var _ scalegroup.ScaleGroup = (*ScaleSets)(nil)

// clientKey identifies a subscription reached with one credential.
type clientKey struct {
	subscription string
	cred         azcore.TokenCredential
}

// sdkClients are the armcompute clients of one subscription and credential.
type sdkClients struct {
	scaleSets *armcompute.VirtualMachineScaleSetsClient
	scaleVMs  *armcompute.VirtualMachineScaleSetVMsClient
	vms       *armcompute.VirtualMachinesClient
	skus      *armcompute.ResourceSKUsClient
}

// startedOperation is a long-running operation this process started, or
// an earlier one (recorded on the pool: scalegroup.RecordedOperation).
type startedOperation struct {
	op scalegroup.Operation
	// failure is why it failed, read once from its operation.
	failure string
}

// New returns the Azure ScaleGroup. opts.Credentials is required.
func New(opts Options) (*ScaleSets, error) {
	opts, co, err := ClientOptions(opts)
	if err != nil {
		return nil, fmt.Errorf("azure scale sets: %w", err)
	}
	return &ScaleSets{opts: opts, armOpts: co, ops: map[string]startedOperation{}}, nil
}

// ClientOptions returns opts with its defaults and the ARM client options
// of the SDK's clients reaching them (the AKS provider's too):
// opts.Credentials is required, one logical call is one request (the
// engine retries), no resource provider registration.
func ClientOptions(opts Options) (Options, arm.ClientOptions, error) {
	if opts.Credentials == nil {
		return opts, arm.ClientOptions{}, fmt.Errorf("no credentials resolver")
	}
	if opts.ResourceManagerEndpoint == "" {
		opts.ResourceManagerEndpoint = DefaultResourceManagerEndpoint
	}
	if opts.AuthorityHost == "" {
		opts.AuthorityHost = DefaultAuthorityHost
	}
	for _, e := range []struct{ name, url string }{
		{"resource manager endpoint", opts.ResourceManagerEndpoint},
		{"authority host", opts.AuthorityHost},
	} {
		u, err := url.Parse(e.url)
		if err != nil || u.Scheme != "https" || u.Host == "" {
			return opts, arm.ClientOptions{}, fmt.Errorf("the %s %q is not an https URL", e.name, e.url)
		}
	}
	co := arm.ClientOptions{
		ClientOptions: policy.ClientOptions{
			Cloud: opts.cloudConfig(),
			// The engine retries, honouring the Retry-After of our typed
			// errors: one logical call is one request.
			Retry:     policy.RetryOptions{MaxRetries: -1, TryTimeout: kit.RequestTimeout},
			Telemetry: policy.TelemetryOptions{ApplicationID: "mpool"},
		},
		// Registering a resource provider is the subscription owner's
		// business, not a reconcile's (it blocks for minutes).
		DisableRPRegistration: true,
	}
	if opts.HTTPClient != nil {
		co.Transport = opts.HTTPClient
	}
	return opts, co, nil
}

// Capabilities implements scalegroup.ScaleGroup: Azure leaves rollouts to
// the engine, which picks every victim (upgrade policy Manual).
func (*ScaleSets) Capabilities() scalegroup.Capabilities { return scalegroup.Capabilities{} }

// Get implements scalegroup.ScaleGroup: the scale set's GET and its VM
// list (all pages), never a GET per VM. The operation the pool recorded
// (an earlier process's, by its resume token) is resumed as this
// process's when it started none: reported with its token while the
// scale set says it is in progress, and its error read from it (one poll)
// when the scale set is left Failed, as CAPZ resumes a future.
func (s *ScaleSets) Get(ctx context.Context, ref scalegroup.Ref) (*scalegroup.Group, error) {
	at, c, err := s.resolve(ctx, ref)
	if err != nil {
		return nil, fmt.Errorf("getting scale set %s: %w", ref, err)
	}
	if op, ok := scalegroup.RecordedOperation(ctx); ok && op.ResumeToken != "" {
		s.resume(ref, op)
	}
	res, err := c.scaleSets.Get(ctx, at.resourceGroup, ref.Name, nil)
	if err != nil {
		err = cloudError(err, ref)
		if scalegroup.IsNotFound(err) {
			s.forget(ref)
		}
		return nil, fmt.Errorf("getting scale set %s: %w", ref, err)
	}
	vmss := &res.VirtualMachineScaleSet
	instances, err := s.listInstances(ctx, c, at, ref, vmss)
	if err != nil {
		return nil, fmt.Errorf("listing the VMs of scale set %s: %w", ref, err)
	}
	g := s.group(ref, vmss, instances)
	if g.Message != "" {
		if why := s.failure(ctx, c, at, ref); why != "" {
			g.Message += ": " + why
		}
	}
	return g, nil
}

// failure is why the operation mpool last started on ref failed, read
// once from its resume token; "" when there is none or it cannot be read.
func (s *ScaleSets) failure(ctx context.Context, c *sdkClients, at resourceGroup, ref scalegroup.Ref) string {
	key := opKey(ref)
	s.mu.Lock()
	started, ok := s.ops[key]
	s.mu.Unlock()
	if !ok || started.failure != "" || started.op.ResumeToken == "" {
		return started.failure
	}
	var msg string
	if started.op.Type == scalegroup.OperationDelete {
		p, err := c.scaleSets.BeginDelete(ctx, at.resourceGroup, ref.Name, &armcompute.VirtualMachineScaleSetsClientBeginDeleteOptions{ResumeToken: started.op.ResumeToken})
		msg = OperationFailure(ctx, p, err)
	} else {
		p, err := c.scaleSets.BeginCreateOrUpdate(ctx, at.resourceGroup, ref.Name, armcompute.VirtualMachineScaleSet{},
			&armcompute.VirtualMachineScaleSetsClientBeginCreateOrUpdateOptions{ResumeToken: started.op.ResumeToken})
		msg = OperationFailure(ctx, p, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if cur, ok := s.ops[key]; ok && cur.op.ResumeToken == started.op.ResumeToken {
		cur.failure = msg
		s.ops[key] = cur
	}
	return msg
}

// Apply implements scalegroup.ScaleGroup: it reads the scale set and
// writes only what differs — nothing when the model hash, capacity, tags
// and in-place settings match, a PATCH of the capacity (and the custom
// data) when only the capacity differs, else a PUT of the whole scale set.
// It starts the write's long-running operation without waiting for it and
// returns the scale set as the write answered, with its VMs.
func (s *ScaleSets) Apply(ctx context.Context, ref scalegroup.Ref, spec scalegroup.GroupSpec) (*scalegroup.Group, error) {
	want, err := desiredScaleSet(ref, spec)
	if err != nil {
		return nil, fmt.Errorf("applying scale set %s: %w", ref, err)
	}
	at, c, err := s.resolve(ctx, ref)
	if err != nil {
		return nil, fmt.Errorf("applying scale set %s: %w", ref, err)
	}
	var cur *armcompute.VirtualMachineScaleSet
	switch res, err := c.scaleSets.Get(ctx, at.resourceGroup, ref.Name, nil); {
	case err == nil:
		cur = &res.VirtualMachineScaleSet
	case scalegroup.IsNotFound(cloudError(err, ref)):
	default:
		return nil, fmt.Errorf("applying scale set %s: %w", ref, cloudError(err, ref))
	}

	var (
		written *armcompute.VirtualMachineScaleSet
		op      *scalegroup.Operation
	)
	switch ch := compareScaleSet(cur, want, spec); {
	case ch.invalid != nil:
		return nil, fmt.Errorf("applying scale set %s: %w", ref, ch.invalid)
	case ch.full:
		if cur != nil {
			want.scaleSet.Location = cur.Location // unchanged: compareScaleSet checked it
		}
		if err := s.checkSKU(ctx, c, at.subscription, deref(want.scaleSet.Location), spec.Model.InstanceType, spec.Model.Zones); err != nil {
			return nil, fmt.Errorf("applying scale set %s: %w", ref, err)
		}
		log.FromContext(ctx).V(1).Info("Writing scale set", "group", ref.String(), "method", http.MethodPut,
			"capacity", spec.Capacity, "modelHash", spec.ModelHash, "create", cur == nil)
		written, op, err = s.put(ctx, c, at, ref, want.scaleSet, cur == nil)
	case ch.capacity:
		log.FromContext(ctx).V(1).Info("Writing scale set", "group", ref.String(), "method", http.MethodPatch,
			"capacity", spec.Capacity, "modelHash", spec.ModelHash)
		written, op, err = s.patchCapacity(ctx, c, at, ref, cur, spec)
	default:
		written = cur
	}
	if err != nil {
		return nil, fmt.Errorf("applying scale set %s: %w", ref, err)
	}
	if op != nil {
		s.remember(ref, *op)
	}
	instances, err := s.listInstances(ctx, c, at, ref, written)
	if err != nil {
		return nil, fmt.Errorf("listing the VMs of scale set %s: %w", ref, err)
	}
	return s.group(ref, written, instances), nil
}

// put creates or replaces the scale set (PUT) and returns the scale set as
// the write answered and the operation it started.
func (s *ScaleSets) put(ctx context.Context, c *sdkClients, at resourceGroup, ref scalegroup.Ref, v armcompute.VirtualMachineScaleSet, create bool) (*armcompute.VirtualMachineScaleSet, *scalegroup.Operation, error) {
	var resp *http.Response
	poller, err := c.scaleSets.BeginCreateOrUpdate(policy.WithCaptureResponse(ctx, &resp), at.resourceGroup, ref.Name, v, nil)
	if err != nil {
		return nil, nil, cloudError(err, ref)
	}
	typ := scalegroup.OperationUpdate
	if create {
		typ = scalegroup.OperationScale
	}
	written := writtenScaleSet(resp, v)
	return written, startedOp(typ, resp, poller), nil
}

// patchCapacity changes only the capacity (PATCH), sending the current
// custom data along (see the bootstrap data policy in package scalegroup).
func (s *ScaleSets) patchCapacity(ctx context.Context, c *sdkClients, at resourceGroup, ref scalegroup.Ref, cur *armcompute.VirtualMachineScaleSet, spec scalegroup.GroupSpec) (*armcompute.VirtualMachineScaleSet, *scalegroup.Operation, error) {
	upd := armcompute.VirtualMachineScaleSetUpdate{
		SKU: &armcompute.SKU{Capacity: ptr.To(int64(spec.Capacity))},
	}
	if cur.SKU != nil {
		upd.SKU.Name, upd.SKU.Tier = cur.SKU.Name, cur.SKU.Tier
	}
	if len(spec.Model.CustomData) > 0 {
		upd.Properties = &armcompute.VirtualMachineScaleSetUpdateProperties{
			VirtualMachineProfile: &armcompute.VirtualMachineScaleSetUpdateVMProfile{
				OSProfile: &armcompute.VirtualMachineScaleSetUpdateOSProfile{
					CustomData: ptr.To(base64.StdEncoding.EncodeToString(spec.Model.CustomData)),
				},
			},
		}
	}
	var resp *http.Response
	poller, err := c.scaleSets.BeginUpdate(policy.WithCaptureResponse(ctx, &resp), at.resourceGroup, ref.Name, upd, nil)
	if err != nil {
		return nil, nil, cloudError(err, ref)
	}
	fallback := *cur
	fallback.SKU = upd.SKU
	return writtenScaleSet(resp, fallback), startedOp(scalegroup.OperationScale, resp, poller), nil
}

// DeleteInstances implements scalegroup.ScaleGroup with the scale set's
// delete action, one request for all the VMs in either mode (Uniform
// instance IDs; Flexible VM names, as the cluster autoscaler's Azure
// provider sends them): Azure deletes the VMs and lowers the capacity by
// their number. IDs already gone or deleting are ignored; should Azure
// refuse unknown IDs, the VM list says which are left and the action is
// sent again for those.
func (s *ScaleSets) DeleteInstances(ctx context.Context, ref scalegroup.Ref, ids []string) error {
	ids = kit.UniqueIDs(ids)
	if len(ids) == 0 {
		return nil
	}
	at, c, err := s.resolve(ctx, ref)
	if err != nil {
		return fmt.Errorf("deleting instances %v of scale set %s: %w", ids, ref, err)
	}
	err = s.deleteInstances(ctx, c, at, ref, ids)
	if scalegroup.IsInvalid(err) {
		// Some IDs are unknown: keep those the scale set still has.
		left, lerr := s.existingIDs(ctx, c, at, ref, ids)
		switch {
		case lerr != nil:
		case len(left) == 0:
			err = nil
		case len(left) < len(ids):
			err = s.deleteInstances(ctx, c, at, ref, left)
		}
	}
	if err != nil && !scalegroup.IsNotFound(err) {
		return fmt.Errorf("deleting instances %v of scale set %s: %w", ids, ref, err)
	}
	return nil
}

func (s *ScaleSets) deleteInstances(ctx context.Context, c *sdkClients, at resourceGroup, ref scalegroup.Ref, ids []string) error {
	req := armcompute.VirtualMachineScaleSetVMInstanceRequiredIDs{InstanceIDs: to.SliceOfPtrs(ids...)}
	log.FromContext(ctx).V(1).Info("Deleting scale set VMs", "group", ref.String(), "instances", ids)
	if _, err := c.scaleSets.BeginDeleteInstances(ctx, at.resourceGroup, ref.Name, req, nil); err != nil {
		return cloudError(err, ref)
	}
	return nil
}

// existingIDs returns those of ids the scale set still has, not deleting.
func (s *ScaleSets) existingIDs(ctx context.Context, c *sdkClients, at resourceGroup, ref scalegroup.Ref, ids []string) ([]string, error) {
	res, err := c.scaleSets.Get(ctx, at.resourceGroup, ref.Name, nil)
	if err != nil {
		return nil, cloudError(err, ref)
	}
	instances, err := s.listInstances(ctx, c, at, ref, &res.VirtualMachineScaleSet)
	if err != nil {
		return nil, err
	}
	var left []string
	for _, in := range instances {
		if in.State != scalegroup.StateDeleting && slices.ContainsFunc(ids, func(id string) bool { return strings.EqualFold(id, in.ID) }) {
			left = append(left, in.ID)
		}
	}
	return left, nil
}

// Delete implements scalegroup.ScaleGroup: it starts deleting the scale
// set and its VMs and returns without waiting.
func (s *ScaleSets) Delete(ctx context.Context, ref scalegroup.Ref) error {
	at, c, err := s.resolve(ctx, ref)
	if err != nil {
		return fmt.Errorf("deleting scale set %s: %w", ref, err)
	}
	log.FromContext(ctx).V(1).Info("Deleting scale set", "group", ref.String())
	var resp *http.Response
	poller, err := c.scaleSets.BeginDelete(policy.WithCaptureResponse(ctx, &resp), at.resourceGroup, ref.Name, nil)
	if err != nil {
		if err := cloudError(err, ref); !scalegroup.IsNotFound(err) {
			return fmt.Errorf("deleting scale set %s: %w", ref, err)
		}
		s.forget(ref)
		return nil
	}
	if resp != nil && resp.StatusCode == http.StatusAccepted {
		s.remember(ref, *startedOp(scalegroup.OperationDelete, resp, poller))
	} else {
		s.forget(ref) // 204: there was no such scale set
	}
	return nil
}

// resourceGroup is where a scale set lives.
type resourceGroup struct {
	subscription, resourceGroup string
}

// scaleSetNameRE is Azure's rule for scale set names: 1 to 64 letters,
// digits, '_', '.' and '-', starting with a letter or digit and ending
// with a letter, digit or '_'.
var scaleSetNameRE = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9._-]{0,62}[A-Za-z0-9_])?$`)

// resourceGroupRE is Azure's rule for resource group names.
var resourceGroupRE = regexp.MustCompile(`^[-\w.()]{0,89}[-\w()]$`)

// parseRef checks a Ref's name and parses its scope,
// /subscriptions/<id>/resourceGroups/<name>.
func parseRef(ref scalegroup.Ref) (resourceGroup, error) {
	if !scaleSetNameRE.MatchString(ref.Name) {
		return resourceGroup{}, scalegroup.NewInvalid(fmt.Sprintf(
			"%q is not a valid scale set name: 1 to 64 letters, digits, '_', '.' and '-', starting with a letter or digit and not ending with '.' or '-'", ref.Name))
	}
	segs := strings.Split(ref.Scope, "/")
	if len(segs) != 5 || segs[0] != "" || !strings.EqualFold(segs[1], "subscriptions") || segs[2] == "" ||
		!strings.EqualFold(segs[3], "resourceGroups") || !resourceGroupRE.MatchString(segs[4]) {
		return resourceGroup{}, scalegroup.NewInvalid(fmt.Sprintf(
			"scope %q of scale set %s is not a resource group's ID, /subscriptions/<subscription>/resourceGroups/<name>", ref.Scope, ref.Name))
	}
	return resourceGroup{subscription: segs[2], resourceGroup: segs[4]}, nil
}

// resolve parses ref and returns the clients of its subscription, reached
// with its credentials.
func (s *ScaleSets) resolve(ctx context.Context, ref scalegroup.Ref) (resourceGroup, *sdkClients, error) {
	at, err := parseRef(ref)
	if err != nil {
		return at, nil, err
	}
	cred, err := kit.ResolveCredentials(ctx, ref, credentialsName(ref), s.opts.Credentials.TokenCredential)
	if err != nil {
		return at, nil, err
	}
	c, err := s.clientsFor(at.subscription, cred)
	return at, c, err
}

// clientsFor returns the clients of a subscription and credential, cached
// while the resolver returns the same credential.
func (s *ScaleSets) clientsFor(sub string, cred azcore.TokenCredential) (*sdkClients, error) {
	return s.clients.Get(clientKey{subscription: strings.ToLower(sub), cred: cred}, func() (*sdkClients, error) {
		c := &sdkClients{}
		var err error
		if c.scaleSets, err = armcompute.NewVirtualMachineScaleSetsClient(sub, cred, &s.armOpts); err != nil {
			return nil, fmt.Errorf("building the scale sets client: %w", err)
		}
		if c.scaleVMs, err = armcompute.NewVirtualMachineScaleSetVMsClient(sub, cred, &s.armOpts); err != nil {
			return nil, fmt.Errorf("building the scale set VMs client: %w", err)
		}
		if c.vms, err = armcompute.NewVirtualMachinesClient(sub, cred, &s.armOpts); err != nil {
			return nil, fmt.Errorf("building the VMs client: %w", err)
		}
		if c.skus, err = armcompute.NewResourceSKUsClient(sub, cred, &s.armOpts); err != nil {
			return nil, fmt.Errorf("building the resource SKUs client: %w", err)
		}
		return c, nil
	})
}

// listInstances lists the scale set's VMs, every page: Uniform through the
// scale set's VM list, Flexible through the resource group's VMs filtered
// to the scale set. Both ask for the instance view (power state) in the
// same requests.
func (s *ScaleSets) listInstances(ctx context.Context, c *sdkClients, at resourceGroup, ref scalegroup.Ref, vmss *armcompute.VirtualMachineScaleSet) ([]scalegroup.Instance, error) {
	hash := tagValue(vmss.Tags, TagModelHash)
	name := ptr.Deref(vmss.Name, ref.Name)
	var out []scalegroup.Instance
	var err error
	if isFlexible(vmss) {
		id := ptr.Deref(vmss.ID, "")
		if id == "" {
			id = "/subscriptions/" + at.subscription + "/resourceGroups/" + at.resourceGroup + "/providers/Microsoft.Compute/virtualMachineScaleSets/" + name
		}
		filter := "'virtualMachineScaleSet/id' eq '" + id + "'"
		pager := c.vms.NewListPager(at.resourceGroup, &armcompute.VirtualMachinesClientListOptions{
			Filter: &filter, Expand: ptr.To(armcompute.ExpandTypeForListVMsInstanceView),
		})
		vms := func(p armcompute.VirtualMachinesClientListResponse) []*armcompute.VirtualMachine { return p.Value }
		out, err = listAll(ctx, ref, pager, vms, func(vm *armcompute.VirtualMachine) scalegroup.Instance { return flexibleInstance(vm, hash) })
	} else {
		pager := c.scaleVMs.NewListPager(at.resourceGroup, name, &armcompute.VirtualMachineScaleSetVMsClientListOptions{
			Expand: ptr.To("instanceView"),
		})
		vms := func(p armcompute.VirtualMachineScaleSetVMsClientListResponse) []*armcompute.VirtualMachineScaleSetVM {
			return p.Value
		}
		out, err = listAll(ctx, ref, pager, vms, func(vm *armcompute.VirtualMachineScaleSetVM) scalegroup.Instance { return uniformInstance(vm, hash) })
	}
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b scalegroup.Instance) int { return compareIDs(a.ID, b.ID) })
	return out, nil
}

// listAll maps every item of every page pager lists (the page's items,
// nil ones left out) to an instance.
func listAll[P, V any](ctx context.Context, ref scalegroup.Ref, pager *runtime.Pager[P], items func(P) []*V, instance func(*V) scalegroup.Instance) ([]scalegroup.Instance, error) {
	var out []scalegroup.Instance
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, cloudError(err, ref)
		}
		for _, v := range items(page) {
			if v != nil {
				out = append(out, instance(v))
			}
		}
	}
	return out, nil
}

// group maps a scale set and its instances onto a Group, with the
// operation this process started when it is still in progress.
func (s *ScaleSets) group(ref scalegroup.Ref, vmss *armcompute.VirtualMachineScaleSet, instances []scalegroup.Instance) *scalegroup.Group {
	g := &scalegroup.Group{
		Name:      ptr.Deref(vmss.Name, ref.Name),
		ModelHash: tagValue(vmss.Tags, TagModelHash),
		Instances: instances,
	}
	if vmss.SKU != nil {
		g.Capacity = int32(ptr.Deref(vmss.SKU.Capacity, 0))
	}
	state := ""
	if vmss.Properties != nil {
		state = ptr.Deref(vmss.Properties.ProvisioningState, "")
	}
	key := opKey(ref)
	s.mu.Lock()
	started, ok := s.ops[key]
	s.mu.Unlock()
	typ := ""
	switch {
	case strings.EqualFold(state, "Deleting"):
		typ = scalegroup.OperationDelete
	case strings.EqualFold(state, "Creating"):
		typ = scalegroup.OperationScale
	case strings.EqualFold(state, "Updating"):
		typ = scalegroup.OperationUpdate
	}
	switch {
	case typ == "":
		if ok && !strings.EqualFold(state, "Failed") {
			// Done; a failed one is kept for its error (see failure).
			s.mu.Lock()
			delete(s.ops, key)
			s.mu.Unlock()
		}
	case ok && (typ == scalegroup.OperationDelete) == (started.op.Type == scalegroup.OperationDelete):
		op := started.op
		op.Message = "Azure reports the scale set " + state
		g.Operation = &op
	default:
		g.Operation = &scalegroup.Operation{Type: typ, Message: "Azure reports the scale set " + state}
	}
	if strings.EqualFold(state, "Failed") {
		failed := 0
		for _, in := range instances {
			if in.State == scalegroup.StateFailed {
				failed++
			}
		}
		g.Message = fmt.Sprintf("Azure reports the scale set's provisioning state Failed (%d of its %d VMs failed)", failed, len(instances))
	}
	return g
}

// remember records an operation started by this process.
func (s *ScaleSets) remember(ref scalegroup.Ref, op scalegroup.Operation) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ops[opKey(ref)] = startedOperation{op: op}
}

// resume takes op, the operation the pool recorded (an earlier
// process's), as this process's when it knows of none on ref.
func (s *ScaleSets) resume(ref scalegroup.Ref, op scalegroup.Operation) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.ops[opKey(ref)]; !ok {
		s.ops[opKey(ref)] = startedOperation{op: op}
	}
}

// forget drops the operation recorded for a scale set that is gone.
func (s *ScaleSets) forget(ref scalegroup.Ref) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.ops, opKey(ref))
}

// opKey is a scale set's key among the operations started (ARM names are
// case-insensitive).
func opKey(ref scalegroup.Ref) string { return strings.ToLower(ref.Scope + "/" + ref.Name) }

// startedOp describes the operation a write started, from its response: the
// operation's ID (the last segment of its Azure-AsyncOperation URL), the
// response's Date and the poller's resume token.
func startedOp[T any](typ string, resp *http.Response, p *runtime.Poller[T]) *scalegroup.Operation {
	op := &scalegroup.Operation{Type: typ}
	if resp != nil {
		if u, err := url.Parse(resp.Header.Get("Azure-AsyncOperation")); err == nil && u.Path != "" {
			op.ID = u.Path[strings.LastIndexByte(u.Path, '/')+1:]
		}
		if t, err := http.ParseTime(resp.Header.Get("Date")); err == nil {
			op.StartedAt = t
		}
	}
	if p != nil && !p.Done() {
		if tok, err := p.ResumeToken(); err == nil {
			op.ResumeToken = tok
		}
	}
	return op
}

// writtenScaleSet is the scale set a PUT or PATCH answered with (ARM
// returns the resource), else fallback, what was sent.
func writtenScaleSet(resp *http.Response, fallback armcompute.VirtualMachineScaleSet) *armcompute.VirtualMachineScaleSet {
	if resp != nil {
		var v armcompute.VirtualMachineScaleSet
		if err := runtime.UnmarshalAsJSON(resp, &v); err == nil && v.Name != nil {
			return &v
		}
	}
	return &fallback
}

// credentialsName names a Ref's credentials in messages.
func credentialsName(ref scalegroup.Ref) string {
	if ref.Credentials == "" {
		return "the manager's own Azure credentials"
	}
	return "AzureClusterIdentity " + ref.Credentials
}

// compareIDs orders instance IDs: numerically when both are numbers
// (Uniform's 0, 1, 2, ..., 10), else as strings.
func compareIDs(a, b string) int {
	na, errA := strconv.ParseUint(a, 10, 64)
	nb, errB := strconv.ParseUint(b, 10, 64)
	if errA == nil && errB == nil {
		switch {
		case na < nb:
			return -1
		case na > nb:
			return 1
		}
		return 0
	}
	return strings.Compare(a, b)
}

// timeOf dereferences an optional time.
func timeOf(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return *t
}
