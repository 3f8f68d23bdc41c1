package eks

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	asgtypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
	"github.com/aws/smithy-go"
	"k8s.io/utils/clock"

	awsprovider "github.com/mpool-dev/mpool/internal/provider/aws"
	"github.com/mpool-dev/mpool/internal/provider/kit"
	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// Tags of a node group (and, propagated, of its instances) that carry the
// model (see the package doc).
const (
	TagModelHash   = "mpool.dev/model-hash"
	TagModelTarget = "mpool.dev/model-target"
	// TagRelease is the release an instance was launched from, set by EKS
	// (the simulated one): "<version>/<release version>/<template>".
	TagRelease = "mpool.dev/eks-release"
	// TagClusterName and TagNodegroupName are EKS's own instance tags.
	TagClusterName   = "eks:cluster-name"
	TagNodegroupName = "eks:nodegroup-name"
)

// staleHashPrefix starts the ModelHash of an instance whose release is not
// the one its tagged hash stands for.
const staleHashPrefix = "eks-release:"

// Options configure the EKS provider's ScaleGroup.
type Options struct {
	// Endpoint is EKS's base endpoint ("" for the SDK's resolution).
	Endpoint string
	// EC2Endpoint is EC2's base endpoint, and Auto Scaling's (the node
	// groups' Auto Scaling groups, for ReplaceInstances); "" for the SDK's
	// resolution.
	EC2Endpoint string
	// HTTPClient carries every request; nil leaves the SDK its own.
	HTTPClient *http.Client
	// Credentials resolves a Ref's credentials (the AWS provider's).
	Credentials awsprovider.Credentials
	// Region is the region of a Ref that names none.
	Region string
	// RetryFailedUpdateAfter is how long a version update EKS failed (a
	// PodDisruptionBudget that blocked a drain: PodEvictionFailure) is
	// left before the same update is asked for again (default 10m); a
	// different update (a changed spec) is asked for at once.
	RetryFailedUpdateAfter time.Duration
	// Clock tells how long ago EKS failed an update; nil is the real clock.
	Clock clock.PassiveClock
}

// Nodegroups is scalegroup.ScaleGroup on EKS managed node groups. A Ref's
// Name is the node group's, its Scope "<region>/<cluster>".
type Nodegroups struct {
	opts    Options
	clock   clock.PassiveClock
	clients *awsprovider.Clients[*sdkClients]
}

var (
	_ scalegroup.ScaleGroup = (*Nodegroups)(nil)
	_ scalegroup.Replacer   = (*Nodegroups)(nil)
)

type sdkClients struct {
	eks *eks.Client
	ec2 *ec2.Client
	asg *autoscaling.Client
}

// New returns the EKS ScaleGroup. The SDK's retries are off: the engine
// retries, so one logical call is one request.
func New(opts Options) (*Nodegroups, error) {
	if opts.Credentials == nil {
		return nil, errors.New("eks node groups: no credentials resolver")
	}
	clients, err := awsprovider.NewClients(opts.Region, opts.HTTPClient, func(cfg aws.Config) *sdkClients {
		return &sdkClients{
			eks: eks.NewFromConfig(cfg, func(o *eks.Options) {
				if opts.Endpoint != "" {
					o.BaseEndpoint = aws.String(opts.Endpoint)
				}
			}),
			ec2: ec2.NewFromConfig(cfg, func(o *ec2.Options) {
				if opts.EC2Endpoint != "" {
					o.BaseEndpoint = aws.String(opts.EC2Endpoint)
				}
			}),
			asg: autoscaling.NewFromConfig(cfg, func(o *autoscaling.Options) {
				if opts.EC2Endpoint != "" {
					o.BaseEndpoint = aws.String(opts.EC2Endpoint)
				}
			}),
		}
	})
	if err != nil {
		return nil, fmt.Errorf("eks node groups: %w", err)
	}
	c := opts.Clock
	if c == nil {
		c = clock.RealClock{}
	}
	return &Nodegroups{opts: opts, clock: c, clients: clients}, nil
}

// Capabilities implements scalegroup.ScaleGroup: EKS runs its own rollouts
// and scale-downs; a chosen node is replaced through the node group's Auto
// Scaling group (ReplaceInstances).
func (*Nodegroups) Capabilities() scalegroup.Capabilities {
	return scalegroup.Capabilities{CloudRollouts: true, ReplaceInstances: true}
}

// place splits a Ref's scope into region and cluster.
func (s *Nodegroups) place(ref scalegroup.Ref) (region, cluster string, err error) {
	region, cluster, ok := strings.Cut(ref.Scope, "/")
	if !ok || cluster == "" {
		return "", "", scalegroup.NewInvalid(fmt.Sprintf("node group reference %s has no <region>/<cluster> scope", ref))
	}
	if region == "" {
		region = s.opts.Region
	}
	return region, cluster, nil
}

func (s *Nodegroups) resolve(ctx context.Context, ref scalegroup.Ref) (*sdkClients, string, error) {
	region, cluster, err := s.place(ref)
	if err != nil {
		return nil, "", err
	}
	creds, err := s.opts.Credentials.CredentialsProvider(ctx, ref)
	if err != nil {
		return nil, "", err
	}
	return s.clients.For(region, creds), cluster, nil
}

// Get implements scalegroup.ScaleGroup: DescribeNodegroup and the node
// group's instances (DescribeInstances by EKS's instance tags); while an
// update runs, the update too (ListUpdates, DescribeUpdate).
func (s *Nodegroups) Get(ctx context.Context, ref scalegroup.Ref) (*scalegroup.Group, error) {
	c, cluster, err := s.resolve(ctx, ref)
	if err != nil {
		return nil, fmt.Errorf("getting node group %s: %w", ref, err)
	}
	ng, err := describe(ctx, c, cluster, ref)
	if err != nil {
		return nil, fmt.Errorf("getting node group %s: %w", ref, err)
	}
	if ng == nil {
		return nil, scalegroup.NewNotFound(ref.Name)
	}
	g, err := s.group(ctx, c, cluster, ref, ng)
	if err != nil {
		return nil, fmt.Errorf("getting node group %s: %w", ref, err)
	}
	return g, nil
}

// describe reads the node group, nil when it does not exist.
func describe(ctx context.Context, c *sdkClients, cluster string, ref scalegroup.Ref) (*ekstypes.Nodegroup, error) {
	out, err := c.eks.DescribeNodegroup(ctx, &eks.DescribeNodegroupInput{ClusterName: aws.String(cluster), NodegroupName: aws.String(ref.Name)})
	var nf *ekstypes.ResourceNotFoundException
	if errors.As(err, &nf) {
		if strings.Contains(strings.ToLower(nf.ErrorMessage()), "cluster") {
			return nil, scalegroup.NewInvalid(fmt.Sprintf("EKS cluster %s does not exist in this account and region: %s (fix the AWSManagedControlPlane's spec.eksClusterName or spec.region)", cluster, nf.ErrorMessage()))
		}
		return nil, nil
	}
	if err != nil {
		return nil, cloudError(err, ref)
	}
	return out.Nodegroup, nil
}

// group maps a node group and its instances.
func (s *Nodegroups) group(ctx context.Context, c *sdkClients, cluster string, ref scalegroup.Ref, ng *ekstypes.Nodegroup) (*scalegroup.Group, error) {
	g := &scalegroup.Group{Name: ref.Name}
	if lt := ng.LaunchTemplate; lt != nil && aws.ToString(lt.Id) != "" {
		g.Template = &scalegroup.TemplateRef{ID: aws.ToString(lt.Id), Version: aws.ToString(lt.Version)}
	}
	if sc := ng.ScalingConfig; sc != nil {
		g.Capacity = aws.ToInt32(sc.DesiredSize)
	}
	if meetsTarget(ng.Tags[TagModelTarget], releaseOf(ng)) {
		g.ModelHash = ng.Tags[TagModelHash]
	}
	switch ng.Status {
	case ekstypes.NodegroupStatusCreating:
		g.Operation = &scalegroup.Operation{Type: scalegroup.OperationScale, Message: "EKS is creating the node group", StartedAt: aws.ToTime(ng.CreatedAt)}
	case ekstypes.NodegroupStatusDeleting:
		g.Operation = &scalegroup.Operation{Type: scalegroup.OperationDelete, Message: "EKS is deleting the node group", StartedAt: aws.ToTime(ng.ModifiedAt)}
	case ekstypes.NodegroupStatusUpdating:
		g.Operation = &scalegroup.Operation{Type: scalegroup.OperationUpdate, Message: "EKS is updating the node group", StartedAt: aws.ToTime(ng.ModifiedAt)}
		if u := runningUpdate(ctx, c, cluster, ref); u != nil {
			g.Operation.ID = aws.ToString(u.Id)
			g.Operation.StartedAt = aws.ToTime(u.CreatedAt)
			g.Operation.Message = fmt.Sprintf("EKS %s %s in progress", u.Type, aws.ToString(u.Id))
			if len(u.Params) > 0 {
				var ps []string
				for _, p := range u.Params {
					ps = append(ps, string(p.Type)+"="+aws.ToString(p.Value))
				}
				g.Operation.Message += " (" + strings.Join(ps, ", ") + ")"
			}
		}
	}
	if g.ModelHash == "" && ng.Tags[TagModelTarget] != "" && (ng.Status == ekstypes.NodegroupStatusActive || ng.Status == ekstypes.NodegroupStatusDegraded) {
		// Out of date at rest: say why when EKS failed the update.
		if u := latestUpdate(ctx, c, cluster, ref); u != nil && u.Status == ekstypes.UpdateStatusFailed {
			g.Message = failedUpdateMessage(u)
		}
	}
	if h := ng.Health; h != nil && len(h.Issues) > 0 {
		var msgs []string
		for _, is := range h.Issues {
			msgs = append(msgs, fmt.Sprintf("%s: %s", is.Code, aws.ToString(is.Message)))
		}
		g.Message = strings.TrimPrefix(g.Message+"; EKS reports health issues: "+strings.Join(msgs, "; "), "; ")
	}
	in := &ec2.DescribeInstancesInput{Filters: []ec2types.Filter{
		{Name: aws.String("tag:" + TagClusterName), Values: []string{cluster}},
		{Name: aws.String("tag:" + TagNodegroupName), Values: []string{ref.Name}},
		{Name: aws.String("instance-state-name"), Values: []string{"pending", "running", "shutting-down", "stopping"}},
	}}
	p := ec2.NewDescribeInstancesPaginator(c.ec2, in)
	if err := awsprovider.EachPage(ctx, p.HasMorePages, p.NextPage, func(page *ec2.DescribeInstancesOutput) {
		for _, r := range page.Reservations {
			for _, i := range r.Instances {
				g.Instances = append(g.Instances, instance(i, ng.Tags[TagModelHash], ng.Tags[TagModelTarget]))
			}
		}
	}); err != nil {
		return nil, awsprovider.CloudError(err, ref)
	}
	slices.SortFunc(g.Instances, func(a, b scalegroup.Instance) int { return strings.Compare(a.ID, b.ID) })
	return g, nil
}

// instance maps an EC2 instance of the node group whose tags say it
// carries the model hash for release target: the instance runs that model
// when its own release (its TagRelease) meets the target, as every other
// field of the model is one EKS cannot change.
func instance(i ec2types.Instance, hash, target string) scalegroup.Instance {
	tags := map[string]string{}
	for _, t := range i.Tags {
		tags[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	zone := ""
	if i.Placement != nil {
		zone = aws.ToString(i.Placement.AvailabilityZone)
	}
	id := aws.ToString(i.InstanceId)
	out := scalegroup.Instance{ID: id, ProviderID: "aws:///" + zone + "/" + id, Zone: zone, CreatedAt: aws.ToTime(i.LaunchTime)}
	rel := tags[TagRelease]
	if hash != "" && meetsTarget(target, rel) {
		out.ModelHash = hash
	} else {
		out.ModelHash = staleHashPrefix + rel
	}
	state := ""
	if i.State != nil {
		state = string(i.State.Name)
	}
	switch state {
	case "pending":
		out.State = scalegroup.StateCreating
	case "running":
		out.State = scalegroup.StateRunning
	default:
		out.State = scalegroup.StateDeleting
	}
	return out
}

// releaseOf is a node group's release: "<version>/<release version>",
// and "/<launch template id>:<version>" when it has a launch template (the
// form of an instance's TagRelease).
func releaseOf(ng *ekstypes.Nodegroup) string {
	rel := aws.ToString(ng.Version) + "/" + aws.ToString(ng.ReleaseVersion)
	if lt := ng.LaunchTemplate; lt != nil {
		rel += "/" + templateRelease(aws.ToString(lt.Id), aws.ToString(lt.Version))
	}
	return rel
}

// templateRelease is a launch template version in a release
// ("<id>:<version>").
func templateRelease(id, version string) string { return id + ":" + version }

// template is the launch template version node group m launches from
// (ensureTemplate's), as the model target records it (templateRelease)
// and as EKS takes it; "" and nil when m has no launch template.
func (s *Nodegroups) template(ctx context.Context, c *sdkClients, cluster string, ref scalegroup.Ref, m Nodegroup, tags map[string]string) (string, *ekstypes.LaunchTemplateSpecification, error) {
	if m.LaunchTemplate == nil {
		return "", nil, nil
	}
	v, err := s.ensureTemplate(ctx, c, cluster, ref, *m.LaunchTemplate, tags)
	if err != nil {
		return "", nil, err
	}
	return templateRelease(v.id, v.String()), &ekstypes.LaunchTemplateSpecification{Id: aws.String(v.id), Version: aws.String(v.String())}, nil
}

// target is the model target tag of a version, release version ("" for
// EKS's latest) and launch template version ("" for none).
func target(version, release, template string) string {
	t := version + "/" + release
	if template != "" {
		t += "/" + template
	}
	return t
}

// meetsTarget reports whether a release "<version>/<release
// version>[/<template>:<version>]" is the target's: each part the target
// has is the release's (an empty target version or release accepts any,
// as does a target without a launch template part).
func meetsTarget(tgt, release string) bool {
	if tgt == "" {
		return false
	}
	tp, rp := strings.SplitN(tgt, "/", 3), strings.SplitN(release, "/", 3)
	for i, p := range tp {
		if p != "" && (i >= len(rp) || rp[i] != p) {
			return false
		}
	}
	return true
}

// failedUpdateMessage says why EKS failed an update, with its errors
// verbatim.
func failedUpdateMessage(u *ekstypes.Update) string {
	var errs []string
	for _, e := range u.Errors {
		msg := string(e.ErrorCode) + ": " + aws.ToString(e.ErrorMessage)
		if len(e.ResourceIds) > 0 {
			msg += " (" + strings.Join(e.ResourceIds, ", ") + ")"
		}
		errs = append(errs, msg)
	}
	return fmt.Sprintf("EKS %s %s failed: %s", u.Type, aws.ToString(u.Id), strings.Join(errs, "; "))
}

// latestUpdate returns the node group's latest update, nil when it has
// none (or they cannot be read).
func latestUpdate(ctx context.Context, c *sdkClients, cluster string, ref scalegroup.Ref) *ekstypes.Update {
	ids, err := c.eks.ListUpdates(ctx, &eks.ListUpdatesInput{Name: aws.String(cluster), NodegroupName: aws.String(ref.Name)})
	if err != nil || len(ids.UpdateIds) == 0 {
		return nil
	}
	u, err := c.eks.DescribeUpdate(ctx, &eks.DescribeUpdateInput{Name: aws.String(cluster), NodegroupName: aws.String(ref.Name), UpdateId: aws.String(ids.UpdateIds[len(ids.UpdateIds)-1])})
	if err != nil {
		return nil
	}
	return u.Update
}

// sameVersionUpdate reports whether a version update asked for what in
// asks for.
func sameVersionUpdate(u *ekstypes.Update, in *eks.UpdateNodegroupVersionInput) bool {
	if u.Type != ekstypes.UpdateTypeVersionUpdate {
		return false
	}
	params := map[ekstypes.UpdateParamType]string{}
	for _, p := range u.Params {
		params[p.Type] = aws.ToString(p.Value)
	}
	return (in.Version == nil || params[ekstypes.UpdateParamTypeVersion] == *in.Version) &&
		(in.ReleaseVersion == nil || params[ekstypes.UpdateParamTypeReleaseVersion] == *in.ReleaseVersion) &&
		(in.LaunchTemplate == nil || params[ekstypes.UpdateParamTypeLaunchTemplateVersion] == aws.ToString(in.LaunchTemplate.Version))
}

// evictionFailed reports whether EKS failed u because a drain was blocked
// (PodEvictionFailure), which a forced update goes through.
func evictionFailed(u *ekstypes.Update) bool {
	return slices.ContainsFunc(u.Errors, func(e ekstypes.ErrorDetail) bool { return e.ErrorCode == ekstypes.ErrorCodePodEvictionFailure })
}

func (s *Nodegroups) retryFailedUpdateAfter() time.Duration {
	if s.opts.RetryFailedUpdateAfter > 0 {
		return s.opts.RetryFailedUpdateAfter
	}
	return 10 * time.Minute
}

// runningUpdate returns the node group's update in progress, nil when none
// (or it cannot be read: a Get does not fail for it).
func runningUpdate(ctx context.Context, c *sdkClients, cluster string, ref scalegroup.Ref) *ekstypes.Update {
	ids, err := c.eks.ListUpdates(ctx, &eks.ListUpdatesInput{Name: aws.String(cluster), NodegroupName: aws.String(ref.Name)})
	if err != nil {
		return nil
	}
	for i := len(ids.UpdateIds) - 1; i >= 0; i-- {
		u, err := c.eks.DescribeUpdate(ctx, &eks.DescribeUpdateInput{Name: aws.String(cluster), NodegroupName: aws.String(ref.Name), UpdateId: aws.String(ids.UpdateIds[i])})
		if err != nil {
			return nil
		}
		if u.Update.Status == ekstypes.UpdateStatusInProgress {
			return u.Update
		}
	}
	return nil
}

// Apply implements scalegroup.ScaleGroup: CreateNodegroup when the node
// group does not exist; otherwise one change, the first that differs, in
// this order: UpdateNodegroupConfig (scaling, labels, taints, update
// config), UpdateNodegroupVersion (preceded by TagResource of the model),
// TagResource of the tags. Fields EKS cannot change are refused (Invalid),
// naming the field. While EKS changes the node group, nothing is written.
func (s *Nodegroups) Apply(ctx context.Context, ref scalegroup.Ref, spec scalegroup.GroupSpec) (*scalegroup.Group, error) {
	c, cluster, err := s.resolve(ctx, ref)
	if err != nil {
		return nil, fmt.Errorf("applying node group %s: %w", ref, err)
	}
	m, ok := spec.Model.Provider.(Nodegroup)
	if !ok {
		return nil, scalegroup.NewInvalid(fmt.Sprintf("node group %s: the model is a %T, not an eks.Nodegroup", ref, spec.Model.Provider))
	}
	settings, _ := spec.Model.InPlace.(Settings)
	version := minorVersion(spec.Model.Version)
	ng, err := describe(ctx, c, cluster, ref)
	if err != nil {
		return nil, fmt.Errorf("applying node group %s: %w", ref, err)
	}
	if ng == nil {
		if err := s.create(ctx, c, cluster, ref, spec, m, settings, version); err != nil {
			return nil, fmt.Errorf("creating node group %s: %w", ref, err)
		}
	} else {
		if ng.Status != ekstypes.NodegroupStatusActive && ng.Status != ekstypes.NodegroupStatusDegraded {
			if ng.Status == ekstypes.NodegroupStatusCreateFailed {
				return nil, scalegroup.NewInvalid(fmt.Sprintf("node group %s failed to create: delete the pool and fix its spec", ref))
			}
			return s.group(ctx, c, cluster, ref, ng)
		}
		if err := immutable(ng, m); err != nil {
			return nil, err
		}
		if err := s.update(ctx, c, cluster, ref, ng, spec, m, settings, version); err != nil {
			return nil, fmt.Errorf("updating node group %s: %w", ref, err)
		}
	}
	ng, err = describe(ctx, c, cluster, ref)
	if err != nil || ng == nil {
		return nil, fmt.Errorf("reading node group %s back: %w", ref, errors.Join(err, scalegroup.NewTransient("the node group is gone", nil)))
	}
	return s.group(ctx, c, cluster, ref, ng)
}

func (s *Nodegroups) create(ctx context.Context, c *sdkClients, cluster string, ref scalegroup.Ref, spec scalegroup.GroupSpec, m Nodegroup, st Settings, version string) error {
	tags := maps.Clone(spec.Model.Tags)
	if tags == nil {
		tags = map[string]string{}
	}
	tpl, lt, err := s.template(ctx, c, cluster, ref, m, spec.Model.Tags)
	if err != nil {
		return err
	}
	tags[TagModelHash], tags[TagModelTarget] = spec.ModelHash, target(version, m.ReleaseVersion, tpl)
	in := &eks.CreateNodegroupInput{
		ClusterName:    aws.String(cluster),
		NodegroupName:  aws.String(ref.Name),
		NodeRole:       aws.String(m.NodeRole),
		Subnets:        m.Subnets,
		ScalingConfig:  scalingConfig(st, spec.Capacity),
		Labels:         st.Labels,
		Taints:         taintsOf(st.Taints),
		Tags:           tags,
		UpdateConfig:   updateConfigOf(st),
		CapacityType:   ekstypes.CapacityTypes(m.CapacityType),
		AmiType:        ekstypes.AMITypes(m.AMIType),
		LaunchTemplate: lt,
	}
	if version != "" {
		in.Version = aws.String(version)
	}
	if m.ReleaseVersion != "" {
		in.ReleaseVersion = aws.String(m.ReleaseVersion)
	}
	if m.InstanceType != "" {
		in.InstanceTypes = []string{m.InstanceType}
	}
	if m.DiskSize > 0 {
		in.DiskSize = aws.Int32(m.DiskSize)
	}
	if r := m.RemoteAccess; r != nil {
		in.RemoteAccess = &ekstypes.RemoteAccessConfig{Ec2SshKey: aws.String(r.SSHKeyName), SourceSecurityGroups: r.SourceSecurityGroups}
	}
	_, err = c.eks.CreateNodegroup(ctx, in)
	var inUse *ekstypes.ResourceInUseException
	if errors.As(err, &inUse) {
		return nil // created by an earlier call whose answer was lost
	}
	return cloudError(err, ref)
}

// immutable refuses a change EKS cannot make to an existing node group.
func immutable(ng *ekstypes.Nodegroup, m Nodegroup) error {
	subnets := slices.Clone(ng.Subnets)
	slices.Sort(subnets)
	want := slices.Clone(m.Subnets)
	slices.Sort(want)
	switch {
	case m.LaunchTemplate != nil && ng.LaunchTemplate == nil:
		return immutableErr("spec.awsLaunchTemplate", "none (EKS's own)", m.LaunchTemplate.Name)
	case m.LaunchTemplate == nil && ng.LaunchTemplate != nil:
		return immutableErr("spec.awsLaunchTemplate", aws.ToString(ng.LaunchTemplate.Id), "none")
	case m.InstanceType != "" && !slices.Equal(ng.InstanceTypes, []string{m.InstanceType}):
		return immutableErr("spec.instanceType", strings.Join(ng.InstanceTypes, ","), m.InstanceType)
	case m.AMIType != "" && string(ng.AmiType) != m.AMIType:
		return immutableErr("spec.amiType", string(ng.AmiType), m.AMIType)
	case m.CapacityType != "" && string(ng.CapacityType) != m.CapacityType:
		return immutableErr("spec.capacityType", string(ng.CapacityType), m.CapacityType)
	case m.DiskSize > 0 && aws.ToInt32(ng.DiskSize) != m.DiskSize:
		return immutableErr("spec.diskSize", strconv.Itoa(int(aws.ToInt32(ng.DiskSize))), strconv.Itoa(int(m.DiskSize)))
	case len(want) > 0 && !slices.Equal(subnets, want):
		return immutableErr("spec.subnetIDs", strings.Join(subnets, ","), strings.Join(want, ","))
	}
	return nil
}

func immutableErr(field, have, want string) error {
	return scalegroup.NewInvalid(fmt.Sprintf("%s cannot change on an existing EKS node group (it is %s, the spec says %s): EKS refuses it; create a new pool instead", field, have, want))
}

// update makes the first change the node group needs, if any.
func (s *Nodegroups) update(ctx context.Context, c *sdkClients, cluster string, ref scalegroup.Ref, ng *ekstypes.Nodegroup, spec scalegroup.GroupSpec, m Nodegroup, st Settings, version string) error {
	if in := configUpdate(ng, spec.Capacity, st); in != nil {
		in.ClusterName, in.NodegroupName = aws.String(cluster), aws.String(ref.Name)
		_, err := c.eks.UpdateNodegroupConfig(ctx, in)
		return cloudError(err, ref)
	}
	if version == "" {
		version = aws.ToString(ng.Version)
	}
	tpl, lt, err := s.template(ctx, c, cluster, ref, m, spec.Model.Tags)
	if err != nil {
		return err
	}
	var ltUpdate *ekstypes.LaunchTemplateSpecification
	if lt != nil {
		if have, id := aws.ToString(ng.LaunchTemplate.Id), aws.ToString(lt.Id); have != id {
			return immutableErr("spec.awsLaunchTemplate", "launch template "+have, "launch template "+id+" ("+m.LaunchTemplate.Name+")")
		}
		if aws.ToString(ng.LaunchTemplate.Version) != aws.ToString(lt.Version) {
			ltUpdate = lt
		}
	}
	tgt := target(version, m.ReleaseVersion, tpl)
	if !meetsTarget(tgt, releaseOf(ng)) {
		in := &eks.UpdateNodegroupVersionInput{ClusterName: aws.String(cluster), NodegroupName: aws.String(ref.Name), Force: st.ForceUpdate}
		if ltUpdate != nil {
			// The launch template version first, alone, as CAPA does; the
			// Kubernetes version or release next, if they differ too.
			in.LaunchTemplate = ltUpdate
		} else {
			tv, _, _ := strings.Cut(tgt, "/")
			if next := nextMinor(aws.ToString(ng.Version), tv); next != "" {
				in.Version = aws.String(next)
			}
			if m.ReleaseVersion != "" && (in.Version == nil || *in.Version == tv) {
				in.ReleaseVersion = aws.String(m.ReleaseVersion)
			}
		}
		if u := latestUpdate(ctx, c, cluster, ref); u != nil && u.Status == ekstypes.UpdateStatusFailed && sameVersionUpdate(u, in) &&
			!(st.ForceUpdate && evictionFailed(u)) {
			// With force asked for, an update EKS failed for a blocked drain
			// is asked for again at once, forced.
			if wait := s.retryFailedUpdateAfter() - s.clock.Since(aws.ToTime(u.CreatedAt)); wait > 0 {
				// EKS failed this very update a moment ago: wait rather
				// than fail it again in a loop.
				return &scalegroup.Error{Reason: scalegroup.ReasonTransient, RetryAfter: wait.Round(time.Second),
					Message: failedUpdateMessage(u) + "; mpool asks for it again after " + s.retryFailedUpdateAfter().String() + ", or at once for another spec" + forceHint(u)}
			}
		}
		// The hash first: the instances EKS launches for the update carry it.
		if err := s.tag(ctx, c, ref, ng, map[string]string{TagModelHash: spec.ModelHash, TagModelTarget: tgt}); err != nil {
			return err
		}
		_, err := c.eks.UpdateNodegroupVersion(ctx, in)
		return cloudError(err, ref)
	}
	want := maps.Clone(spec.Model.Tags)
	if want == nil {
		want = map[string]string{}
	}
	want[TagModelHash], want[TagModelTarget] = spec.ModelHash, tgt
	return s.tag(ctx, c, ref, ng, want)
}

// forceHint tells how to force an update EKS failed for a blocked drain.
func forceHint(u *ekstypes.Update) string {
	if !evictionFailed(u) {
		return ""
	}
	return ", or forced (a PodDisruptionBudget blocks a drain) once the pool has the annotation " + AnnotationForceUpdate + `: "true"`
}

// tag writes the tags of want the node group does not have.
func (s *Nodegroups) tag(ctx context.Context, c *sdkClients, ref scalegroup.Ref, ng *ekstypes.Nodegroup, want map[string]string) error {
	diff := map[string]string{}
	for k, v := range want {
		if ng.Tags[k] != v {
			diff[k] = v
		}
	}
	if len(diff) == 0 {
		return nil
	}
	_, err := c.eks.TagResource(ctx, &eks.TagResourceInput{ResourceArn: ng.NodegroupArn, Tags: diff})
	return cloudError(err, ref)
}

// nextMinor is the version a node group of version have updates to on its
// way to want: one minor at a time, as EKS requires; "" when it is there
// (or want is older, which EKS refuses and the update then says).
func nextMinor(have, want string) string {
	if want == "" || have == want {
		return ""
	}
	hm, wm := minorOf(have), minorOf(want)
	if hm < 0 || wm < 0 || wm <= hm+1 {
		return want
	}
	return "1." + strconv.Itoa(hm+1)
}

func minorOf(v string) int {
	major, minor, ok := strings.Cut(v, ".")
	n, err := strconv.Atoi(minor)
	if !ok || major != "1" || err != nil {
		return -1
	}
	return n
}

// minorVersion is EKS's version of a MachinePool's (v1.31.2 → 1.31).
func minorVersion(v string) string {
	v = strings.TrimPrefix(v, "v")
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return v
	}
	return parts[0] + "." + parts[1]
}

// configUpdate is the UpdateNodegroupConfig the node group needs, nil when
// its configuration is the spec's.
func configUpdate(ng *ekstypes.Nodegroup, capacity int32, st Settings) *eks.UpdateNodegroupConfigInput {
	in := &eks.UpdateNodegroupConfigInput{}
	changed := false
	minSize, maxSize, desired := st.scaling(capacity)
	if sc := ng.ScalingConfig; sc == nil || aws.ToInt32(sc.DesiredSize) != desired || aws.ToInt32(sc.MinSize) != minSize || aws.ToInt32(sc.MaxSize) != maxSize {
		in.ScalingConfig = scalingConfig(st, capacity)
		changed = true
	}
	if !maps.Equal(ng.Labels, st.Labels) && !(len(ng.Labels) == 0 && len(st.Labels) == 0) {
		l := &ekstypes.UpdateLabelsPayload{AddOrUpdateLabels: st.Labels}
		for k := range ng.Labels {
			if _, ok := st.Labels[k]; !ok {
				l.RemoveLabels = append(l.RemoveLabels, k)
			}
		}
		slices.Sort(l.RemoveLabels)
		in.Labels, changed = l, true
	}
	have := taintsOf(nil)
	for _, t := range ng.Taints {
		have = append(have, t)
	}
	want := taintsOf(st.Taints)
	if !sameTaints(have, want) {
		t := &ekstypes.UpdateTaintsPayload{AddOrUpdateTaints: want}
		for _, h := range have {
			if !slices.ContainsFunc(want, func(w ekstypes.Taint) bool { return aws.ToString(w.Key) == aws.ToString(h.Key) && w.Effect == h.Effect }) {
				t.RemoveTaints = append(t.RemoveTaints, h)
			}
		}
		in.Taints, changed = t, true
	}
	if uc := updateConfigOf(st); uc != nil {
		if h := ng.UpdateConfig; h == nil || aws.ToInt32(h.MaxUnavailable) != aws.ToInt32(uc.MaxUnavailable) ||
			aws.ToInt32(h.MaxUnavailablePercentage) != aws.ToInt32(uc.MaxUnavailablePercentage) {
			in.UpdateConfig, changed = uc, true
		}
	}
	if !changed {
		return nil
	}
	return in
}

func sameTaints(a, b []ekstypes.Taint) bool {
	key := func(t ekstypes.Taint) string {
		return aws.ToString(t.Key) + "=" + aws.ToString(t.Value) + ":" + string(t.Effect)
	}
	ka, kb := make([]string, 0, len(a)), make([]string, 0, len(b))
	for _, t := range a {
		ka = append(ka, key(t))
	}
	for _, t := range b {
		kb = append(kb, key(t))
	}
	slices.Sort(ka)
	slices.Sort(kb)
	return slices.Equal(ka, kb)
}

func taintsOf(ts []Taint) []ekstypes.Taint {
	out := []ekstypes.Taint{}
	for _, t := range ts {
		out = append(out, ekstypes.Taint{Key: aws.String(t.Key), Value: aws.String(t.Value), Effect: ekstypes.TaintEffect(t.Effect)})
	}
	return out
}

func updateConfigOf(st Settings) *ekstypes.NodegroupUpdateConfig {
	switch {
	case st.MaxUnavailablePercentage > 0:
		return &ekstypes.NodegroupUpdateConfig{MaxUnavailablePercentage: aws.Int32(st.MaxUnavailablePercentage)}
	case st.MaxUnavailable > 0:
		return &ekstypes.NodegroupUpdateConfig{MaxUnavailable: aws.Int32(st.MaxUnavailable)}
	}
	return nil
}

// DeleteInstances implements scalegroup.ScaleGroup. EKS has no call that
// removes chosen nodes of a managed node group and shrinks it; the engine
// asks only for instances a user marked for deletion, which is refused (an
// unhealthy node is replaced instead: ReplaceInstances).
func (s *Nodegroups) DeleteInstances(_ context.Context, ref scalegroup.Ref, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	return scalegroup.NewInvalid(fmt.Sprintf("node group %s: EKS managed node groups do not remove chosen nodes (%s); lower the MachinePool's replicas and EKS picks and drains them", ref, strings.Join(ids, ", ")))
}

// ReplaceInstances implements scalegroup.Replacer. A managed node group
// runs its nodes in an Auto Scaling group of the account
// (DescribeNodegroup's resources.autoScalingGroups): each named instance
// still in service there is terminated with
// TerminateInstanceInAutoScalingGroup, ShouldDecrementDesiredCapacity
// false, and the group launches its replacement from the node group's
// release, the node group's desired size unchanged. EKS itself neither
// cordons nor drains the node: the caller has. IDs the groups do not hold,
// or whose instances are already terminating, are skipped.
func (s *Nodegroups) ReplaceInstances(ctx context.Context, ref scalegroup.Ref, ids []string) error {
	ids = kit.UniqueIDs(ids)
	if len(ids) == 0 {
		return nil
	}
	c, cluster, err := s.resolve(ctx, ref)
	if err != nil {
		return fmt.Errorf("replacing instances %v of node group %s: %w", ids, ref, err)
	}
	ng, err := describe(ctx, c, cluster, ref)
	if err != nil || ng == nil {
		if err != nil {
			return fmt.Errorf("replacing instances %v of node group %s: %w", ids, ref, err)
		}
		return nil
	}
	var names []string
	if r := ng.Resources; r != nil {
		for _, g := range r.AutoScalingGroups {
			names = append(names, aws.ToString(g.Name))
		}
	}
	if len(names) == 0 {
		return scalegroup.NewTransient(fmt.Sprintf("node group %s has no Auto Scaling group yet", ref), nil)
	}
	out, err := c.asg.DescribeAutoScalingGroups(ctx, &autoscaling.DescribeAutoScalingGroupsInput{AutoScalingGroupNames: names})
	if err != nil {
		return fmt.Errorf("reading the Auto Scaling groups %v of node group %s: %w", names, ref, awsprovider.CloudError(err, ref))
	}
	for _, g := range out.AutoScalingGroups {
		for _, in := range g.Instances {
			id := aws.ToString(in.InstanceId)
			if !slices.Contains(ids, id) || leaving(in.LifecycleState) {
				continue
			}
			if _, err := c.asg.TerminateInstanceInAutoScalingGroup(ctx, &autoscaling.TerminateInstanceInAutoScalingGroupInput{
				InstanceId: aws.String(id), ShouldDecrementDesiredCapacity: aws.Bool(false),
			}); err != nil {
				return fmt.Errorf("terminating instance %s in Auto Scaling group %s of node group %s: %w", id, aws.ToString(g.AutoScalingGroupName), ref, awsprovider.CloudError(err, ref))
			}
		}
	}
	return nil
}

// leaving reports whether an Auto Scaling group's instance is being
// terminated or detached.
func leaving(s asgtypes.LifecycleState) bool {
	return strings.HasPrefix(string(s), "Terminat") || strings.HasPrefix(string(s), "Detach")
}

// Delete implements scalegroup.ScaleGroup: DeleteNodegroup; a node group
// already gone (or being deleted) is fine.
func (s *Nodegroups) Delete(ctx context.Context, ref scalegroup.Ref) error {
	c, cluster, err := s.resolve(ctx, ref)
	if err != nil {
		return fmt.Errorf("deleting node group %s: %w", ref, err)
	}
	_, err = c.eks.DeleteNodegroup(ctx, &eks.DeleteNodegroupInput{ClusterName: aws.String(cluster), NodegroupName: aws.String(ref.Name)})
	var nf *ekstypes.ResourceNotFoundException
	if err != nil && !errors.As(err, &nf) {
		return fmt.Errorf("deleting node group %s: %w", ref, cloudError(err, ref))
	}
	// Its launch template goes with it, as CAPA deletes it: EKS launches
	// from its own copy, so nothing the deletion does needs it.
	if err := s.deleteTemplates(ctx, c, cluster, ref); err != nil {
		return fmt.Errorf("deleting node group %s: %w", ref, err)
	}
	return nil
}

// cloudError maps EKS's own error codes, then hands the others to the AWS
// provider's mapping (throttling, credentials, server errors).
func cloudError(err error, ref scalegroup.Ref) error {
	if err == nil {
		return nil
	}
	var ae smithy.APIError
	if errors.As(err, &ae) {
		msg := ae.ErrorCode() + ": " + strings.Join(strings.Fields(ae.ErrorMessage()), " ")
		switch ae.ErrorCode() {
		case "ResourceInUseException":
			// An update already runs (or the node group is busy): wait.
			return scalegroup.NewTransient(msg, nil)
		case "ResourceNotFoundException":
			return scalegroup.NewNotFound(ref.Name)
		case "ResourceLimitExceededException":
			return scalegroup.NewQuotaExceeded(msg + " (EKS allows 30 node groups per cluster and 450 nodes per node group)")
		case "InvalidParameterException", "InvalidRequestException":
			return scalegroup.NewInvalid(msg)
		case "ServerException", "ServiceUnavailableException":
			return scalegroup.NewTransient(msg, nil)
		}
	}
	return awsprovider.CloudError(err, ref)
}

// scalingConfig is the node group's scaling for capacity under st.
func scalingConfig(st Settings, capacity int32) *ekstypes.NodegroupScalingConfig {
	minSize, maxSize, desired := st.scaling(capacity)
	return &ekstypes.NodegroupScalingConfig{MinSize: aws.Int32(minSize), MaxSize: aws.Int32(maxSize), DesiredSize: aws.Int32(desired)}
}
