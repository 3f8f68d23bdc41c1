package gcp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	compute "cloud.google.com/go/compute/apiv1"
	"cloud.google.com/go/compute/apiv1/computepb"
	"google.golang.org/api/option"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/mpool-dev/mpool/internal/provider/kit"
	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// Name limits. An instance template is named
// <group>-<model hash (20)>-<user-data hash (8)> within Compute Engine's
// 63 characters.
const (
	maxGroupName = 63 - 1 - modelHashLen - 1 - userDataHashLen
	modelHashLen = 20
	// userDataHashLen is the length of the user-data's hash in a template's
	// name.
	userDataHashLen = 8
)

// LabelKubernetesVersion on an instance template is the Kubernetes version
// of its instances, dots as dashes (v1-30-4).
const LabelKubernetesVersion = "mpool-kubernetes-version"

// Options configure a ScaleGroup of managed instance groups.
type Options struct {
	// Endpoint is Compute Engine's base URL ("" for the SDK's).
	Endpoint string
	// Credentials resolves each group's authenticated HTTP client.
	Credentials *Credentials
	// Clock dates the instances first seen (nil: the real clock).
	Clock clock.PassiveClock
}

// MIGs is the scalegroup.ScaleGroup of Compute Engine managed instance
// groups (see the package doc).
type MIGs struct {
	opts    Options
	clients kit.ClientCache[string, *clients]
	// seen is when this process first saw each instance (by providerID):
	// a managed instance carries no creation time.
	mu   sync.Mutex
	seen map[string]time.Time
	// hashes are the model hashes of templates ("<project>/<name>").
	hashes map[string]string
}

var _ scalegroup.ScaleGroup = (*MIGs)(nil)

// New returns the ScaleGroup of managed instance groups.
func New(o Options) *MIGs {
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	return &MIGs{opts: o, seen: map[string]time.Time{}, hashes: map[string]string{}}
}

// clients are the Compute Engine clients of one set of credentials.
type clients struct {
	templates *compute.InstanceTemplatesClient
	managers  managers
}

func (s *MIGs) clientsOf(ctx context.Context, ref scalegroup.Ref) (*clients, error) {
	hc, key, err := s.opts.Credentials.client(ctx, ref)
	if err != nil {
		return nil, err
	}
	return s.clients.Get(key, func() (*clients, error) {
		opts := []option.ClientOption{option.WithHTTPClient(hc)}
		if s.opts.Endpoint != "" {
			opts = append(opts, option.WithEndpoint(s.opts.Endpoint))
		}
		bg := context.Background()
		t, err := compute.NewInstanceTemplatesRESTClient(bg, opts...)
		if err != nil {
			return nil, err
		}
		z, err := compute.NewInstanceGroupManagersRESTClient(bg, opts...)
		if err != nil {
			return nil, err
		}
		r, err := compute.NewRegionInstanceGroupManagersRESTClient(bg, opts...)
		if err != nil {
			return nil, err
		}
		return &clients{templates: t, managers: managers{zonal: z, regional: r}}, nil
	})
}

// isZone tells a zone (us-central1-a) from a region (us-central1).
func isZone(location string) bool { return strings.Count(location, "-") >= 2 }

// Capabilities implements scalegroup.ScaleGroup: the engine picks the
// victims (the group's update policy is OPPORTUNISTIC).
func (*MIGs) Capabilities() scalegroup.Capabilities { return scalegroup.Capabilities{} }

// templateName is the instance template of a group's model and user data.
func templateName(group, modelHash string, customData []byte) string {
	sum := sha256.Sum256(customData)
	return group + "-" + modelHashPart(modelHash) + "-" + hex.EncodeToString(sum[:])[:userDataHashLen]
}

// modelHashPart is the model hash as a template name carries it: the
// hash itself when it is modelHashLen lowercase hex digits (the engine's),
// else a digest of it; the template's description holds the hash.
func modelHashPart(h string) string {
	if hexHash.MatchString(h) {
		return h
	}
	sum := sha256.Sum256([]byte(h))
	return hex.EncodeToString(sum[:])[:modelHashLen]
}

var hexHash = regexp.MustCompile(fmt.Sprintf(`^[0-9a-f]{%d}$`, modelHashLen))

// descriptionPrefix starts a template's description, followed by its
// model hash.
const descriptionPrefix = "mpool model "

// models returns the model hashes of the group's templates in use (the
// group's and its instances'), by template name: from the names mpool
// gave them, read once from each template's description (templates never
// change) and remembered.
func (s *MIGs) models(ctx context.Context, c *clients, ref scalegroup.Ref, igm *computepb.InstanceGroupManager, mis []*computepb.ManagedInstance) (map[string]string, error) {
	out := map[string]string{}
	names := []string{lastPart(igm.GetInstanceTemplate())}
	for _, mi := range mis {
		names = append(names, lastPart(mi.GetVersion().GetInstanceTemplate()))
	}
	for _, name := range names {
		if _, done := out[name]; done || name == "" {
			continue
		}
		part, _, ok := parseTemplate(ref.Name, name)
		if !ok {
			out[name] = ""
			continue
		}
		s.mu.Lock()
		h, known := s.hashes[ref.Scope+"/"+name]
		s.mu.Unlock()
		if !known {
			t, err := c.templates.Get(ctx, &computepb.GetInstanceTemplateRequest{Project: ref.Scope, InstanceTemplate: name})
			switch {
			case isNotFound(err):
				h = part // deleted behind mpool's back: its instances are stale
			case err != nil:
				return nil, cloudError(err, ref)
			default:
				h = strings.TrimPrefix(t.GetDescription(), descriptionPrefix)
				s.remember(ref, name, h)
			}
		}
		out[name] = h
	}
	return out, nil
}

// remember records the model hash of the template name.
func (s *MIGs) remember(ref scalegroup.Ref, name, hash string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.hashes) > 100000 {
		s.hashes = map[string]string{}
	}
	s.hashes[ref.Scope+"/"+name] = hash
}

// lastPart is the last segment of a URL or partial URL.
func lastPart(u string) string { return u[strings.LastIndexByte(u, '/')+1:] }

// parseTemplate reads the model hash and the user data's hash of a
// template of group (its URL or name); ok is false for another's template.
func parseTemplate(group, template string) (model, userData string, ok bool) {
	name := template[strings.LastIndexByte(template, '/')+1:]
	rest, ok := strings.CutPrefix(name, group+"-")
	if !ok || len(rest) != modelHashLen+1+userDataHashLen || rest[modelHashLen] != '-' {
		return "", "", false
	}
	return rest[:modelHashLen], rest[modelHashLen+1:], true
}

// Get implements scalegroup.ScaleGroup: one read of the group and the
// pages of its managed instances. A group that is gone but whose instance
// templates remain (a deletion half done, or a creation stopped before the
// group) is reported empty, so that Delete is called to remove them.
func (s *MIGs) Get(ctx context.Context, ref scalegroup.Ref) (*scalegroup.Group, error) {
	c, err := s.clientsOf(ctx, ref)
	if err != nil {
		return nil, err
	}
	igm, err := c.managers.get(ctx, ref.Scope, ref.Location, ref.Name)
	if isNotFound(err) {
		left, lerr := s.templates(ctx, c, ref)
		if lerr != nil {
			return nil, cloudError(lerr, ref)
		}
		if len(left) == 0 {
			return nil, scalegroup.NewNotFound(ref.Name)
		}
		return &scalegroup.Group{Name: ref.Name, Message: fmt.Sprintf("the managed instance group is gone; %d instance templates remain", len(left))}, nil
	}
	if err != nil {
		return nil, cloudError(err, ref)
	}
	mis, err := c.managers.list(ctx, ref.Scope, ref.Location, ref.Name)
	if err != nil {
		return nil, cloudError(err, ref)
	}
	return s.groupOf(ctx, c, ref, igm, mis)
}

// groupOf maps a group and its managed instances.
func (s *MIGs) groupOf(ctx context.Context, c *clients, ref scalegroup.Ref, igm *computepb.InstanceGroupManager, mis []*computepb.ManagedInstance) (*scalegroup.Group, error) {
	models, err := s.models(ctx, c, ref, igm, mis)
	if err != nil {
		return nil, err
	}
	tmpl := igm.GetInstanceTemplate()
	g := &scalegroup.Group{Name: ref.Name, Capacity: igm.GetTargetSize(), ModelHash: models[lastPart(tmpl)]}
	if tmpl != "" {
		g.Template = &scalegroup.TemplateRef{ID: tmpl[strings.LastIndexByte(tmpl, '/')+1:]}
	}
	now := s.opts.Clock.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	live := map[string]bool{}
	busy := 0
	for _, mi := range mis {
		in := instanceOf(ref, mi)
		in.ModelHash = models[lastPart(mi.GetVersion().GetInstanceTemplate())]
		if in.ID == "" {
			continue
		}
		at, ok := s.seen[in.ProviderID]
		if !ok {
			at = now
			s.seen[in.ProviderID] = at
		}
		live[in.ProviderID] = true
		in.CreatedAt = at
		if in.State == scalegroup.StateCreating || in.State == scalegroup.StateDeleting {
			busy++
		}
		g.Instances = append(g.Instances, in)
	}
	if len(s.seen) > 100000 {
		maps.DeleteFunc(s.seen, func(id string, _ time.Time) bool { return !live[id] })
	}
	slices.SortFunc(g.Instances, func(a, b scalegroup.Instance) int { return strings.Compare(a.ID, b.ID) })
	if busy > 0 {
		g.Operation = &scalegroup.Operation{Type: scalegroup.OperationScale, Message: fmt.Sprintf("%d instances being created or deleted", busy)}
	}
	return g, nil
}

// instanceOf maps a managed instance: its name is its ID, its zone the
// instance URL's, its model the template it was created from.
func instanceOf(ref scalegroup.Ref, mi *computepb.ManagedInstance) scalegroup.Instance {
	u := mi.GetInstance()
	name := mi.GetName()
	if name == "" {
		name = u[strings.LastIndexByte(u, '/')+1:]
	}
	zone := ""
	if _, rest, ok := strings.Cut(u, "/zones/"); ok {
		zone, _, _ = strings.Cut(rest, "/")
	}
	in := scalegroup.Instance{ID: name, Zone: zone, ProviderID: "gce://" + ref.Scope + "/" + zone + "/" + name}
	if v := mi.GetVersion(); v != nil {
		if t := v.GetInstanceTemplate(); t != "" {
			in.Template = &scalegroup.TemplateRef{ID: t[strings.LastIndexByte(t, '/')+1:]}
		}
	}
	var msgs []string
	if la := mi.GetLastAttempt(); la != nil && la.GetErrors() != nil {
		for _, e := range la.GetErrors().GetErrors() {
			msgs = append(msgs, kit.OneLine(e.GetCode()+": "+e.GetMessage()))
		}
	}
	switch action, status := mi.GetCurrentAction(), mi.GetInstanceStatus(); {
	case action == "DELETING" || action == "ABANDONING":
		in.State = scalegroup.StateDeleting
	case action == "CREATING" || action == "CREATING_WITHOUT_RETRIES" || action == "RECREATING":
		in.State = scalegroup.StateCreating
	case status == "TERMINATED" || status == "STOPPED" || status == "SUSPENDED":
		in.State = scalegroup.StateFailed
		if len(msgs) == 0 {
			msgs = append(msgs, "the instance is "+status)
		}
	case status == "RUNNING" && (action == "NONE" || action == ""):
		in.State = scalegroup.StateRunning
	default:
		in.State = scalegroup.StateBooting
	}
	in.Message = strings.Join(msgs, "; ")
	return in
}

// templates lists the group's instance templates (names).
func (s *MIGs) templates(ctx context.Context, c *clients, ref scalegroup.Ref) ([]string, error) {
	filter := fmt.Sprintf(`name eq "%s-[0-9a-z]{%d}-[0-9a-f]{%d}"`, regexp.QuoteMeta(ref.Name), modelHashLen, userDataHashLen)
	it := c.templates.List(ctx, &computepb.ListInstanceTemplatesRequest{Project: ref.Scope, Filter: &filter, MaxResults: ptr.To[uint32](pageSize)})
	list, err := all(it)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, t := range list {
		if _, _, ok := parseTemplate(ref.Name, t.GetName()); ok {
			out = append(out, t.GetName())
		}
	}
	return out, nil
}

// Apply implements scalegroup.ScaleGroup. It reads the group, then writes
// only what differs:
//
//   - no group: the model's instance template, then the group
//     (OPPORTUNISTIC: the group replaces nothing itself) at the capacity;
//   - a new model, or more capacity while the user data differs from the
//     group's template's: the template of this model and user data
//     (reused when it exists: a manager stopped before using it), then
//     setInstanceTemplate — existing instances keep theirs;
//   - the capacity when it differs (resize).
//
// A rotated bootstrap token thus costs no write at rest: it is sent with
// the next scale-up.
func (s *MIGs) Apply(ctx context.Context, ref scalegroup.Ref, spec scalegroup.GroupSpec) (*scalegroup.Group, error) {
	c, err := s.clientsOf(ctx, ref)
	if err != nil {
		return nil, err
	}
	api := c.managers
	logger := log.FromContext(ctx).WithValues("group", ref.String())
	want := templateName(ref.Name, spec.ModelHash, spec.Model.CustomData)
	igm, err := api.get(ctx, ref.Scope, ref.Location, ref.Name)
	switch {
	case isNotFound(err):
		if err := s.ensureTemplate(ctx, c, ref, spec, want); err != nil {
			return nil, err
		}
		res, err := igmResource(ref, spec, want)
		if err != nil {
			return nil, err
		}
		logger.V(1).Info("Creating managed instance group", "capacity", spec.Capacity, "modelHash", spec.ModelHash, "template", want)
		if err := api.insert(ctx, ref.Scope, ref.Location, res, requestID(ref, nil, "insert", want, strconv.Itoa(int(spec.Capacity)))); err != nil && !isAlreadyExists(err) {
			return nil, cloudError(err, ref)
		}
		return &scalegroup.Group{Name: ref.Name, Capacity: spec.Capacity, ModelHash: spec.ModelHash,
			Template: &scalegroup.TemplateRef{ID: want}, Operation: &scalegroup.Operation{Type: scalegroup.OperationScale, StartedAt: s.opts.Clock.Now()}}, nil
	case err != nil:
		return nil, cloudError(err, ref)
	}
	if isZone(ref.Location) && len(spec.Model.Zones) > 0 && !slices.Equal(spec.Model.Zones, []string{ref.Location}) {
		return nil, scalegroup.NewInvalid(fmt.Sprintf("the group is zonal, in %s (the pool named one zone when it was created), and cannot span zones %v: keep spec.zones at [%s], or create a new pool",
			ref.Location, spec.Model.Zones, ref.Location))
	}
	model, userData, _ := parseTemplate(ref.Name, igm.GetInstanceTemplate())
	_, wantUserData, _ := parseTemplate(ref.Name, want)
	size := igm.GetTargetSize()
	wrote := false
	if model != modelHashPart(spec.ModelHash) || (spec.Capacity > size && userData != wantUserData) {
		if err := s.ensureTemplate(ctx, c, ref, spec, want); err != nil {
			return nil, err
		}
		logger.V(1).Info("Setting the group's instance template", "template", want, "modelHash", spec.ModelHash)
		if err := api.setTemplate(ctx, ref.Scope, ref.Location, ref.Name, "projects/"+ref.Scope+"/global/instanceTemplates/"+want, requestID(ref, igm, "setInstanceTemplate", want)); err != nil {
			return nil, cloudError(err, ref)
		}
		wrote = true
	}
	if size != spec.Capacity {
		logger.V(1).Info("Resizing managed instance group", "from", size, "to", spec.Capacity)
		// After a setInstanceTemplate the fingerprint read is stale; the
		// template keeps this resize apart from one decided on the same
		// group without it.
		if err := api.resize(ctx, ref.Scope, ref.Location, ref.Name, spec.Capacity, requestID(ref, igm, "resize", strconv.Itoa(int(spec.Capacity)), strconv.FormatBool(wrote), want)); err != nil {
			return nil, cloudError(err, ref)
		}
		wrote = true
	}
	if !wrote {
		mis, err := api.list(ctx, ref.Scope, ref.Location, ref.Name)
		if err != nil {
			return nil, cloudError(err, ref)
		}
		return s.groupOf(ctx, c, ref, igm, mis)
	}
	return s.Get(ctx, ref)
}

// ensureTemplate creates the instance template name of spec unless it
// exists.
func (s *MIGs) ensureTemplate(ctx context.Context, c *clients, ref scalegroup.Ref, spec scalegroup.GroupSpec, name string) error {
	t, err := templateResource(ref, spec, name)
	if err != nil {
		return err
	}
	_, err = c.templates.Insert(ctx, &computepb.InsertInstanceTemplateRequest{Project: ref.Scope, InstanceTemplateResource: t})
	if err != nil && !isAlreadyExists(err) {
		return cloudError(err, ref)
	}
	s.remember(ref, name, spec.ModelHash)
	return nil
}

// igmResource is a new group of spec using template.
func igmResource(ref scalegroup.Ref, spec scalegroup.GroupSpec, template string) (*computepb.InstanceGroupManager, error) {
	igm := &computepb.InstanceGroupManager{
		Name:             &ref.Name,
		BaseInstanceName: &ref.Name,
		InstanceTemplate: ptr.To("projects/" + ref.Scope + "/global/instanceTemplates/" + template),
		TargetSize:       ptr.To(spec.Capacity),
		UpdatePolicy:     &computepb.InstanceGroupManagerUpdatePolicy{Type: ptr.To("OPPORTUNISTIC")},
		Description:      ptr.To("mpool machine pool " + ref.Namespace),
	}
	if isZone(ref.Location) {
		if len(spec.Model.Zones) > 0 && !slices.Equal(spec.Model.Zones, []string{ref.Location}) {
			return nil, scalegroup.NewInvalid(fmt.Sprintf("a zonal group in %s cannot span zones %v", ref.Location, spec.Model.Zones))
		}
		return igm, nil
	}
	if len(spec.Model.Zones) > 0 {
		igm.DistributionPolicy = &computepb.DistributionPolicy{TargetShape: ptr.To("EVEN")}
		for _, z := range spec.Model.Zones {
			igm.DistributionPolicy.Zones = append(igm.DistributionPolicy.Zones, &computepb.DistributionPolicyZoneConfiguration{Zone: ptr.To("zones/" + z)})
		}
	}
	return igm, nil
}

var labelChars = regexp.MustCompile(`[^a-z0-9_-]`)

// label makes s a label key or value: lowercase, [a-z0-9_-], at most 63
// characters (keys start with a letter).
func label(s string, key bool) string {
	s = labelChars.ReplaceAllString(strings.ToLower(s), "_")
	if key && (s == "" || s[0] < 'a' || s[0] > 'z') {
		s = "k" + s
	}
	if len(s) > 63 {
		s = s[:63]
	}
	return s
}

// templateResource is the instance template name of spec: its machine
// type, boot disk from its image, user-data (the bootstrap data), labels
// (the model's tags, as labels), and the GCP part of the model.
func templateResource(ref scalegroup.Ref, spec scalegroup.GroupSpec, name string) (*computepb.InstanceTemplate, error) {
	t, _, err := kit.ModelPart[Template](spec.Model.Provider, "the model's GCP part")
	if err != nil {
		return nil, err
	}
	m := spec.Model
	labels := map[string]string{}
	for k, v := range m.Tags {
		labels[label(k, true)] = label(v, false)
	}
	if m.Version != "" {
		labels[LabelKubernetesVersion] = label(strings.ReplaceAll(m.Version, ".", "-"), false)
	}
	size, typ := t.BootDiskSizeGB, t.BootDiskType
	if size == 0 {
		size = defaultRootDeviceSize
	}
	if typ == "" {
		typ = defaultDiskType
	}
	p := &computepb.InstanceProperties{
		MachineType:  &m.InstanceType,
		Labels:       labels,
		CanIpForward: ptr.To(t.CanIPForward),
		Disks: []*computepb.AttachedDisk{{
			Boot: ptr.To(true), AutoDelete: ptr.To(true), Type: ptr.To("PERSISTENT"),
			InitializeParams: &computepb.AttachedDiskInitializeParams{SourceImage: &m.Image, DiskSizeGb: &size, DiskType: &typ},
		}},
		Metadata: &computepb.Metadata{Items: []*computepb.Items{{Key: ptr.To("user-data"), Value: ptr.To(string(m.CustomData))}}},
	}
	for _, d := range t.Disks {
		disk := &computepb.AttachedDisk{AutoDelete: ptr.To(true), Type: ptr.To("PERSISTENT"),
			InitializeParams: &computepb.AttachedDiskInitializeParams{DiskSizeGb: ptr.To(d.SizeGB), DiskType: ptr.To(d.Type)}}
		if d.Type == "local-ssd" {
			disk.Type, disk.Interface = ptr.To("SCRATCH"), ptr.To("NVME")
		}
		p.Disks = append(p.Disks, disk)
	}
	for _, it := range t.Metadata {
		p.Metadata.Items = append(p.Metadata.Items, &computepb.Items{Key: ptr.To(it.Key), Value: ptr.To(it.Value)})
	}
	if len(t.NetworkTags) > 0 {
		p.Tags = &computepb.Tags{Items: t.NetworkTags}
	}
	nic := &computepb.NetworkInterface{Network: ptr.To(t.Network)}
	if t.Subnetwork != "" {
		nic.Subnetwork = ptr.To(t.Subnetwork)
	}
	if t.PublicIP {
		nic.AccessConfigs = []*computepb.AccessConfig{{Name: ptr.To("External NAT"), Type: ptr.To("ONE_TO_ONE_NAT")}}
	}
	p.NetworkInterfaces = []*computepb.NetworkInterface{nic}
	if t.ServiceAccount != "" {
		p.ServiceAccounts = []*computepb.ServiceAccount{{Email: ptr.To(t.ServiceAccount), Scopes: t.Scopes}}
	}
	sched := &computepb.Scheduling{}
	if t.Preemptible {
		sched.Preemptible, sched.AutomaticRestart = ptr.To(true), ptr.To(false)
	}
	if t.ProvisioningModel != "" {
		sched.ProvisioningModel = ptr.To(strings.ToUpper(t.ProvisioningModel))
	}
	if t.OnHostMaintenance != "" {
		sched.OnHostMaintenance = ptr.To(strings.ToUpper(t.OnHostMaintenance))
	}
	p.Scheduling = sched
	if s := t.Shielded; s != nil {
		p.ShieldedInstanceConfig = &computepb.ShieldedInstanceConfig{EnableSecureBoot: ptr.To(s.SecureBoot), EnableVtpm: ptr.To(s.VTPM), EnableIntegrityMonitoring: ptr.To(s.IntegrityMonitoring)}
	}
	if t.Confidential != "" {
		p.ConfidentialInstanceConfig = &computepb.ConfidentialInstanceConfig{EnableConfidentialCompute: ptr.To(true)}
		if kind := confidentialTypes[t.Confidential]; kind != "" {
			p.ConfidentialInstanceConfig.ConfidentialInstanceType = ptr.To(kind)
		}
	}
	return &computepb.InstanceTemplate{Name: &name, Description: ptr.To(descriptionPrefix + spec.ModelHash), Properties: p}, nil
}

// confidentialTypes are CAPG's confidentialCompute values' instance types.
var confidentialTypes = map[string]string{
	"AMDEncryptedVirtualization":             "SEV",
	"AMDEncryptedVirtualizationNestedPaging": "SEV_SNP",
	"IntelTrustedDomainExtensions":           "TDX",
}

// DeleteInstances implements scalegroup.ScaleGroup with the group's
// deleteInstances, skipping instances that are no longer members (the
// group lowers its target size by those it deletes).
func (s *MIGs) DeleteInstances(ctx context.Context, ref scalegroup.Ref, ids []string) error {
	ids = kit.UniqueIDs(ids)
	if len(ids) == 0 {
		return nil
	}
	c, err := s.clientsOf(ctx, ref)
	if err != nil {
		return err
	}
	api := c.managers
	mis, err := api.list(ctx, ref.Scope, ref.Location, ref.Name)
	if isNotFound(err) {
		return nil
	}
	if err != nil {
		return cloudError(err, ref)
	}
	byID := map[string]*computepb.ManagedInstance{}
	for _, mi := range mis {
		byID[instanceOf(ref, mi).ID] = mi
	}
	// The instances' numeric IDs key the request: a name may come again.
	var urls, keys []string
	for _, id := range ids {
		if mi, ok := byID[id]; ok {
			if in := instanceOf(ref, mi); in.State != scalegroup.StateDeleting {
				urls = append(urls, "projects/"+ref.Scope+"/zones/"+in.Zone+"/instances/"+id)
				keys = append(keys, id+"/"+strconv.FormatUint(mi.GetId(), 10))
			}
		}
	}
	if len(urls) == 0 {
		return nil
	}
	log.FromContext(ctx).V(1).Info("Deleting instances", "group", ref.String(), "instances", len(urls))
	if err := api.deleteInstances(ctx, ref.Scope, ref.Location, ref.Name, urls, requestID(ref, nil, "deleteInstances", keys...)); err != nil && !isNotFound(err) {
		return cloudError(err, ref)
	}
	return nil
}

// Delete implements scalegroup.ScaleGroup: it deletes the group with its
// instances; once the group is gone, its instance templates (which Compute
// Engine refuses to delete while the group uses them).
func (s *MIGs) Delete(ctx context.Context, ref scalegroup.Ref) error {
	c, err := s.clientsOf(ctx, ref)
	if err != nil {
		return err
	}
	err = c.managers.delete(ctx, ref.Scope, ref.Location, ref.Name)
	switch {
	case err == nil:
		return nil
	case !isNotFound(err):
		return cloudError(err, ref)
	}
	left, err := s.templates(ctx, c, ref)
	if err != nil {
		return cloudError(err, ref)
	}
	for _, name := range left {
		if _, err := c.templates.Delete(ctx, &computepb.DeleteInstanceTemplateRequest{Project: ref.Scope, InstanceTemplate: name}); err != nil && !isNotFound(err) {
			return cloudError(err, ref)
		}
	}
	return nil
}
