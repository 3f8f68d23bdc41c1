package aws

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/template"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	asgtypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/mpool-dev/mpool/internal/provider/kit"
	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// Tags mpool keeps on an Auto Scaling Group for itself (not propagated to
// instances): see "Carrying the model hash" in the package doc.
const (
	// TagModelHash is the model hash of the ASG's current model
	// (scalegroup.GroupSpec.ModelHash).
	TagModelHash = "mpool.dev/model-hash"
	// TagModelSinceVersion is the first launch-template version of that
	// model: instances launched from it or a later version run the model.
	TagModelSinceVersion = "mpool.dev/model-since-version"
	// TagUserData is "<version>:<hash>": the launch-template version the
	// ASG uses and a hash of its user data (never the data itself).
	TagUserData = "mpool.dev/user-data"
	// TagKubernetesVersion is an instance tag of each launch-template
	// version: the Kubernetes version of its model (scalegroup.Model.Version),
	// when set. Instances also carry TagModelHash, their model's hash.
	TagKubernetesVersion = "mpool.dev/kubernetes-version"
)

// staleHashPrefix + a launch-template version is the ModelHash of an
// instance launched from a version older than the current model's.
const staleHashPrefix = "lt-version-"

// asgDeleteInProgress is the Status of an ASG being deleted.
const asgDeleteInProgress = "Delete in progress"

// desired is what Apply makes of a GroupSpec.
type desired struct {
	template LaunchTemplate
	settings GroupSettings
	userData string // hash of the custom data
}

// desiredOf reads the provider's parts of a spec's model.
func desiredOf(spec scalegroup.GroupSpec) (desired, error) {
	var d desired
	var err error
	if d.template, _, err = kit.ModelPart[LaunchTemplate](spec.Model.Provider, "the model's provider part"); err != nil {
		return d, err
	}
	var set bool
	if d.settings, set, err = kit.ModelPart[GroupSettings](spec.Model.InPlace, "the model's in-place settings"); err != nil {
		return d, err
	}
	if !set {
		d.settings = GroupSettings{MinSize: 0, MaxSize: spec.Capacity}
	}
	if spec.Model.InstanceType == "" {
		return d, scalegroup.NewInvalid("the model has no instance type")
	}
	if d.template.AMI.ID == "" && d.template.AMI.Format == "" {
		return d, scalegroup.NewInvalid("the model names no AMI: set spec.awsLaunchTemplate.ami.id, or the MachinePool's version to look one up by")
	}
	if len(d.settings.SubnetIDs) == 0 && len(spec.Model.Zones) == 0 {
		return d, scalegroup.NewInvalid("the model names neither subnets nor availability zones")
	}
	if spec.Capacity < 0 {
		return d, scalegroup.NewInvalid(fmt.Sprintf("capacity %d is negative", spec.Capacity))
	}
	d.userData = userDataHash(spec.Model.CustomData)
	return d, nil
}

// userDataHash identifies custom data without revealing it.
func userDataHash(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:8])
}

// versionInfo is what a launch-template version's description says about
// it: the model hash, the model's first version (0 for the version itself)
// and the hash of its user data.
type versionInfo struct {
	model    string
	since    int64
	userData string
}

// String is the version description.
func (v versionInfo) String() string {
	s := "mpool model=" + v.model
	if v.since > 0 {
		s += " since=" + strconv.FormatInt(v.since, 10)
	}
	return s + " user-data=" + v.userData
}

// parseVersionInfo reads a version description; fields it lacks are empty.
func parseVersionInfo(desc string) versionInfo {
	var v versionInfo
	rest, ok := strings.CutPrefix(desc, "mpool ")
	if !ok {
		return v
	}
	for _, f := range strings.Fields(rest) {
		k, val, _ := strings.Cut(f, "=")
		switch k {
		case "model":
			v.model = val
		case "since":
			v.since, _ = strconv.ParseInt(val, 10, 64)
		case "user-data":
			v.userData = val
		}
	}
	return v
}

// templateVersion is one launch-template version.
type templateVersion struct {
	id      string
	version int64
	info    versionInfo
}

// ref is the version in the engine's terms.
func (v templateVersion) ref() *scalegroup.TemplateRef {
	return &scalegroup.TemplateRef{ID: v.id, Version: strconv.FormatInt(v.version, 10)}
}

// observed is what the ASG says about its model.
type observed struct {
	// version is the ASG's template and version, its info from the
	// ASG's tags (the user data's hash "" when unknown).
	version templateVersion
}

// observedState reads the ASG's launch template and mpool's tags.
func observedState(asg *asgtypes.AutoScalingGroup) (observed, error) {
	lt := groupTemplate(asg)
	if lt == nil || aws.ToString(lt.LaunchTemplateId) == "" {
		return observed{}, scalegroup.NewInvalid(fmt.Sprintf("auto scaling group %s has no launch template (a launch configuration or a mixed instances policy): mpool does not manage it; delete it or rename the pool",
			aws.ToString(asg.AutoScalingGroupName)))
	}
	var o observed
	o.version.id = aws.ToString(lt.LaunchTemplateId)
	o.version.version, _ = strconv.ParseInt(aws.ToString(lt.Version), 10, 64)
	o.version.info.model = tagValue(asg, TagModelHash)
	o.version.info.since, _ = strconv.ParseInt(tagValue(asg, TagModelSinceVersion), 10, 64)
	if v, h, ok := strings.Cut(tagValue(asg, TagUserData), ":"); ok {
		// The hash is of the ASG's version only if the tag says so: tags
		// are written before the ASG is updated.
		if n, _ := strconv.ParseInt(v, 10, 64); n == o.version.version {
			o.version.info.userData = h
		}
	}
	return o, nil
}

func tagValue(asg *asgtypes.AutoScalingGroup, key string) string {
	for _, t := range asg.Tags {
		if aws.ToString(t.Key) == key {
			return aws.ToString(t.Value)
		}
	}
	return ""
}

// desiredTags are the ASG's tags for a spec whose launch template is at
// target: the model's, propagated to instances at launch, and mpool's own,
// not propagated (the record of the model's additional tags among them).
func desiredTags(spec scalegroup.GroupSpec, target templateVersion) []asgtypes.Tag {
	var out []asgtypes.Tag
	for _, k := range slices.Sorted(maps.Keys(spec.Model.Tags)) {
		if strings.HasPrefix(k, "mpool.dev/model-") || k == TagUserData || isRecordTag(k) {
			continue
		}
		out = append(out, asgtypes.Tag{Key: aws.String(k), Value: aws.String(spec.Model.Tags[k]), PropagateAtLaunch: aws.Bool(true)})
	}
	for _, kv := range [][2]string{
		{TagModelHash, spec.ModelHash},
		{TagModelSinceVersion, strconv.FormatInt(target.info.since, 10)},
		{TagUserData, strconv.FormatInt(target.version, 10) + ":" + target.info.userData},
	} {
		out = append(out, asgtypes.Tag{Key: aws.String(kv[0]), Value: aws.String(kv[1]), PropagateAtLaunch: aws.Bool(false)})
	}
	return append(out, recordTags(spec.Model.Tags)...)
}

// changedTags are those of want the ASG lacks or has with another value or
// propagation, addressed to the ASG. Tags the ASG has beyond want are
// left alone (others may own them).
func changedTags(asg *asgtypes.AutoScalingGroup, name string, want []asgtypes.Tag) []asgtypes.Tag {
	have := map[string]asgtypes.TagDescription{}
	for _, t := range asg.Tags {
		have[aws.ToString(t.Key)] = t
	}
	var out []asgtypes.Tag
	for _, t := range want {
		h, ok := have[aws.ToString(t.Key)]
		if ok && aws.ToString(h.Value) == aws.ToString(t.Value) && aws.ToBool(h.PropagateAtLaunch) == aws.ToBool(t.PropagateAtLaunch) {
			continue
		}
		t.ResourceId, t.ResourceType = aws.String(name), aws.String("auto-scaling-group")
		out = append(out, t)
	}
	return out
}

// bounds are the ASG's MinSize and MaxSize for a capacity: the pool's,
// widened to include the capacity the engine asks for (it surges above
// the replicas, and removes instances below them before replacing them).
func bounds(s GroupSettings, capacity int32) (int32, int32) {
	return min(s.MinSize, capacity), max(s.MaxSize, capacity)
}

// createGroupInput is the ASG for a spec, at launch-template version lt.
func createGroupInput(ref scalegroup.Ref, spec scalegroup.GroupSpec, want desired, lt templateVersion) *autoscaling.CreateAutoScalingGroupInput {
	minSize, maxSize := bounds(want.settings, spec.Capacity)
	in := &autoscaling.CreateAutoScalingGroupInput{
		AutoScalingGroupName: aws.String(ref.Name),
		LaunchTemplate: &asgtypes.LaunchTemplateSpecification{
			LaunchTemplateId: aws.String(lt.id), Version: aws.String(strconv.FormatInt(lt.version, 10)),
		},
		MinSize:           aws.Int32(minSize),
		MaxSize:           aws.Int32(maxSize),
		DesiredCapacity:   aws.Int32(spec.Capacity),
		CapacityRebalance: aws.Bool(want.settings.CapacityRebalance),
		Tags:              desiredTags(spec, lt),
	}
	if len(want.settings.SubnetIDs) > 0 {
		in.VPCZoneIdentifier = aws.String(strings.Join(want.settings.SubnetIDs, ","))
	} else {
		in.AvailabilityZones = sortedUnique(spec.Model.Zones)
	}
	if v := want.settings.DefaultCooldownSeconds; v > 0 {
		in.DefaultCooldown = aws.Int32(v)
	}
	if v := want.settings.DefaultInstanceWarmupSeconds; v > 0 {
		in.DefaultInstanceWarmup = aws.Int32(v)
	}
	return in
}

// updateGroupInput is the update that brings the ASG to the spec at
// launch-template version target, nil when it has it all already.
func updateGroupInput(ref scalegroup.Ref, asg *asgtypes.AutoScalingGroup, spec scalegroup.GroupSpec, want desired, target templateVersion) *autoscaling.UpdateAutoScalingGroupInput {
	in := &autoscaling.UpdateAutoScalingGroupInput{AutoScalingGroupName: aws.String(ref.Name)}
	changed := false
	cur := groupTemplate(asg)
	version := strconv.FormatInt(target.version, 10)
	if cur == nil || aws.ToString(cur.LaunchTemplateId) != target.id || aws.ToString(cur.Version) != version {
		in.LaunchTemplate = &asgtypes.LaunchTemplateSpecification{LaunchTemplateId: aws.String(target.id), Version: aws.String(version)}
		changed = true
	}
	minSize, maxSize := bounds(want.settings, spec.Capacity)
	set := func(dst **int32, have *int32, want int32) {
		if aws.ToInt32(have) != want {
			*dst, changed = aws.Int32(want), true
		}
	}
	set(&in.MinSize, asg.MinSize, minSize)
	set(&in.MaxSize, asg.MaxSize, maxSize)
	set(&in.DesiredCapacity, asg.DesiredCapacity, spec.Capacity)
	if v := want.settings.DefaultCooldownSeconds; v > 0 {
		set(&in.DefaultCooldown, asg.DefaultCooldown, v)
	}
	if v := want.settings.DefaultInstanceWarmupSeconds; v > 0 {
		set(&in.DefaultInstanceWarmup, asg.DefaultInstanceWarmup, v)
	}
	if aws.ToBool(asg.CapacityRebalance) != want.settings.CapacityRebalance {
		in.CapacityRebalance, changed = aws.Bool(want.settings.CapacityRebalance), true
	}
	if len(want.settings.SubnetIDs) > 0 {
		if vpc := strings.Join(want.settings.SubnetIDs, ","); !sameSet(aws.ToString(asg.VPCZoneIdentifier), vpc) {
			in.VPCZoneIdentifier, changed = aws.String(vpc), true
		}
	} else if zones := sortedUnique(spec.Model.Zones); !slices.Equal(sortedUnique(asg.AvailabilityZones), zones) {
		in.AvailabilityZones, changed = zones, true
	}
	if updateMixed(in, asg, want, target) {
		changed = true
	}
	if !changed {
		return nil
	}
	return in
}

// sameSet compares two comma-separated lists as sets.
func sameSet(a, b string) bool {
	split := func(s string) []string {
		var out []string
		for _, f := range strings.Split(s, ",") {
			if f = strings.TrimSpace(f); f != "" {
				out = append(out, f)
			}
		}
		return sortedUnique(out)
	}
	return slices.Equal(split(a), split(b))
}

// userDataOnly is the template data of a version that differs from its
// source only by its user data.
func userDataOnly(spec scalegroup.GroupSpec) *ec2types.RequestLaunchTemplateData {
	return &ec2types.RequestLaunchTemplateData{UserData: aws.String(base64.StdEncoding.EncodeToString(spec.Model.CustomData))}
}

// templateData is the launch template's data for a spec: the AMI resolved
// (looked up by version, newest first) and, for a root volume, the AMI's
// root device.
func (s *ASGs) templateData(ctx context.Context, c *sdkClients, ref scalegroup.Ref, spec scalegroup.GroupSpec, want desired) (*ec2types.RequestLaunchTemplateData, error) {
	t := want.template
	imageID, rootDevice := t.AMI.ID, ""
	if imageID == "" || (t.RootVolume != nil && t.RootVolume.DeviceName == "") {
		img, err := findImage(ctx, c, ref, t.AMI, spec.Model.Version, spec.Model.InstanceType)
		if err != nil {
			return nil, err
		}
		imageID, rootDevice = aws.ToString(img.ImageId), aws.ToString(img.RootDeviceName)
	}
	d := &ec2types.RequestLaunchTemplateData{
		ImageId:      aws.String(imageID),
		InstanceType: ec2types.InstanceType(spec.Model.InstanceType),
	}
	if len(spec.Model.CustomData) > 0 {
		d.UserData = aws.String(base64.StdEncoding.EncodeToString(spec.Model.CustomData))
	}
	if t.SSHKeyName != "" {
		d.KeyName = aws.String(t.SSHKeyName)
	}
	if p := t.IAMInstanceProfile; p != "" {
		if strings.HasPrefix(p, "arn:") {
			d.IamInstanceProfile = &ec2types.LaunchTemplateIamInstanceProfileSpecificationRequest{Arn: aws.String(p)}
		} else {
			d.IamInstanceProfile = &ec2types.LaunchTemplateIamInstanceProfileSpecificationRequest{Name: aws.String(p)}
		}
	}
	d.SecurityGroupIds = slices.Clone(t.SecurityGroupIDs)
	if v := t.RootVolume; v != nil {
		dev := v.DeviceName
		if dev == "" {
			dev = rootDevice
		}
		d.BlockDeviceMappings = append(d.BlockDeviceMappings, BlockDevice(dev, *v))
	}
	for _, v := range t.NonRootVolumes {
		d.BlockDeviceMappings = append(d.BlockDeviceMappings, BlockDevice(v.DeviceName, v))
	}
	if sp := t.Spot; sp != nil {
		d.InstanceMarketOptions = &ec2types.LaunchTemplateInstanceMarketOptionsRequest{MarketType: ec2types.MarketTypeSpot}
		if sp.MaxPrice != "" {
			d.InstanceMarketOptions.SpotOptions = &ec2types.LaunchTemplateSpotMarketOptionsRequest{MaxPrice: aws.String(sp.MaxPrice)}
		}
	}
	SetInstanceOptions(d, t.Metadata, t.PrivateDNSName)
	// The instances carry the model they were launched from (and the
	// Kubernetes version it runs): each version is one model.
	instanceTags := []ec2types.Tag{{Key: aws.String(TagModelHash), Value: aws.String(spec.ModelHash)}}
	if v := spec.Model.Version; v != "" {
		instanceTags = append(instanceTags, ec2types.Tag{Key: aws.String(TagKubernetesVersion), Value: aws.String(v)})
	}
	d.TagSpecifications = []ec2types.LaunchTemplateTagSpecificationRequest{{ResourceType: ec2types.ResourceTypeInstance, Tags: instanceTags}}
	if id := t.CapacityReservationID; id != "" {
		d.CapacityReservationSpecification = &ec2types.LaunchTemplateCapacityReservationSpecificationRequest{
			CapacityReservationTarget: &ec2types.CapacityReservationTarget{CapacityReservationId: aws.String(id)},
		}
	}
	return d, nil
}

// BlockDevice is a launch template's block device mapping for v at device,
// deleted with its instance (also used for EKS node groups' templates).
func BlockDevice(device string, v Volume) ec2types.LaunchTemplateBlockDeviceMappingRequest {
	ebs := &ec2types.LaunchTemplateEbsBlockDeviceRequest{
		VolumeSize:          aws.Int32(v.SizeGiB),
		VolumeType:          ec2types.VolumeType(v.Type),
		Encrypted:           v.Encrypted,
		DeleteOnTermination: aws.Bool(true),
	}
	if v.IOPS > 0 {
		ebs.Iops = aws.Int32(v.IOPS)
	}
	if v.Throughput > 0 {
		ebs.Throughput = aws.Int32(v.Throughput)
	}
	if v.KMSKeyID != "" {
		ebs.KmsKeyId = aws.String(v.KMSKeyID)
	}
	return ec2types.LaunchTemplateBlockDeviceMappingRequest{DeviceName: aws.String(device), Ebs: ebs}
}

// armFamilyRE matches Graviton instance types (m6g, c7gn, t4g, r8gd, ...).
var armFamilyRE = regexp.MustCompile(`^[a-z]+[0-9]+[a-z]*g[a-z]*\.`)

// architecture is the CPU architecture of an instance type's AMIs.
func architecture(instanceType string) string {
	if armFamilyRE.MatchString(instanceType) {
		return "arm64"
	}
	return "x86_64"
}

// imageName is CAPA's AMI name pattern for a lookup: the format with the
// base OS and the Kubernetes version (without its "v") substituted.
func imageName(a AMI, k8sVersion string) (string, error) {
	tpl, err := template.New("ami").Parse(a.Format)
	if err != nil {
		return "", scalegroup.NewInvalid(fmt.Sprintf("the AMI lookup format %q: %v", a.Format, err))
	}
	var b bytes.Buffer
	if err := tpl.Execute(&b, struct{ BaseOS, K8sVersion string }{a.BaseOS, strings.TrimPrefix(k8sVersion, "v")}); err != nil {
		return "", scalegroup.NewInvalid(fmt.Sprintf("the AMI lookup format %q: %v", a.Format, err))
	}
	return b.String(), nil
}

// findImage describes the AMI by ID, or looks it up (the newest image by
// CreationDate of the owner whose name matches, available, of the
// instance type's architecture).
func findImage(ctx context.Context, c *sdkClients, ref scalegroup.Ref, a AMI, k8sVersion, instanceType string) (*ec2types.Image, error) {
	in := &ec2.DescribeImagesInput{}
	what := a.ID
	if a.ID != "" {
		in.ImageIds = []string{a.ID}
	} else {
		name, err := imageName(a, k8sVersion)
		if err != nil {
			return nil, err
		}
		what = fmt.Sprintf("named %s owned by %s for %s", name, a.Owner, architecture(instanceType))
		in.Owners = strings.Split(a.Owner, ",")
		in.Filters = []ec2types.Filter{
			{Name: aws.String("name"), Values: []string{name}},
			{Name: aws.String("architecture"), Values: []string{architecture(instanceType)}},
			{Name: aws.String("state"), Values: []string{"available"}},
		}
	}
	var newest *ec2types.Image
	var newestAt time.Time
	p := ec2.NewDescribeImagesPaginator(c.ec2, in)
	if err := EachPage(ctx, p.HasMorePages, p.NextPage, func(page *ec2.DescribeImagesOutput) {
		for i := range page.Images {
			img := &page.Images[i]
			at, _ := time.Parse(time.RFC3339, aws.ToString(img.CreationDate))
			if newest == nil || at.After(newestAt) {
				newest, newestAt = img, at
			}
		}
	}); err != nil {
		return nil, cloudError(err, ref)
	}
	if newest == nil {
		if a.ID != "" {
			return nil, scalegroup.NewInvalid(fmt.Sprintf("AMI %s does not exist in %s: set spec.awsLaunchTemplate.ami.id to an AMI of the region", a.ID, ref.Scope))
		}
		return nil, scalegroup.NewInvalid(fmt.Sprintf("no AMI %s in %s: set spec.awsLaunchTemplate.ami.id, or imageLookupOrg / imageLookupFormat / imageLookupBaseOS, or a Kubernetes version with published images", what, ref.Scope))
	}
	return newest, nil
}

// SetInstanceOptions sets a launch template's instance metadata service
// and host name options (nil leaves EC2's defaults): what the AWS and EKS
// providers' templates share.
func SetInstanceOptions(d *ec2types.RequestLaunchTemplateData, metadata *Metadata, privateDNS *PrivateDNSName) {
	if m := metadata; m != nil {
		d.MetadataOptions = &ec2types.LaunchTemplateInstanceMetadataOptionsRequest{
			HttpEndpoint:         ec2types.LaunchTemplateInstanceMetadataEndpointState(m.HTTPEndpoint),
			HttpTokens:           ec2types.LaunchTemplateHttpTokensState(m.HTTPTokens),
			InstanceMetadataTags: ec2types.LaunchTemplateInstanceMetadataTagsState(m.InstanceMetadataTags),
		}
		if m.HTTPPutResponseHopLimit > 0 {
			d.MetadataOptions.HttpPutResponseHopLimit = aws.Int32(m.HTTPPutResponseHopLimit)
		}
	}
	if p := privateDNS; p != nil {
		d.PrivateDnsNameOptions = &ec2types.LaunchTemplatePrivateDnsNameOptionsRequest{
			EnableResourceNameDnsAAAARecord: p.EnableResourceNameDNSAAAARecord,
			EnableResourceNameDnsARecord:    p.EnableResourceNameDNSARecord,
			HostnameType:                    ec2types.HostnameType(p.HostnameType),
		}
	}
}

// EC2Tags are tags in EC2's terms, sorted by key.
func EC2Tags(tags map[string]string) []ec2types.Tag {
	var out []ec2types.Tag
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		out = append(out, ec2types.Tag{Key: aws.String(k), Value: aws.String(tags[k])})
	}
	return out
}

// isTemplateExists reports whether err says the launch template exists.
func isTemplateExists(err error) bool {
	return strings.HasPrefix(apiCode(err), "InvalidLaunchTemplateName.AlreadyExists")
}

// isDeleting reports whether AWS is deleting the ASG.
func isDeleting(asg *asgtypes.AutoScalingGroup) bool {
	return strings.HasPrefix(aws.ToString(asg.Status), "Delete")
}

// leaving reports whether an instance is on its way out of the ASG.
func leaving(s asgtypes.LifecycleState) bool {
	return strings.HasPrefix(string(s), "Terminat") || strings.HasPrefix(string(s), "Detach")
}

// group maps an ASG onto a Group.
func (s *ASGs) group(ref scalegroup.Ref, asg *asgtypes.AutoScalingGroup) *scalegroup.Group {
	hash := tagValue(asg, TagModelHash)
	since, _ := strconv.ParseInt(tagValue(asg, TagModelSinceVersion), 10, 64)
	g := &scalegroup.Group{
		Name:      aws.ToString(asg.AutoScalingGroupName),
		Capacity:  aws.ToInt32(asg.DesiredCapacity),
		ModelHash: hash,
	}
	templateID := ""
	if lt := groupTemplate(asg); lt != nil {
		templateID = aws.ToString(lt.LaunchTemplateId)
		g.Template = &scalegroup.TemplateRef{ID: templateID, Version: aws.ToString(lt.Version)}
	}
	seen := s.firstSeen(ref, asg.Instances)
	hidden := rebalanceReplacements(asg, seen)
	moving := 0
	for _, in := range asg.Instances {
		if hidden[aws.ToString(in.InstanceId)] {
			continue
		}
		inst := instance(in, hash, since, templateID)
		inst.CreatedAt = seen[inst.ID]
		switch inst.State {
		case scalegroup.StateCreating, scalegroup.StateBooting, scalegroup.StateDeleting:
			moving++
		}
		g.Instances = append(g.Instances, inst)
	}
	slices.SortFunc(g.Instances, func(a, b scalegroup.Instance) int { return strings.Compare(a.ID, b.ID) })
	switch live := liveCount(g.Instances); {
	case isDeleting(asg):
		g.Operation = &scalegroup.Operation{Type: scalegroup.OperationDelete, Message: "AWS reports the auto scaling group " + aws.ToString(asg.Status)}
	case moving > 0 || live != g.Capacity:
		g.Operation = &scalegroup.Operation{Type: scalegroup.OperationScale,
			Message: fmt.Sprintf("%d of %d instances in service, %d launching or terminating", live-countState(g.Instances, scalegroup.StateCreating, scalegroup.StateBooting), g.Capacity, moving)}
	}
	return g
}

// instance maps an ASG instance. Its ModelHash is the ASG's model hash
// when it was launched from the ASG's launch template (templateID), at the
// model's first version or a later one, else "lt-version-<n>".
func instance(in asgtypes.Instance, hash string, since int64, templateID string) scalegroup.Instance {
	id, zone := aws.ToString(in.InstanceId), aws.ToString(in.AvailabilityZone)
	out := scalegroup.Instance{
		ID:         id,
		ProviderID: "aws:///" + zone + "/" + id,
		Zone:       zone,
		State:      instanceState(in),
		Held:       in.LifecycleState == asgtypes.LifecycleStatePendingWait,
	}
	version, sameTemplate := "", false
	if lt := in.LaunchTemplate; lt != nil {
		version = aws.ToString(lt.Version)
		sameTemplate = aws.ToString(lt.LaunchTemplateId) == templateID || aws.ToString(lt.LaunchTemplateId) == ""
		id := aws.ToString(lt.LaunchTemplateId)
		if id == "" {
			id = templateID
		}
		out.Template = &scalegroup.TemplateRef{ID: id, Version: version}
	}
	if v, err := strconv.ParseInt(version, 10, 64); err == nil && sameTemplate && since > 0 && v >= since {
		out.ModelHash = hash
	} else {
		out.ModelHash = staleHashPrefix + version
	}
	switch {
	case out.State == scalegroup.StateFailed:
		out.Message = "Auto Scaling reports the instance " + aws.ToString(in.HealthStatus) + " (" + string(in.LifecycleState) + ")"
	case in.LifecycleState == asgtypes.LifecycleStateStandby || in.LifecycleState == asgtypes.LifecycleStateEnteringStandby:
		out.Message = "the instance is in Standby"
	}
	return out
}

// instanceState maps an instance's lifecycle state and health.
func instanceState(in asgtypes.Instance) scalegroup.InstanceState {
	s := in.LifecycleState
	switch {
	case leaving(s):
		return scalegroup.StateDeleting
	case strings.EqualFold(aws.ToString(in.HealthStatus), "Unhealthy"):
		return scalegroup.StateFailed
	case s == asgtypes.LifecycleStatePending:
		return scalegroup.StateCreating
	case strings.HasPrefix(string(s), "Pending"):
		return scalegroup.StateBooting
	default:
		return scalegroup.StateRunning
	}
}

// liveCount counts the instances not being deleted.
func liveCount(in []scalegroup.Instance) int32 {
	return int32(len(in)) - countState(in, scalegroup.StateDeleting)
}

func countState(in []scalegroup.Instance, states ...scalegroup.InstanceState) int32 {
	var n int32
	for _, i := range in {
		if slices.Contains(states, i.State) {
			n++
		}
	}
	return n
}

// scaleOp is the Scale operation of a group whose live instances differ
// from its capacity, nil when they match.
func scaleOp(capacity, live int32) *scalegroup.Operation {
	if capacity == live {
		return nil
	}
	return &scalegroup.Operation{Type: scalegroup.OperationScale, Message: fmt.Sprintf("%d of %d instances launched", live, capacity)}
}

// firstSeen records when each of a group's instances was first observed
// and returns those times: Auto Scaling does not report launch times, and
// DescribeInstances would cost a call per reconcile. After a restart the
// instances count from when they are seen again, which only delays the
// engine's join timeout.
func (s *ASGs) firstSeen(ref scalegroup.Ref, instances []asgtypes.Instance) map[string]time.Time {
	key := ref.Scope + "/" + ref.Name
	now := s.clock.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	prev := s.seen[key]
	next := make(map[string]time.Time, len(instances))
	for _, in := range instances {
		id := aws.ToString(in.InstanceId)
		if t, ok := prev[id]; ok {
			next[id] = t
		} else {
			next[id] = now
		}
	}
	s.seen[key] = next
	return next
}

// forget drops what is remembered of a group that is gone.
func (s *ASGs) forget(ref scalegroup.Ref) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.seen, ref.Scope+"/"+ref.Name)
}
