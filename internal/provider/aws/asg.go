package aws

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	asgtypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/mpool-dev/mpool/internal/provider/kit"
	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// ASGs is scalegroup.ScaleGroup on EC2 Auto Scaling Groups and launch
// templates, through aws-sdk-go-v2. The cloud is the source of truth: the
// ASG's tags carry the model hash (see the package doc). It remembers only
// when it first saw each instance (Auto Scaling does not report launch
// times), and its SDK clients.
type ASGs struct {
	opts    Options
	clock   clock.PassiveClock
	clients *Clients[*sdkClients]

	mu   sync.Mutex
	seen map[string]map[string]time.Time
}

var _ scalegroup.ScaleGroup = (*ASGs)(nil)

// sdkClients are the clients of one region and set of credentials.
type sdkClients struct {
	asg *autoscaling.Client
	ec2 *ec2.Client
}

// New returns the AWS ScaleGroup. opts.Credentials is required. The SDK's
// retries are off: the engine retries, honouring the Retry-After of the
// typed errors, so one logical call is one request.
func New(opts Options) (*ASGs, error) {
	if opts.Credentials == nil {
		return nil, errors.New("aws auto scaling groups: no credentials resolver")
	}
	var lo []func(*config.LoadOptions) error
	if opts.Endpoint != "" {
		lo = append(lo, config.WithBaseEndpoint(opts.Endpoint))
	}
	clients, err := NewClients(opts.Region, opts.HTTPClient, func(cfg aws.Config) *sdkClients {
		return &sdkClients{asg: autoscaling.NewFromConfig(cfg), ec2: ec2.NewFromConfig(cfg)}
	}, lo...)
	if err != nil {
		return nil, fmt.Errorf("aws auto scaling groups: %w", err)
	}
	c := opts.Clock
	if c == nil {
		c = clock.RealClock{}
	}
	return &ASGs{opts: opts, clock: c, clients: clients, seen: map[string]map[string]time.Time{}}, nil
}

// Capabilities implements scalegroup.ScaleGroup: the engine picks every
// victim, drains it and terminates it with a decrement; the ASG is never
// left to pick (cluster-api-provider-aws issue #2023).
func (*ASGs) Capabilities() scalegroup.Capabilities { return scalegroup.Capabilities{} }

// Get implements scalegroup.ScaleGroup: one DescribeAutoScalingGroups (and
// its pages), which lists the instances with their launch-template
// versions and lifecycle states; never a call per instance. Only when the
// group has fewer instances than its capacity and launches none does it
// read the latest scaling activity too, to report why in Group.Message.
func (s *ASGs) Get(ctx context.Context, ref scalegroup.Ref) (*scalegroup.Group, error) {
	c, asg, err := s.observe(ctx, ref)
	if err != nil {
		return nil, fmt.Errorf("getting auto scaling group %s: %w", ref, err)
	}
	if asg == nil {
		s.forget(ref)
		return nil, scalegroup.NewNotFound(ref.Name)
	}
	g := s.group(ref, asg)
	if stalled(g) {
		g.Message = launchFailure(ctx, c, ref)
	}
	return g, nil
}

// stalled reports whether a group has fewer instances than its capacity
// and launches none: AWS says why only in its scaling activities.
func stalled(g *scalegroup.Group) bool {
	return liveCount(g.Instances) < g.Capacity && countState(g.Instances, scalegroup.StateCreating, scalegroup.StateBooting) == 0
}

// launchFailure is AWS's reason for the group's latest failed launch (a
// vCPU quota, an instance type the zone lacks), from its latest scaling
// activities; "" when the latest did not fail or they cannot be read (a
// Get does not fail for them).
func launchFailure(ctx context.Context, c *sdkClients, ref scalegroup.Ref) string {
	res, err := c.asg.DescribeScalingActivities(ctx, &autoscaling.DescribeScalingActivitiesInput{
		AutoScalingGroupName: aws.String(ref.Name), MaxRecords: aws.Int32(1),
	})
	if err != nil {
		log.FromContext(ctx).V(1).Info("Reading the scaling activities failed", "group", ref.String(), "error", cloudError(err, ref).Error())
		return ""
	}
	if len(res.Activities) == 0 || res.Activities[0].StatusCode != asgtypes.ScalingActivityStatusCodeFailed {
		return ""
	}
	msg := kit.OneLine(aws.ToString(res.Activities[0].StatusMessage))
	if msg == "" {
		msg = kit.OneLine(aws.ToString(res.Activities[0].Description))
	}
	return "launching instances failed: " + msg
}

// Apply implements scalegroup.ScaleGroup. It reads the ASG, then writes
// only what differs:
//
//   - no ASG: the launch template (its first version holds the model),
//     then the ASG at that version;
//   - a new model, or more capacity while the user data differs from what
//     the ASG's version carries: one new launch-template version (reusing
//     the template's latest when it already holds this model and user
//     data: a manager stopped between creating it and updating the ASG),
//     the ASG's tags, then the ASG;
//   - otherwise the ASG's tags, capacity, bounds and in-place settings
//     when they differ: nothing at all when they match.
func (s *ASGs) Apply(ctx context.Context, ref scalegroup.Ref, spec scalegroup.GroupSpec) (*scalegroup.Group, error) {
	want, err := desiredOf(spec)
	if err != nil {
		return nil, fmt.Errorf("applying auto scaling group %s: %w", ref, err)
	}
	c, asg, err := s.observe(ctx, ref)
	if err != nil {
		return nil, fmt.Errorf("applying auto scaling group %s: %w", ref, err)
	}
	if asg == nil {
		err = s.create(ctx, c, ref, spec, want)
		if err != nil {
			return nil, fmt.Errorf("creating auto scaling group %s: %w", ref, err)
		}
		return &scalegroup.Group{Name: ref.Name, Capacity: spec.Capacity, ModelHash: spec.ModelHash, Operation: scaleOp(spec.Capacity, 0)}, nil
	}
	g, err := s.update(ctx, c, ref, spec, want, asg)
	if err != nil {
		return nil, fmt.Errorf("updating auto scaling group %s: %w", ref, err)
	}
	return g, nil
}

// create creates the launch template and the ASG at its version.
func (s *ASGs) create(ctx context.Context, c *sdkClients, ref scalegroup.Ref, spec scalegroup.GroupSpec, want desired) error {
	lt, err := s.createTemplate(ctx, c, ref, spec, want)
	if err != nil {
		return err
	}
	input := createGroupInput(ref, spec, want, lt)
	withHooks(input, want.settings.LifecycleHooks)
	withMixed(input, want, lt)
	log.FromContext(ctx).V(1).Info("Creating auto scaling group", "group", ref.String(), "capacity", spec.Capacity,
		"modelHash", spec.ModelHash, "launchTemplate", lt.id, "version", lt.version)
	if _, err := c.asg.CreateAutoScalingGroup(ctx, input); err != nil {
		return cloudError(err, ref)
	}
	if len(want.settings.SuspendedProcesses) > 0 {
		if _, err := c.asg.SuspendProcesses(ctx, &autoscaling.SuspendProcessesInput{
			AutoScalingGroupName: aws.String(ref.Name), ScalingProcesses: want.settings.SuspendedProcesses,
		}); err != nil {
			return cloudError(err, ref)
		}
	}
	return nil
}

// createTemplate creates the launch template named like the ASG, with the
// model as its first version. A template left by an earlier attempt (the
// ASG's creation failed or the manager stopped) is reused: its latest
// version when that holds this model and user data, else a new version.
func (s *ASGs) createTemplate(ctx context.Context, c *sdkClients, ref scalegroup.Ref, spec scalegroup.GroupSpec, want desired) (templateVersion, error) {
	data, err := s.templateData(ctx, c, ref, spec, want)
	if err != nil {
		return templateVersion{}, err
	}
	res, err := c.ec2.CreateLaunchTemplate(ctx, &ec2.CreateLaunchTemplateInput{
		LaunchTemplateName: aws.String(ref.Name),
		LaunchTemplateData: data,
		VersionDescription: aws.String(versionInfo{model: spec.ModelHash, since: 1, userData: want.userData}.String()),
		TagSpecifications: []ec2types.TagSpecification{{
			ResourceType: ec2types.ResourceTypeLaunchTemplate,
			Tags:         EC2Tags(spec.Model.Tags),
		}},
	})
	switch {
	case err == nil && res.LaunchTemplate != nil:
		return templateVersion{id: aws.ToString(res.LaunchTemplate.LaunchTemplateId), version: aws.ToInt64(res.LaunchTemplate.LatestVersionNumber),
			info: versionInfo{model: spec.ModelHash, since: 1, userData: want.userData}}, nil
	case err == nil:
		return templateVersion{}, scalegroup.NewTransient("CreateLaunchTemplate answered no launch template", nil)
	case !isTemplateExists(err):
		return templateVersion{}, cloudError(err, ref)
	}
	latest, err := latestVersion(ctx, c, ec2.DescribeLaunchTemplateVersionsInput{LaunchTemplateName: aws.String(ref.Name)})
	if err != nil {
		return templateVersion{}, cloudError(err, ref)
	}
	if latest.info.model == spec.ModelHash && latest.info.userData == want.userData {
		return latest, nil
	}
	return createVersion(ctx, c, ref, latest.id, "", data, versionInfo{model: spec.ModelHash, userData: want.userData})
}

// update brings an existing ASG to the spec.
func (s *ASGs) update(ctx context.Context, c *sdkClients, ref scalegroup.Ref, spec scalegroup.GroupSpec, want desired, asg *asgtypes.AutoScalingGroup) (*scalegroup.Group, error) {
	if isDeleting(asg) {
		return nil, scalegroup.NewTransient("the auto scaling group is being deleted", nil)
	}
	cur, err := observedState(asg)
	if err != nil {
		return nil, err
	}
	logger := log.FromContext(ctx).WithValues("group", ref.String())
	target := cur.version
	capacity := aws.ToInt32(asg.DesiredCapacity)
	increase := spec.Capacity > capacity
	modelCurrent := cur.version.info.model == spec.ModelHash && cur.version.info.since > 0 && cur.version.version >= cur.version.info.since
	dataCurrent := cur.version.info.userData == want.userData
	created := false
	if !modelCurrent || (increase && !dataCurrent) {
		latest, err := latestVersion(ctx, c, ec2.DescribeLaunchTemplateVersionsInput{LaunchTemplateId: aws.String(cur.version.id)})
		switch {
		case isTemplateNotFound(err):
			// Someone deleted the ASG's template: a new one, named like the
			// ASG, with the model as its first version.
			logger.Info("The auto scaling group's launch template is gone, creating it again", "launchTemplate", cur.version.id)
			target, err = s.createTemplate(ctx, c, ref, spec, want)
		case err != nil:
			return nil, cloudError(err, ref)
		case latest.info.model == spec.ModelHash && (latest.info.userData == want.userData || !increase) && latest.info.since > 0:
			// A version of this model the ASG does not use yet: written
			// by a manager that stopped before updating the ASG.
			logger.V(1).Info("Reusing launch template version", "version", latest.version, "modelHash", spec.ModelHash)
			target = latest
		case latest.info.model == spec.ModelHash && latest.info.since > 0:
			target, err = createVersion(ctx, c, ref, latest.id, strconv.FormatInt(latest.version, 10), userDataOnly(spec),
				versionInfo{model: spec.ModelHash, since: latest.info.since, userData: want.userData})
			created = true
		case modelCurrent:
			// More instances of the same model, with the current user
			// data (a rotated bootstrap token): a version like the ASG's
			// but for its user data.
			target, err = createVersion(ctx, c, ref, cur.version.id, strconv.FormatInt(cur.version.version, 10), userDataOnly(spec),
				versionInfo{model: spec.ModelHash, since: cur.version.info.since, userData: want.userData})
			created = true
		default:
			data, derr := s.templateData(ctx, c, ref, spec, want)
			if derr != nil {
				return nil, derr
			}
			target, err = createVersion(ctx, c, ref, cur.version.id, "", data, versionInfo{model: spec.ModelHash, userData: want.userData})
			created = true
		}
		if err != nil {
			return nil, err
		}
	}

	// The hooks before any capacity change: new instances wait on them.
	if err := s.applyHooks(ctx, c, ref, asg, want.settings.LifecycleHooks); err != nil {
		return nil, err
	}
	// Tags removed from the pool go first: the record of the keys mpool
	// manages lists them until they are gone.
	if err := s.removeTags(ctx, c, ref, asg, desiredTags(spec, target)); err != nil {
		return nil, err
	}
	// The tags first: should the ASG's update fail, instances launched
	// meanwhile from its older version still read as older than the
	// model's first version.
	if tags := changedTags(asg, ref.Name, desiredTags(spec, target)); len(tags) > 0 {
		logger.V(1).Info("Tagging auto scaling group", "tags", len(tags), "modelHash", spec.ModelHash)
		if _, err := c.asg.CreateOrUpdateTags(ctx, &autoscaling.CreateOrUpdateTagsInput{Tags: tags}); err != nil {
			return nil, cloudError(err, ref)
		}
	}
	if in := updateGroupInput(ref, asg, spec, want, target); in != nil {
		logger.V(1).Info("Updating auto scaling group", "capacity", spec.Capacity, "modelHash", spec.ModelHash, "version", target.version)
		if _, err := c.asg.UpdateAutoScalingGroup(ctx, in); err != nil {
			return nil, cloudError(err, ref)
		}
	}
	if err := s.applyProcesses(ctx, c, ref, asg, want.settings.SuspendedProcesses); err != nil {
		return nil, err
	}
	if created {
		s.prune(ctx, c, ref, asg, target)
	}

	g := s.group(ref, asg)
	g.Capacity, g.ModelHash, g.Template = spec.Capacity, spec.ModelHash, target.ref()
	if g.Operation == nil {
		g.Operation = scaleOp(spec.Capacity, liveCount(g.Instances))
	}
	return g, nil
}

// applyProcesses suspends and resumes the ASG's processes to match want.
func (s *ASGs) applyProcesses(ctx context.Context, c *sdkClients, ref scalegroup.Ref, asg *asgtypes.AutoScalingGroup, want []string) error {
	var have []string
	for _, p := range asg.SuspendedProcesses {
		have = append(have, aws.ToString(p.ProcessName))
	}
	var suspend, resume []string
	for _, p := range want {
		if !slices.Contains(have, p) {
			suspend = append(suspend, p)
		}
	}
	for _, p := range have {
		if !slices.Contains(want, p) {
			resume = append(resume, p)
		}
	}
	if len(suspend) > 0 {
		if _, err := c.asg.SuspendProcesses(ctx, &autoscaling.SuspendProcessesInput{AutoScalingGroupName: aws.String(ref.Name), ScalingProcesses: suspend}); err != nil {
			return cloudError(err, ref)
		}
	}
	if len(resume) > 0 {
		if _, err := c.asg.ResumeProcesses(ctx, &autoscaling.ResumeProcessesInput{AutoScalingGroupName: aws.String(ref.Name), ScalingProcesses: resume}); err != nil {
			return cloudError(err, ref)
		}
	}
	return nil
}

// DeleteInstances implements scalegroup.ScaleGroup with
// TerminateInstanceInAutoScalingGroup, decrementing the desired capacity,
// one call per instance (AWS has no batch). It reads the ASG first: IDs it
// does not hold, or whose instances are already terminating, are skipped,
// so the capacity is never lowered twice. When the decrement would go
// below the ASG's MinSize, MinSize is lowered first (Apply restores it).
func (s *ASGs) DeleteInstances(ctx context.Context, ref scalegroup.Ref, ids []string) error {
	ids = kit.UniqueIDs(ids)
	if len(ids) == 0 {
		return nil
	}
	c, asg, err := s.observe(ctx, ref)
	if err != nil {
		return fmt.Errorf("deleting instances %v of auto scaling group %s: %w", ids, ref, err)
	}
	if asg == nil {
		return nil
	}
	var todo []string
	for _, in := range asg.Instances {
		id := aws.ToString(in.InstanceId)
		if slices.Contains(ids, id) && !leaving(in.LifecycleState) {
			todo = append(todo, id)
		}
	}
	if len(todo) == 0 {
		return nil
	}
	desiredCap, minSize := aws.ToInt32(asg.DesiredCapacity), aws.ToInt32(asg.MinSize)
	if after := max(desiredCap-int32(len(todo)), 0); after < minSize {
		if _, err := c.asg.UpdateAutoScalingGroup(ctx, &autoscaling.UpdateAutoScalingGroupInput{
			AutoScalingGroupName: aws.String(ref.Name), MinSize: aws.Int32(after),
		}); err != nil {
			return fmt.Errorf("lowering the minimum size of auto scaling group %s to %d: %w", ref, after, cloudError(err, ref))
		}
	}
	log.FromContext(ctx).V(1).Info("Terminating auto scaling group instances", "group", ref.String(), "instances", todo)
	var errs []error
	for _, id := range todo {
		_, err := c.asg.TerminateInstanceInAutoScalingGroup(ctx, &autoscaling.TerminateInstanceInAutoScalingGroupInput{
			InstanceId: aws.String(id), ShouldDecrementDesiredCapacity: aws.Bool(true),
		})
		if err != nil && !isGroupNotFound(err) {
			errs = append(errs, fmt.Errorf("terminating instance %s: %w", id, cloudError(err, ref)))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("deleting instances of auto scaling group %s: %w", ref, err)
	}
	return nil
}

// Delete implements scalegroup.ScaleGroup: it deletes the ASG with its
// instances (ForceDelete) and its launch template, so that nothing is
// left; either already gone is success. It returns without waiting: Get
// reports the ASG with a Delete operation until AWS has removed it.
func (s *ASGs) Delete(ctx context.Context, ref scalegroup.Ref) error {
	c, asg, err := s.observe(ctx, ref)
	if err != nil {
		return fmt.Errorf("deleting auto scaling group %s: %w", ref, err)
	}
	if asg != nil && !isDeleting(asg) {
		log.FromContext(ctx).V(1).Info("Deleting auto scaling group", "group", ref.String())
		_, err := c.asg.DeleteAutoScalingGroup(ctx, &autoscaling.DeleteAutoScalingGroupInput{
			AutoScalingGroupName: aws.String(ref.Name), ForceDelete: aws.Bool(true),
		})
		if err != nil && !isGroupNotFound(err) {
			return fmt.Errorf("deleting auto scaling group %s: %w", ref, cloudError(err, ref))
		}
	}
	if asg == nil {
		s.forget(ref)
	}
	_, err = c.ec2.DeleteLaunchTemplate(ctx, &ec2.DeleteLaunchTemplateInput{LaunchTemplateName: aws.String(ref.Name)})
	if err != nil && !isTemplateNotFound(err) {
		return fmt.Errorf("deleting launch template %s: %w", ref, cloudError(err, ref))
	}
	return nil
}

// nameRE is the rule for names mpool gives an ASG and its launch template
// (a launch template's, the stricter).
var nameRE = regexp.MustCompile(`^[a-zA-Z0-9().\-/_]{3,128}$`)

// regionRE is the shape of an AWS region.
var regionRE = regexp.MustCompile(`^[a-z]{2}(-[a-z]+)+-[0-9]+$`)

// resolve checks a Ref and returns the clients of its region, reached with
// its credentials.
// observe reads what a call starts from: the clients of ref's region and
// credentials, and its group as Auto Scaling describes it (nil when it
// does not exist).
func (s *ASGs) observe(ctx context.Context, ref scalegroup.Ref) (*sdkClients, *asgtypes.AutoScalingGroup, error) {
	c, err := s.resolve(ctx, ref)
	if err != nil {
		return nil, nil, err
	}
	asg, err := describeGroup(ctx, c, ref)
	return c, asg, err
}

func (s *ASGs) resolve(ctx context.Context, ref scalegroup.Ref) (*sdkClients, error) {
	if !nameRE.MatchString(ref.Name) {
		return nil, scalegroup.NewInvalid(fmt.Sprintf("%q is not a valid auto scaling group and launch template name: 3 to 128 letters, digits and ().-/_", ref.Name))
	}
	region := ref.Scope
	if region == "" {
		region = s.opts.Region
	}
	if !regionRE.MatchString(region) {
		return nil, scalegroup.NewInvalid(fmt.Sprintf("scope %q of auto scaling group %s is not an AWS region (set the AWSCluster's spec.region)", region, ref.Name))
	}
	creds, err := kit.ResolveCredentials(ctx, ref, credentialsName(ref), s.opts.Credentials.CredentialsProvider)
	if err != nil {
		return nil, err
	}
	return s.clients.For(region, creds), nil
}

// describeGroup reads the ASG named by ref, nil when there is none.
func describeGroup(ctx context.Context, c *sdkClients, ref scalegroup.Ref) (*asgtypes.AutoScalingGroup, error) {
	p := autoscaling.NewDescribeAutoScalingGroupsPaginator(c.asg, &autoscaling.DescribeAutoScalingGroupsInput{
		AutoScalingGroupNames: []string{ref.Name},
	})
	var found *asgtypes.AutoScalingGroup
	err := EachPage(ctx, p.HasMorePages, p.NextPage, func(page *autoscaling.DescribeAutoScalingGroupsOutput) {
		for i := range page.AutoScalingGroups {
			g := &page.AutoScalingGroups[i]
			if aws.ToString(g.AutoScalingGroupName) != ref.Name {
				continue
			}
			if found == nil {
				found = g
			} else {
				// Pages of one group's instances: keep them all.
				found.Instances = append(found.Instances, g.Instances...)
			}
		}
	})
	if err != nil {
		return nil, cloudError(err, ref)
	}
	return found, nil
}

// latestVersion reads a launch template's latest version.
func latestVersion(ctx context.Context, c *sdkClients, in ec2.DescribeLaunchTemplateVersionsInput) (templateVersion, error) {
	in.Versions = []string{"$Latest"}
	res, err := c.ec2.DescribeLaunchTemplateVersions(ctx, &in)
	if err != nil {
		return templateVersion{}, err
	}
	if len(res.LaunchTemplateVersions) == 0 {
		return templateVersion{}, scalegroup.NewTransient("DescribeLaunchTemplateVersions answered no $Latest version", nil)
	}
	v := res.LaunchTemplateVersions[0]
	out := templateVersion{id: aws.ToString(v.LaunchTemplateId), version: aws.ToInt64(v.VersionNumber),
		info: parseVersionInfo(aws.ToString(v.VersionDescription))}
	if out.info.model != "" && out.info.since == 0 {
		out.info.since = out.version // the first version of its model
	}
	return out, nil
}

// createVersion creates a launch template version: from data, or, with a
// source version, from the source with data's fields replaced. An info
// without since starts a model: its since is the new version.
func createVersion(ctx context.Context, c *sdkClients, ref scalegroup.Ref, id, source string, data *ec2types.RequestLaunchTemplateData, info versionInfo) (templateVersion, error) {
	in := &ec2.CreateLaunchTemplateVersionInput{
		LaunchTemplateId:   aws.String(id),
		LaunchTemplateData: data,
		VersionDescription: aws.String(info.String()),
	}
	if source != "" {
		in.SourceVersion = aws.String(source)
	}
	log.FromContext(ctx).V(1).Info("Creating launch template version", "group", ref.String(), "launchTemplate", id, "source", source, "modelHash", info.model)
	res, err := c.ec2.CreateLaunchTemplateVersion(ctx, in)
	if err != nil {
		return templateVersion{}, cloudError(err, ref)
	}
	if res.LaunchTemplateVersion == nil {
		return templateVersion{}, scalegroup.NewTransient("CreateLaunchTemplateVersion answered no version", nil)
	}
	v := templateVersion{id: id, version: aws.ToInt64(res.LaunchTemplateVersion.VersionNumber), info: info}
	if v.info.since == 0 {
		// The first version of a model; its description could not say its
		// own number, the ASG's tag does.
		v.info.since = v.version
	}
	return v, nil
}

// keepLatestVersions is how many of a template's latest versions pruning
// keeps, besides those in use.
const keepLatestVersions = 3

// prune deletes the launch template's versions older than every version in
// use (by the ASG's instances, the ASG and the current model's first
// version) and than the latest few, except the default version, so that a
// long-lived pool never nears AWS's 10,000 versions per template. It runs
// after a new version is created; failures are logged, not returned.
func (s *ASGs) prune(ctx context.Context, c *sdkClients, ref scalegroup.Ref, asg *asgtypes.AutoScalingGroup, target templateVersion) {
	cutoff := min(target.version-keepLatestVersions+1, target.info.since)
	for _, in := range asg.Instances {
		if in.LaunchTemplate == nil {
			continue
		}
		if v, err := strconv.ParseInt(aws.ToString(in.LaunchTemplate.Version), 10, 64); err == nil {
			cutoff = min(cutoff, v)
		}
	}
	if cur, err := observedState(asg); err == nil {
		cutoff = min(cutoff, cur.version.version)
	}
	if cutoff <= 1 {
		return
	}
	logger := log.FromContext(ctx).WithValues("group", ref.String(), "launchTemplate", target.id)
	p := ec2.NewDescribeLaunchTemplateVersionsPaginator(c.ec2, &ec2.DescribeLaunchTemplateVersionsInput{
		LaunchTemplateId: aws.String(target.id), MaxVersion: aws.String(strconv.FormatInt(cutoff-1, 10)),
	})
	var old []string
	if err := EachPage(ctx, p.HasMorePages, p.NextPage, func(page *ec2.DescribeLaunchTemplateVersionsOutput) {
		for _, v := range page.LaunchTemplateVersions {
			if n := aws.ToInt64(v.VersionNumber); n < cutoff && !aws.ToBool(v.DefaultVersion) {
				old = append(old, strconv.FormatInt(n, 10))
			}
		}
	}); err != nil {
		logger.V(1).Info("Listing old launch template versions failed", "error", cloudError(err, ref).Error())
		return
	}
	for chunk := range slices.Chunk(old, 200) {
		if _, err := c.ec2.DeleteLaunchTemplateVersions(ctx, &ec2.DeleteLaunchTemplateVersionsInput{
			LaunchTemplateId: aws.String(target.id), Versions: chunk,
		}); err != nil {
			logger.V(1).Info("Deleting old launch template versions failed", "error", cloudError(err, ref).Error())
			return
		}
	}
	if len(old) > 0 {
		logger.V(1).Info("Deleted old launch template versions", "count", len(old), "below", cutoff)
	}
}
