package awsface

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/wire/awsapi"
)

// awsMaxActivities bounds the scaling activities kept per group.
const awsMaxActivities = 100

// AWSGroupTag is a tag of an Auto Scaling group (PropagateAtLaunch: its
// instances carry it too).
type AWSGroupTag struct {
	Key               string `json:"key"`
	Value             string `json:"value"`
	PropagateAtLaunch bool   `json:"propagateAtLaunch"`
}

// awsGroupPayload is what the face keeps about an Auto Scaling group in the
// core (GroupSpec.Payload). Desired is the group's desired capacity; the
// core's capacity is lower while the vCPU quota holds launches back.
type awsGroupPayload struct {
	Name        string    `json:"name"`
	ARN         string    `json:"arn"`
	CreatedTime time.Time `json:"createdTime"`
	// LaunchTemplate is as the group names it (Version as sent, "" for
	// $Default); Resolved is the version the current model is from.
	LaunchTemplate awsapi.LaunchTemplateSpecification  `json:"launchTemplate"`
	Resolved       *awsapi.LaunchTemplateSpecification `json:"resolved,omitempty"`
	InstanceType   string                              `json:"instanceType,omitempty"`
	ImageID        string                              `json:"imageId,omitempty"`
	KeyName        string                              `json:"keyName,omitempty"`
	Spot           bool                                `json:"spot,omitempty"`
	// TemplateTags are the launch template version's instance tags.
	TemplateTags          []awsapi.Tag  `json:"templateTags,omitempty"`
	MinSize               int32         `json:"minSize"`
	MaxSize               int32         `json:"maxSize"`
	Desired               int32         `json:"desired"`
	Subnets               []string      `json:"subnets,omitempty"`
	Zones                 []string      `json:"zones"`
	Tags                  []AWSGroupTag `json:"tags,omitempty"`
	CapacityRebalance     bool          `json:"capacityRebalance,omitempty"`
	DefaultInstanceWarmup *int32        `json:"defaultInstanceWarmup,omitempty"`
	HealthCheckType       string        `json:"healthCheckType,omitempty"`
	HealthCheckGrace      int32         `json:"healthCheckGracePeriod,omitempty"`
	DefaultCooldown       int32         `json:"defaultCooldown,omitempty"`
	NewInstancesProtected bool          `json:"newInstancesProtectedFromScaleIn,omitempty"`
	TerminationPolicies   []string      `json:"terminationPolicies,omitempty"`
	// Hooks are the group's lifecycle hooks (hooks.go).
	Hooks []awsHook `json:"hooks,omitempty"`
	// Managed marks a group another face writes (AWSManagedGroup): it
	// names no launch template, and what it launches to keep its desired
	// capacity (a replacement) is the model that face last wrote.
	Managed bool `json:"managed,omitempty"`
	// Mixed is the group's mixed instances policy, nil for none;
	// Interruptions are its Spot interruptions in progress
	// (spot.go).
	Mixed         *awsMixed         `json:"mixed,omitempty"`
	Interruptions []awsInterruption `json:"interruptions,omitempty"`
	// Suspended are the group's suspended processes
	// (processes.go); Refreshes its instance refreshes, newest
	// first (refresh.go).
	Suspended []awsSuspended `json:"suspended,omitempty"`
	Refreshes []awsRefresh   `json:"refreshes,omitempty"`
}

// AWSManagedGroup is an Auto Scaling group another face creates and keeps
// (EKS's node groups): it names no launch template (the core model its
// instances launch from is the caller's), checks EC2 health and has the
// default cooldown of 300 seconds. The AWS face describes it, its
// instances and its activities as its own groups', and keeps its desired
// capacity as its own groups': an instance terminated without a decrement
// (TerminateInstanceInAutoScalingGroup) or found unhealthy is replaced
// from the model the other face last wrote.
type AWSManagedGroup struct {
	Name, ARN   string
	CreatedTime time.Time
	// InstanceType and ImageID are what its instances launch as; Spot
	// buys them as Spot instances.
	InstanceType, ImageID string
	Spot                  bool
	// InstanceTags are the tags its instances launch with (as a launch
	// template's would be), before its propagated Tags.
	InstanceTags              []awsapi.Tag
	Tags                      []AWSGroupTag
	MinSize, MaxSize, Desired int32
	Subnets, Zones            []string
}

// Payload is what the AWS face keeps of the group in the core
// (core.GroupSpec.Payload).
func (m AWSManagedGroup) Payload() ([]byte, error) {
	return json.Marshal(awsGroupPayload{
		Name: m.Name, ARN: m.ARN, CreatedTime: m.CreatedTime, HealthCheckType: "EC2", DefaultCooldown: 300, Managed: true,
		InstanceType: m.InstanceType, ImageID: m.ImageID, Spot: m.Spot, TemplateTags: m.InstanceTags,
		MinSize: m.MinSize, MaxSize: m.MaxSize, Desired: m.Desired, Subnets: m.Subnets, Zones: m.Zones, Tags: m.Tags,
	})
}

// AWSGroupARN is the ARN of the Auto Scaling group name of account's
// region, id the UUID AWS gives it.
func AWSGroupARN(account, region, id, name string) string {
	return fmt.Sprintf("arn:aws:autoscaling:%s:%s:autoScalingGroup:%s:autoScalingGroupName/%s", region, account, id, name)
}

// AWSGroupDesired is the desired capacity of an Auto Scaling group of the
// AWS face; the core's capacity is lower while a quota holds launches
// back.
func AWSGroupDesired(g *core.Group) int32 { return readAWSPayload(g).Desired }

// instanceTags are the tags of instances the group launches: the
// template's instance tags, then the group's propagated tags.
func (p awsGroupPayload) instanceTags() []awsapi.Tag {
	out := slices.Clone(p.TemplateTags)
	for _, t := range p.Tags {
		if t.PropagateAtLaunch {
			out = slices.DeleteFunc(out, func(o awsapi.Tag) bool { return o.Key == t.Key })
			out = append(out, awsapi.Tag{Key: t.Key, Value: t.Value})
		}
	}
	return out
}

// awsInstancePayload is what the face keeps about an instance.
type awsInstancePayload struct {
	LaunchTemplate *awsapi.LaunchTemplateSpecification `json:"launchTemplate,omitempty"`
	InstanceType   string                              `json:"instanceType,omitempty"`
	ImageID        string                              `json:"imageId,omitempty"`
	KeyName        string                              `json:"keyName,omitempty"`
	SubnetID       string                              `json:"subnetId,omitempty"`
	VpcID          string                              `json:"vpcId,omitempty"`
	Spot           bool                                `json:"spot,omitempty"`
	Protected      bool                                `json:"protected,omitempty"`
	Tags           []awsapi.Tag                        `json:"tags,omitempty"`
	// Waits are the lifecycle actions the instance waits on; Proceeded is
	// set once its launch hooks let it go (hooks.go).
	Waits     []awsHookWait `json:"waits,omitempty"`
	Proceeded bool          `json:"proceeded,omitempty"`
	// Market is on-demand, spot or pending for an instance of a mixed
	// instances policy (spot.go), "" otherwise.
	Market string `json:"market,omitempty"`
	// Health is Unhealthy once SetInstanceHealth said so, RespectGrace
	// whether that waits for the grace period (health.go).
	Health       string `json:"health,omitempty"`
	RespectGrace bool   `json:"respectGrace,omitempty"`
}

func readAWSPayload(g *core.Group) awsGroupPayload {
	return core.DecodePayload[awsGroupPayload](g.Payload)
}

func readAWSInstance(in core.Instance) awsInstancePayload {
	return core.DecodePayload[awsInstancePayload](in.Payload)
}

func validationError(format string, args ...any) *awsError {
	return &awsError{status: http.StatusBadRequest, code: awsapi.CodeValidationError, message: fmt.Sprintf(format, args...)}
}

func asgNotFound(name string) *awsError {
	return validationError("AutoScalingGroup name not found - AutoScalingGroup '%s' not found", name)
}

// group reads an Auto Scaling group; a missing one is ValidationError.
func (h *awsHandler) group(req *awsRequest, name string) (*core.Group, awsGroupPayload, error) {
	g, err := h.scope(req).GetGroup(name)
	if err != nil {
		if core.CodeOf(err) == core.CodeNotFound {
			return nil, awsGroupPayload{}, asgNotFound(name)
		}
		return nil, awsGroupPayload{}, err
	}
	return g, readAWSPayload(g), nil
}

// onGroup serves an action on the Auto Scaling group the request names
// (AutoScalingGroupName), run with the group as read and its payload; a
// missing group is answered ValidationError.
func (h *awsHandler) onGroup(fn func(w http.ResponseWriter, req *awsRequest, g *core.Group, p awsGroupPayload)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		req := awsReq(r)
		g, p, err := h.group(req, req.form.Get("AutoScalingGroupName"))
		if err != nil {
			h.writeAWSError(w, req, err)
			return
		}
		fn(w, req, g, p)
	}
}

// parseGroupFields reads the request's group fields over p (an existing
// group's, or the zero value): only those present change.
func (h *awsHandler) parseGroupFields(req *awsRequest, p *awsGroupPayload, create bool) error {
	f := req.form
	lt := "LaunchTemplate."
	if !qHas(f, "LaunchTemplate") && qHas(f, "MixedInstancesPolicy.LaunchTemplate.LaunchTemplateSpecification") {
		lt = "MixedInstancesPolicy.LaunchTemplate.LaunchTemplateSpecification."
	}
	if qHas(f, strings.TrimSuffix(lt, ".")) {
		p.LaunchTemplate = awsapi.LaunchTemplateSpecification{
			LaunchTemplateID: f.Get(lt + "LaunchTemplateId"), LaunchTemplateName: f.Get(lt + "LaunchTemplateName"), Version: f.Get(lt + "Version"),
		}
		if (p.LaunchTemplate.LaunchTemplateID == "") == (p.LaunchTemplate.LaunchTemplateName == "") {
			return validationError("Valid requests must contain either launchTemplateId or launchTemplateName in LaunchTemplate.")
		}
	} else if create {
		return validationError("Valid requests must contain either LaunchTemplate, LaunchConfigurationName, InstanceId or MixedInstancesPolicy parameter.")
	}
	if err := parseMixed(req, p); err != nil {
		return err
	}
	for _, x := range []struct {
		key string
		dst *int32
	}{{"MinSize", &p.MinSize}, {"MaxSize", &p.MaxSize}, {"DesiredCapacity", &p.Desired}, {"HealthCheckGracePeriod", &p.HealthCheckGrace}, {"DefaultCooldown", &p.DefaultCooldown}} {
		v, ok := qInt(f, x.key)
		if !ok || v != nil && (*v < 0 || *v > 1<<30) {
			return validationError("Value '%s' at '%s' failed to satisfy constraint: Member must be a non-negative integer", f.Get(x.key), strings.ToLower(x.key[:1])+x.key[1:])
		}
		if v != nil {
			*x.dst = int32(*v)
		}
	}
	if create {
		for _, k := range []string{"MinSize", "MaxSize"} {
			if !qHas(f, k) {
				return validationError("1 validation error detected: Value null at '%s' failed to satisfy constraint: Member must not be null", strings.ToLower(k[:1])+k[1:])
			}
		}
		if !qHas(f, "DesiredCapacity") {
			p.Desired = p.MinSize
		}
	}
	if p.MinSize > p.MaxSize {
		return validationError("Max bound, %d, must be greater than or equal to min bound, %d", p.MaxSize, p.MinSize)
	}
	if !qHas(f, "DesiredCapacity") && !create {
		p.Desired = min(max(p.Desired, p.MinSize), p.MaxSize)
	}
	if p.Desired < p.MinSize || p.Desired > p.MaxSize {
		return validationError("Desired capacity:%d must be between the specified min size:%d and max size:%d", p.Desired, p.MinSize, p.MaxSize)
	}
	if qHas(f, "VPCZoneIdentifier") {
		p.Subnets, p.Zones = nil, nil
		for _, s := range strings.Split(f.Get("VPCZoneIdentifier"), ",") {
			s = strings.TrimSpace(s)
			if s == "" {
				continue
			}
			sn := findSubnet(req.account, req.region, s)
			if sn == nil {
				return validationError("The subnet ID '%s' does not exist", s)
			}
			p.Subnets = append(p.Subnets, s)
			if !slices.Contains(p.Zones, sn.zone) {
				p.Zones = append(p.Zones, sn.zone)
			}
		}
	}
	if azs := qList(f, "AvailabilityZones.member"); len(azs) > 0 && len(p.Subnets) == 0 {
		p.Zones = nil
		for _, z := range azs {
			if defaultSubnetIn(req.account, req.region, z) == nil {
				return validationError("The availability zone '%s' is not legitimate", z)
			}
			p.Zones = append(p.Zones, z)
		}
	}
	if len(p.Zones) == 0 {
		return validationError("At least one Availability Zone or VPC Subnet is required.")
	}
	if v := qBool(f, "CapacityRebalance"); v != nil {
		p.CapacityRebalance = *v
	}
	if v := qBool(f, "NewInstancesProtectedFromScaleIn"); v != nil {
		p.NewInstancesProtected = *v
	}
	if v, ok := qInt(f, "DefaultInstanceWarmup"); ok && v != nil {
		w := int32(*v)
		p.DefaultInstanceWarmup = &w
	}
	if v := f.Get("HealthCheckType"); v != "" {
		if v != "EC2" && v != "ELB" && v != "VPC_LATTICE" && v != "EBS" {
			return validationError("Health check type %s is not supported.", v)
		}
		p.HealthCheckType = v
	}
	if qHas(f, "TerminationPolicies.member") {
		p.TerminationPolicies = qList(f, "TerminationPolicies.member")
	}
	if create {
		for _, t := range parseASGTags(req) {
			p.Tags = setTag(p.Tags, t)
		}
	}
	return nil
}

func parseASGTags(req *awsRequest) []AWSGroupTag {
	var out []AWSGroupTag
	for _, n := range qIndices(req.form, "Tags.member") {
		k := "Tags.member." + strconv.Itoa(n) + "."
		prop := qBool(req.form, k+"PropagateAtLaunch")
		out = append(out, AWSGroupTag{Key: req.form.Get(k + "Key"), Value: req.form.Get(k + "Value"), PropagateAtLaunch: prop != nil && *prop})
	}
	return out
}

func setTag(tags []AWSGroupTag, t AWSGroupTag) []AWSGroupTag {
	tags = slices.DeleteFunc(tags, func(o AWSGroupTag) bool { return o.Key == t.Key })
	return append(tags, t)
}

// resolveTemplate fills p's launch from its launch template's version (ID,
// name and number in Resolved; AMI, instance type, tags) and returns the
// core model, model hash and user data; a template that cannot launch is
// ValidationError, as CreateAutoScalingGroup answers it.
func (h *awsHandler) resolveTemplate(req *awsRequest, p *awsGroupPayload) (core.Model, string, error) {
	spec := p.LaunchTemplate
	t := findTemplate(h.env.Cloud, AWSScope(req.account, req.region), spec.LaunchTemplateID, spec.LaunchTemplateName)
	const bad = "You must use a valid fully-formed launch template. "
	if t == nil {
		if spec.LaunchTemplateID != "" {
			return core.Model{}, "", validationError(bad+"The specified launch template, with template ID %s, does not exist.", spec.LaunchTemplateID)
		}
		return core.Model{}, "", validationError(bad+"The specified launch template, with template name %s, does not exist.", spec.LaunchTemplateName)
	}
	n := t.resolve(spec.Version)
	if n == 0 {
		return core.Model{}, "", validationError(bad+"The specified launch template, with template ID %s, does not have a version %s.", t.ID, spec.Version)
	}
	d := t.version(n).Data
	if d.ImageID == "" {
		return core.Model{}, "", validationError(bad + "The request must contain the parameter ImageId")
	}
	im := findImage(req.region, d.ImageID)
	if im == nil {
		return core.Model{}, "", validationError(bad+"The image id '[%s]' does not exist", d.ImageID)
	}
	typ := d.InstanceType
	if typ == "" {
		typ = "m1.small"
	}
	it, ok := awsInstanceTypes[typ]
	if !ok {
		return core.Model{}, "", validationError(bad+"The instance type '%s' is not supported (the simulated AWS offers %s).", typ, strings.Join(awsInstanceTypeNames(), ", "))
	}
	p.Resolved = &awsapi.LaunchTemplateSpecification{LaunchTemplateID: t.ID, LaunchTemplateName: t.Name, Version: strconv.FormatInt(n, 10)}
	p.LaunchTemplate.LaunchTemplateID, p.LaunchTemplate.LaunchTemplateName = t.ID, t.Name
	p.InstanceType, p.ImageID, p.KeyName = typ, d.ImageID, d.KeyName
	p.Spot = d.InstanceMarketOptions != nil && d.InstanceMarketOptions.MarketType == "spot"
	p.TemplateTags = nil
	for _, ts := range d.TagSpecifications {
		if ts.ResourceType == "instance" {
			p.TemplateTags = append(p.TemplateTags, ts.Tags...)
		}
	}
	var userData []byte
	if d.UserData != "" {
		userData, _ = base64.StdEncoding.DecodeString(d.UserData)
	}
	tags := map[string]string{}
	for _, tg := range p.instanceTags() {
		tags[tg.Key] = tg.Value
	}
	m := core.Model{
		InstanceType: typ, Image: d.ImageID, Zones: slices.Clone(p.Zones), CustomData: userData, Tags: tags,
		Extra: map[string]string{core.ExtraCPU: strconv.Itoa(it.vcpus), core.ExtraMemory: strconv.Itoa(it.memoryMi) + "Mi"},
	}
	if v := kubernetesVersionOf(p.instanceTags(), im); v != "" {
		m.Extra[core.ExtraVersion] = v
	}
	hash := tags[AWSTagModelHash]
	if hash == "" {
		hash = t.ID + ":" + strconv.FormatInt(n, 10)
	}
	return m, hash, nil
}

func awsInstanceTypeNames() []string {
	var out []string
	for k := range awsInstanceTypes {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// vcpuFit returns how many instances of p's type the group may have under
// the face's vCPU quota, counting the other groups' On-Demand standard
// instances in the scope; -1 when unlimited.
func (h *awsHandler) vcpuFit(req *awsRequest, name string, p *awsGroupPayload) int {
	return h.face.vcpuFit(h.scope(req), name, p)
}

func (f *AWSFace) vcpuFit(sc core.Scope, name string, p *awsGroupPayload) int {
	if p.Mixed != nil {
		return f.mixedVCPUFit(sc, name, p)
	}
	it := awsInstanceTypes[p.InstanceType]
	if f.VCPUQuota <= 0 || p.Spot || !it.standard || it.vcpus == 0 {
		return -1
	}
	return max(0, (f.VCPUQuota-usedVCPUs(sc, name, false))/it.vcpus)
}

// VCPUFit returns how many instances of instanceType (Spot ones, or
// On-Demand) the Auto Scaling group named group of account's region may
// have under the face's vCPU quota (VCPUQuota), counting the On-Demand
// standard instances of the region's other groups; -1 when unlimited. A
// face that launches into the AWS face's groups (EKS) holds its launches
// back by it, as the face's own groups do.
func (f *AWSFace) VCPUFit(c *core.Cloud, account, region, group, instanceType string, spot bool) int {
	return f.vcpuFit(c.Scope(AWSFaceName, AWSScope(account, region)), group, &awsGroupPayload{InstanceType: instanceType, Spot: spot})
}

// VCPULaunchFailure is the message of a launch the vCPU quota refuses, as
// the failed scaling activity records it.
func (f *AWSFace) VCPULaunchFailure() string {
	return vcpuLimitMessage(f.VCPUQuota) + " Launching EC2 instance failed."
}

// usedVCPUs counts the vCPUs of the On-Demand standard instances of sc's
// groups but except; an instance whose market a mixed instances policy has
// yet to assign counts unless skipPending.
func usedVCPUs(sc core.Scope, except string, skipPending bool) int {
	used := 0
	for _, n := range sc.ListGroups() {
		if n == except {
			continue
		}
		g, err := sc.GetGroup(n)
		if err != nil {
			continue
		}
		for _, in := range g.Instances {
			ip := readAWSInstance(in)
			if t := awsInstanceTypes[ip.InstanceType]; in.State != core.StateDeleting && !ip.Spot && !(skipPending && ip.Market == awsMarketPending) && t.standard {
				used += t.vcpus
			}
		}
	}
	return used
}

func vcpuLimitMessage(limit int) string {
	return fmt.Sprintf("You have requested more vCPU capacity than your current vCPU limit of %d allows for the instance bucket that the specified instance type belongs to. Please visit http://aws.amazon.com/contact-us/ec2-request to request an adjustment to this limit.", limit)
}

// apply writes the group p to the core: the model of its launch template
// version, and a capacity of Desired, held back by the vCPU quota. Scale-in
// victims are the face's: never instances protected from scale in; failed
// ones first, then from the zone with the most, those of another launch
// template version first, newest first. It records the scaling
// activities.
func (h *awsHandler) apply(req *awsRequest, name string, p *awsGroupPayload, existing *core.Group, cause string) (*core.Group, error) {
	sc := h.scope(req)
	model, hash, err := h.launchModel(req, name, p, existing)
	if err != nil {
		return nil, err
	}
	// Capacity rebalance replacements are above the desired capacity.
	// So are an instance refresh's launched ahead of its terminations.
	target := int(p.Desired) + rebalanceExtra(existing, p) + p.refreshSurge()
	short := false
	if fit := h.vcpuFit(req, name, p); fit >= 0 && fit < target {
		target, short = fit, true
	}
	// Suspended Launch or Terminate processes hold the capacity.
	target = p.clampProcesses(existing, target)
	var victims []string
	if existing != nil {
		victims = awsVictims(existing, p, target)
		if len(victims) > 0 {
			if existing, err = h.terminateInstances(req, existing, victims); err != nil {
				return nil, err
			}
		}
		// Protected instances the group could not remove stay.
		target = max(target, awsLive(existing))
	}
	// The core still counts instances in Terminating:Wait.
	coreCapacity := target
	if existing != nil {
		coreCapacity += awsTerminateWaitingCount(existing)
	}
	payload, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	before := map[string]bool{}
	if existing != nil {
		for _, in := range existing.Instances {
			before[in.ID] = true
		}
	}
	g, err := sc.ApplyGroup(name, core.GroupSpec{Capacity: int32(coreCapacity), ModelHash: hash, Model: model, Payload: payload})
	if err != nil {
		return nil, err
	}
	g = h.assignMarkets(req, name, p, g, nil)
	now := h.env.Cloud.Clock().Now().UTC()
	var acts []awsActivity
	prev := len(before) - len(victims)
	for _, in := range g.Instances {
		if !before[in.ID] {
			acts = append(acts, awsActivity{Kind: "launch", InstanceID: in.ID, Start: now, Cause: fmt.Sprintf(
				"At %s %s, increasing the capacity from %d to %d.", AWSTime(now), cause, prev, target)})
		}
	}
	for _, id := range victims {
		acts = append(acts, awsActivity{Kind: "terminate", InstanceID: id, Start: now, Cause: fmt.Sprintf(
			"At %s %s, shrinking the capacity from %d to %d.", AWSTime(now), cause, len(before), target)})
	}
	if short {
		acts = append(acts, awsActivity{Kind: "failed", Start: now, Message: h.face.VCPULaunchFailure(),
			Cause: fmt.Sprintf("At %s %s, increasing the capacity from %d to %d.", AWSTime(now), cause, target, p.Desired)})
	}
	h.recordActivities(req, name, acts, existing == nil)
	return g, nil
}

// launchModel is the core model (and its hash) the group launches from:
// its launch template's, or, for a group another face writes
// (awsGroupPayload.Managed), the model that face last wrote.
func (h *awsHandler) launchModel(req *awsRequest, name string, p *awsGroupPayload, existing *core.Group) (core.Model, string, error) {
	if !p.Managed {
		return h.resolveTemplate(req, p)
	}
	if existing == nil {
		return core.Model{}, "", asgNotFound(name)
	}
	m := existing.Model
	cd, err := h.scope(req).CustomData(name)
	if err != nil {
		return core.Model{}, "", err
	}
	m.CustomData = cd
	return m, existing.ModelHash, nil
}

// awsLive counts a group's instances that are not terminating (nor
// waiting on a terminate hook).
func awsLive(g *core.Group) int {
	n := 0
	for _, in := range g.Instances {
		if !awsLeaving(in) {
			n++
		}
	}
	return n
}

// awsVictims picks the instances to terminate to bring g down to target,
// by the cloud's scale-in policy (core.PickScaleIn): never instances
// protected from scale in (they count in their zone); an instance of
// another launch template version than the group's is stale.
func awsVictims(g *core.Group, p *awsGroupPayload, target int) []string {
	var cands []core.Instance
	perZone := map[string]int{}
	for _, in := range g.Instances {
		if awsLeaving(in) {
			continue
		}
		perZone[in.Zone]++
		if !readAWSInstance(in).Protected {
			cands = append(cands, in)
		}
	}
	var out []string
	for _, in := range core.PickScaleIn(cands, awsLive(g)-target, perZone, func(in core.Instance) core.ScaleInKey {
		lt := readAWSInstance(in).LaunchTemplate
		current := p.Resolved != nil && lt != nil && *lt == *p.Resolved
		return core.ScaleInKey{Zone: in.Zone, Failed: in.State == core.StateFailed, Stale: !current, CreatedAt: in.CreatedAt}
	}) {
		out = append(out, in.ID)
	}
	return out
}

// converge launches what the vCPU quota held back once it allows, as the
// group's retries do.
func (h *awsHandler) converge(req *awsRequest, g *core.Group) *core.Group {
	g = h.expireHooks(req, g)
	g = h.progressSpot(req, g)
	g = h.replaceUnhealthy(req, g)
	g = h.progressRefresh(req, g)
	p := readAWSPayload(g)
	if g.Operation != nil && g.Operation.Type == core.OperationDelete || int(p.Desired) <= awsLive(g) || p.suspended(awsapi.ProcessLaunch) {
		return g
	}
	fit := h.vcpuFit(req, g.Name, &p)
	want := int(p.Desired)
	if fit >= 0 {
		want = min(want, fit)
	}
	if want <= int(g.Capacity)-awsTerminateWaitingCount(g) {
		return g
	}
	if ng, err := h.apply(req, g.Name, &p, g, "an instance was started in response to a difference between desired and actual capacity"); err == nil {
		return ng
	}
	return g
}

// createASG serves CreateAutoScalingGroup.
func (h *awsHandler) createASG(w http.ResponseWriter, r *http.Request) {
	req := awsReq(r)
	name := req.form.Get("AutoScalingGroupName")
	if name == "" || len(name) > 255 {
		h.writeError(w, req, http.StatusBadRequest, awsapi.CodeValidationError, "1 validation error detected: Value at 'autoScalingGroupName' failed to satisfy constraint: Member must have length between 1 and 255")
		return
	}
	if _, err := h.scope(req).GetGroup(name); err == nil {
		h.writeError(w, req, http.StatusBadRequest, awsapi.CodeAlreadyExists, fmt.Sprintf("AutoScalingGroup by this name already exists - A group with the name %s already exists", name))
		return
	}
	now := h.env.Cloud.Clock().Now().UTC()
	p := awsGroupPayload{Name: name, CreatedTime: now, HealthCheckType: "EC2", DefaultCooldown: 300,
		ARN: AWSGroupARN(req.account, req.region, core.UUIDFrom([]byte(AWSHex(32, "asg", req.account, req.region, name, now.String()))[:16]), name)}
	if err := h.parseGroupFields(req, &p, true); err != nil {
		h.writeAWSError(w, req, err)
		return
	}
	hooks, err := parseHookSpecs(req)
	if err != nil {
		h.writeAWSError(w, req, err)
		return
	}
	p.Hooks = hooks
	_, err = h.apply(req, name, &p, nil, "a user request created an AutoScalingGroup")
	h.reply(w, req, nil, err)
}

// updateASG serves UpdateAutoScalingGroup: the fields sent change; a new
// launch template version applies to instances launched from now on.
func (h *awsHandler) updateASG(w http.ResponseWriter, r *http.Request) {
	req := awsReq(r)
	name := req.form.Get("AutoScalingGroupName")
	g, p, err := h.group(req, name)
	if err == nil && g.Operation != nil && g.Operation.Type == core.OperationDelete {
		err = errBeingDeleted(name)
	}
	if err == nil {
		err = h.parseGroupFields(req, &p, false)
	}
	if err == nil {
		_, err = h.apply(req, name, &p, g, "a user request update of AutoScalingGroup constraints")
	}
	h.reply(w, req, nil, err)
}

// setDesiredCapacity serves SetDesiredCapacity.
func (h *awsHandler) setDesiredCapacity(w http.ResponseWriter, req *awsRequest, g *core.Group, p awsGroupPayload) {
	name := g.Name
	var err error
	d, ok := qInt(req.form, "DesiredCapacity")
	switch {
	case !ok || d == nil:
		err = validationError("1 validation error detected: Value null at 'desiredCapacity' failed to satisfy constraint: Member must not be null")
	case *d > int64(p.MaxSize):
		err = validationError("New SetDesiredCapacity value %d is above max value %d for the AutoScalingGroup.", *d, p.MaxSize)
	case *d < int64(p.MinSize):
		err = validationError("New SetDesiredCapacity value %d is below min value %d for the AutoScalingGroup.", *d, p.MinSize)
	case g.Operation != nil && g.Operation.Type == core.OperationDelete:
		err = errBeingDeleted(name)
	}
	if err == nil {
		p.Desired = int32(*d)
		_, err = h.apply(req, name, &p, g, "a user request explicitly set group desired capacity")
	}
	h.reply(w, req, nil, err)
}

// deleteASG serves DeleteAutoScalingGroup: without ForceDelete a group with
// instances is refused (ResourceInUse; ScalingActivityInProgress while its
// instances terminate); with it the instances terminate and the group is
// "Delete in progress" until they are gone.
func (h *awsHandler) deleteASG(w http.ResponseWriter, req *awsRequest, g *core.Group, _ awsGroupPayload) {
	name := g.Name
	force := qBool(req.form, "ForceDelete")
	if (force == nil || !*force) && (g.Operation == nil || g.Operation.Type != core.OperationDelete) {
		switch {
		case awsLive(g) > 0:
			h.writeError(w, req, http.StatusBadRequest, awsapi.CodeResourceInUse, "You cannot delete an AutoScalingGroup while there are instances or pending Spot instance request(s) still in the group.")
			return
		case len(g.Instances) > 0:
			h.writeError(w, req, http.StatusBadRequest, awsapi.CodeScalingActivityInProg, "You cannot delete an AutoScalingGroup while there are scaling activities in progress.")
			return
		}
	}
	var acts []awsActivity
	now := h.env.Cloud.Clock().Now().UTC()
	for _, in := range g.Instances {
		if in.State != core.StateDeleting {
			acts = append(acts, awsActivity{Kind: "terminate", InstanceID: in.ID, Start: now,
				Cause: fmt.Sprintf("At %s a user request delete of AutoScalingGroup %s, shrinking the capacity to 0.", AWSTime(now), name)})
		}
	}
	if _, err := h.scope(req).DeleteGroup(name); err != nil {
		h.writeAWSError(w, req, err)
		return
	}
	h.recordActivities(req, name, acts, false)
	h.writeResult(w, req, nil)
}

// terminateInstance serves TerminateInstanceInAutoScalingGroup.
func (h *awsHandler) terminateInstance(w http.ResponseWriter, r *http.Request) {
	req := awsReq(r)
	id := req.form.Get("InstanceId")
	dec := qBool(req.form, "ShouldDecrementDesiredCapacity")
	if dec == nil {
		h.writeError(w, req, http.StatusBadRequest, awsapi.CodeValidationError, "1 validation error detected: Value null at 'shouldDecrementDesiredCapacity' failed to satisfy constraint: Member must not be null")
		return
	}
	sc := h.scope(req)
	g, in := h.instanceGroup(req, id)
	if g == nil {
		h.writeError(w, req, http.StatusBadRequest, awsapi.CodeValidationError, "Instance Id not found - No managed instance found for instance ID: "+id)
		return
	}
	p := readAWSPayload(g)
	now := h.env.Cloud.Clock().Now().UTC()
	act := awsActivity{ID: NewRequestID(), Kind: "terminate", InstanceID: id, Start: now}
	if !awsLeaving(*in) {
		if *dec && p.Desired <= p.MinSize {
			h.writeError(w, req, http.StatusBadRequest, awsapi.CodeValidationError, fmt.Sprintf(
				"Currently, desiredSize equals minSize (%d). Terminating instance without replacement will violate group's min size constraint. Either set shouldDecrementDesiredCapacity flag to false or lower group's min size.", p.MinSize))
			return
		}
		live := awsLive(g)
		if _, err := h.terminateInstances(req, g, []string{id}); err != nil {
			h.writeAWSError(w, req, err)
			return
		}
		if *dec {
			p.Desired--
			act.Cause = fmt.Sprintf("At %s instance %s was taken out of service in response to a user request, shrinking the capacity from %d to %d.", AWSTime(now), id, live, live-1)
			if _, err := sc.UpdateGroupPayload(g.Name, core.ReplacePayload(p)); err != nil {
				h.writeAWSError(w, req, err)
				return
			}
		} else {
			act.Cause = fmt.Sprintf("At %s instance %s was taken out of service in response to a user request.", AWSTime(now), id)
			ng, _, err := h.group(req, g.Name)
			if err == nil {
				_, err = h.apply(req, g.Name, &p, ng, "an instance was started in response to a difference between desired and actual capacity")
			}
			if err != nil {
				h.writeAWSError(w, req, err)
				return
			}
		}
		h.recordActivities(req, g.Name, []awsActivity{act}, false)
	}
	out := act.wire(g.Name, p.ARN, awsapi.Activity{})
	out.StatusCode, out.Progress = "InProgress", 0
	h.writeResult(w, req, awsapi.ActivityResult{Activity: out})
}

// createOrUpdateTags serves CreateOrUpdateTags; propagated tags apply to
// instances launched from now on.
func (h *awsHandler) createOrUpdateTags(w http.ResponseWriter, r *http.Request) {
	h.changeTags(w, r, false)
}

// deleteTags serves DeleteTags.
func (h *awsHandler) deleteTags(w http.ResponseWriter, r *http.Request) { h.changeTags(w, r, true) }

func (h *awsHandler) changeTags(w http.ResponseWriter, r *http.Request, del bool) {
	req := awsReq(r)
	byGroup := map[string][]AWSGroupTag{}
	var order []string
	for _, n := range qIndices(req.form, "Tags.member") {
		k := "Tags.member." + strconv.Itoa(n) + "."
		if rt := req.form.Get(k + "ResourceType"); rt != "" && rt != "auto-scaling-group" {
			h.writeError(w, req, http.StatusBadRequest, awsapi.CodeValidationError, "Invalid resource type: "+rt)
			return
		}
		prop := qBool(req.form, k+"PropagateAtLaunch")
		id := req.form.Get(k + "ResourceId")
		if _, ok := byGroup[id]; !ok {
			order = append(order, id)
		}
		byGroup[id] = append(byGroup[id], AWSGroupTag{Key: req.form.Get(k + "Key"), Value: req.form.Get(k + "Value"), PropagateAtLaunch: prop != nil && *prop})
	}
	for _, name := range order {
		g, p, err := h.group(req, name)
		if err == nil {
			for _, t := range byGroup[name] {
				if del {
					p.Tags = slices.DeleteFunc(p.Tags, func(o AWSGroupTag) bool { return o.Key == t.Key })
				} else {
					p.Tags = setTag(p.Tags, t)
				}
			}
			// The model's tags change for new instances; no scaling.
			p.Desired = max(p.Desired, 0)
			_, err = h.applyModelOnly(req, g, &p)
		}
		if err != nil {
			h.writeAWSError(w, req, err)
			return
		}
	}
	h.writeResult(w, req, nil)
}

// applyModelOnly rewrites a group's model and payload at its current core
// capacity.
func (h *awsHandler) applyModelOnly(req *awsRequest, g *core.Group, p *awsGroupPayload) (*core.Group, error) {
	model, hash, err := h.resolveTemplate(req, p)
	if err != nil {
		// The launch template cannot launch any more: keep the model.
		return h.scope(req).UpdateGroupPayload(g.Name, core.ReplacePayload(p))
	}
	b, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	return h.scope(req).ApplyGroup(g.Name, core.GroupSpec{Capacity: g.Capacity, ModelHash: hash, Model: model, Payload: b})
}

// refreshTemplateGroups re-resolves the groups of the request's scope that
// launch template id at $Latest or $Default: new instances launch from the
// version those name now.
func (h *awsHandler) refreshTemplateGroups(req *awsRequest, id string) {
	sc := h.scope(req)
	for _, n := range sc.ListGroups() {
		g, err := sc.GetGroup(n)
		if err != nil || g.Operation != nil && g.Operation.Type == core.OperationDelete {
			continue
		}
		p := readAWSPayload(g)
		if p.LaunchTemplate.LaunchTemplateID != id || p.LaunchTemplate.Version != "$Latest" && p.LaunchTemplate.Version != "$Default" && p.LaunchTemplate.Version != "" {
			continue
		}
		old := p.Resolved
		if _, err := h.applyModelOnly(req, g, &p); err == nil && old != nil && p.Resolved != nil && *old != *p.Resolved {
			h.env.Log.V(1).Info("Auto Scaling group takes up a new launch template version", "group", n, "version", p.Resolved.Version)
		}
	}
}

// describeASGs serves DescribeAutoScalingGroups: by AutoScalingGroupNames
// and the filters tag:<key>, tag-key and tag-value, sorted by name, paged
// (MaxRecords default 50, at most 100).
func (h *awsHandler) describeASGs(w http.ResponseWriter, r *http.Request) {
	req := awsReq(r)
	limit, ok := h.asgMaxRecords(w, req, 50)
	if !ok {
		return
	}
	off, ok := h.asgPageOffset(w, req, req.action)
	if !ok {
		return
	}
	names := qList(req.form, "AutoScalingGroupNames.member")
	filters := awsFilters{}
	for _, n := range qIndices(req.form, "Filters.member") {
		k := "Filters.member." + strconv.Itoa(n)
		filters[req.form.Get(k+".Name")] = qList(req.form, k+".Values.member")
	}
	sc := h.scope(req)
	all := sc.ListGroups()
	if len(names) > 0 {
		all = slices.DeleteFunc(all, func(n string) bool { return !slices.Contains(names, n) })
	}
	var match []*core.Group
	for _, n := range all {
		g, err := sc.GetGroup(n)
		if err != nil {
			continue
		}
		p := readAWSPayload(g)
		var tags []awsapi.Tag
		for _, t := range p.Tags {
			tags = append(tags, awsapi.Tag{Key: t.Key, Value: t.Value})
		}
		var values []string
		for _, t := range tags {
			values = append(values, t.Value)
		}
		if filters.matchTags(tags) && filters.match("tag-value", values...) {
			match = append(match, g)
		}
	}
	page, next := pageOf(match, off, limit, req.action)
	out := awsapi.DescribeAutoScalingGroupsResult{AutoScalingGroups: []awsapi.AutoScalingGroup{}, NextToken: next}
	for _, g := range page {
		out.AutoScalingGroups = append(out.AutoScalingGroups, h.wireGroup(h.converge(req, g)))
	}
	h.writeResult(w, req, out)
}

// awsLifecycle is an instance's Auto Scaling lifecycle state (its health
// is awsGroupPayload.awsHealth).
func awsLifecycle(s core.InstanceState) string {
	switch s {
	case core.StateCreating, core.StateBooting:
		return "Pending"
	case core.StateRunning, core.StateFailed:
		return "InService"
	}
	return "Terminating"
}

func (h *awsHandler) wireGroup(g *core.Group) awsapi.AutoScalingGroup {
	p := readAWSPayload(g)
	out := awsapi.AutoScalingGroup{
		AutoScalingGroupName: p.Name, AutoScalingGroupARN: p.ARN, MinSize: p.MinSize, MaxSize: p.MaxSize, DesiredCapacity: p.Desired,
		DefaultCooldown: p.DefaultCooldown, AvailabilityZones: p.Zones, HealthCheckType: p.HealthCheckType, HealthCheckGracePeriod: p.HealthCheckGrace,
		CreatedTime: AWSTime(p.CreatedTime), VPCZoneIdentifier: strings.Join(p.Subnets, ","), NewInstancesProtectedFromScaleIn: p.NewInstancesProtected,
		CapacityRebalance: p.CapacityRebalance, DefaultInstanceWarmup: p.DefaultInstanceWarmup, TerminationPolicies: p.TerminationPolicies,
		ServiceLinkedRoleARN: "arn:aws:iam::" + strings.SplitN(g.Scope, "/", 2)[0] + ":role/aws-service-role/autoscaling.amazonaws.com/AWSServiceRoleForAutoScaling",
		Instances:            []awsapi.Instance{},
	}
	if len(out.TerminationPolicies) == 0 {
		out.TerminationPolicies = []string{"Default"}
	}
	lt := p.LaunchTemplate
	if lt.Version == "" {
		lt.Version = "$Default"
	}
	out.LaunchTemplate = &lt
	wireMixed(&out, p)
	out.SuspendedProcesses = wireSuspended(p)
	if g.Operation != nil && g.Operation.Type == core.OperationDelete {
		out.Status = "Delete in progress"
	}
	for _, t := range p.Tags {
		out.Tags = append(out.Tags, awsapi.TagDescription{ResourceID: p.Name, ResourceType: "auto-scaling-group", Key: t.Key, Value: t.Value, PropagateAtLaunch: t.PropagateAtLaunch})
	}
	now := h.env.Cloud.Clock().Now()
	for _, in := range g.Instances {
		ip := readAWSInstance(in)
		state := awsInstanceLifecycle(in)
		health := p.awsHealth(in, now)
		out.Instances = append(out.Instances, awsapi.Instance{
			InstanceID: in.ID, InstanceType: ip.InstanceType, AvailabilityZone: in.Zone, LifecycleState: state, HealthStatus: health,
			LaunchTemplate: ip.LaunchTemplate, ProtectedFromScaleIn: ip.Protected, ImageID: ip.ImageID,
		})
	}
	return out
}

// awsActivity is a scaling activity as the face keeps it; its status is
// computed from its instance's state when described.
type awsActivity struct {
	ID         string    `json:"id"`
	Kind       string    `json:"kind"` // launch, terminate, failed
	InstanceID string    `json:"instanceId,omitempty"`
	Start      time.Time `json:"start"`
	Cause      string    `json:"cause"`
	Message    string    `json:"message,omitempty"`
}

// wire is the activity with its status: launches are InProgress while
// their instance is pending, Failed when it failed to boot; terminations
// InProgress while it terminates.
func (a awsActivity) wire(group, arn string, _ awsapi.Activity) awsapi.Activity {
	out := awsapi.Activity{ActivityID: a.ID, AutoScalingGroupName: group, AutoScalingGroupARN: arn, Cause: a.Cause,
		StartTime: AWSTime(a.Start), StatusCode: "Successful", Progress: 100, Details: "{}"}
	switch a.Kind {
	case "launch":
		out.Description = "Launching a new EC2 instance: " + a.InstanceID
	case "terminate":
		out.Description = "Terminating EC2 instance: " + a.InstanceID
	default:
		out.Description = "Launching a new EC2 instance.  Status Reason: " + a.Message
		out.StatusCode, out.StatusMessage, out.EndTime = "Failed", a.Message, AWSTime(a.Start)
	}
	return out
}

// recordActivities records a group's scaling activities, newest first (a
// failure repeating the latest one's message is not recorded; reset
// forgets the older ones, as for a new group of the name).
func (h *awsHandler) recordActivities(req *awsRequest, name string, acts []awsActivity, reset bool) {
	recordActivities(h.env.Cloud, AWSScope(req.account, req.region), name, acts, reset)
}

// AWSRecordFailedActivity records a failed scaling activity of the Auto
// Scaling group named group of account's region, begun at start, as
// DescribeScalingActivities shows it: what a face that launches into the
// AWS face's groups (EKS) records when something holds its launches back.
// A repeat of the latest failure's message is not recorded.
func AWSRecordFailedActivity(c *core.Cloud, account, region, group string, start time.Time, cause, message string) {
	recordActivities(c, AWSScope(account, region), group, []awsActivity{{Kind: "failed", Start: start, Cause: cause, Message: message}}, false)
}

func recordActivities(c *core.Cloud, scope, name string, acts []awsActivity, reset bool) {
	if len(acts) == 0 && !reset {
		return
	}
	_, _ = core.UpdateFaceRecordAs(c, AWSFaceName, activitiesKey(scope, name), func(list *[]awsActivity) error {
		if reset {
			*list = nil
		}
		for _, a := range acts {
			if a.ID == "" {
				a.ID = NewRequestID()
			}
			if a.Kind == "failed" && len(*list) > 0 && (*list)[0].Kind == "failed" && (*list)[0].Message == a.Message {
				continue
			}
			*list = append([]awsActivity{a}, *list...)
		}
		if len(*list) > awsMaxActivities {
			*list = (*list)[:awsMaxActivities]
		}
		return nil
	})
}

// describeScalingActivities serves DescribeScalingActivities of a group,
// newest first, paged (MaxRecords default 100).
func (h *awsHandler) describeScalingActivities(w http.ResponseWriter, req *awsRequest, g *core.Group, p awsGroupPayload) {
	name := g.Name
	g = h.converge(req, g)
	states := map[string]core.InstanceState{}
	for _, in := range g.Instances {
		states[in.ID] = in.State
	}
	list := core.FaceRecordAs[[]awsActivity](h.env.Cloud, AWSFaceName, activitiesKey(AWSScope(req.account, req.region), name))
	limit := 100
	if v, ok := qInt(req.form, "MaxRecords"); ok && v != nil && *v > 0 && *v <= 100 {
		limit = int(*v)
	}
	off, ok := h.asgPageOffset(w, req, req.action)
	if !ok {
		return
	}
	page, next := pageOf(list, off, limit, req.action)
	out := awsapi.DescribeScalingActivitiesResult{Activities: []awsapi.Activity{}, NextToken: next}
	for _, a := range page {
		wa := a.wire(p.Name, p.ARN, awsapi.Activity{})
		if st, ok := states[a.InstanceID]; ok {
			switch {
			case a.Kind == "launch" && (st == core.StateCreating || st == core.StateBooting):
				wa.StatusCode, wa.Progress = "InProgress", 30
			case a.Kind == "launch" && st == core.StateFailed:
				wa.StatusCode, wa.StatusMessage = "Failed", "Instance failed to boot (simulated)."
			case a.Kind == "terminate" && st == core.StateDeleting:
				wa.StatusCode, wa.Progress = "InProgress", 50
			}
		}
		out.Activities = append(out.Activities, wa)
	}
	h.writeResult(w, req, out)
}

// reply writes err in the request's service's error shape, or else the
// action's result (nil: the action's empty result).
func (h *awsHandler) reply(w http.ResponseWriter, req *awsRequest, result any, err error) {
	if err != nil {
		h.writeAWSError(w, req, err)
		return
	}
	h.writeResult(w, req, result)
}

// errBeingDeleted refuses a change to the group name while it is deleted.
func errBeingDeleted(name string) error {
	return &awsError{status: http.StatusBadRequest, code: awsapi.CodeScalingActivityInProg, message: fmt.Sprintf("The Auto Scaling group %s is being deleted.", name)}
}
