package aws

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/provider/contract"
	"github.com/mpool-dev/mpool/internal/provider/kit"
	"github.com/mpool-dev/mpool/internal/rollout"
	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// ProviderName labels the AWS provider in metrics, events and logs.
const ProviderName = "aws"

// maxGroupName is the longest name mpool derives for an ASG and its launch
// template: a launch template name's limit (128 of [a-zA-Z0-9().-/_]; an
// ASG's is 255). contract.GroupName yields [a-z0-9-].
const maxGroupName = 128

// Tags mpool (like CAPA) puts on an Auto Scaling Group and, propagated at
// launch, on its instances.
const (
	// TagClusterPrefix + the cluster's name, value "owned": the cluster
	// owns the resource (CAPA's owned-cluster tag).
	TagClusterPrefix = "sigs.k8s.io/cluster-api-provider-aws/cluster/"
	// TagRole is the resource's role in the cluster ("node").
	TagRole = "sigs.k8s.io/cluster-api-provider-aws/role"
	// TagKubernetesClusterPrefix + the cluster's name, value "owned": the
	// AWS cloud provider's cluster tag.
	TagKubernetesClusterPrefix = "kubernetes.io/cluster/"
	// TagName is the instances' Name (the pool's name, as CAPA's).
	TagName = "Name"
)

// CAPA's defaults for looking an AMI up by Kubernetes version, as in
// cluster-api-provider-aws's pkg/cloud/services/ec2/ami.go: CAPA publishes
// its reference images from the Kubernetes project's account
// (DefaultAMIOwner) since it lost access to the VMware account
// (LegacyAMIOwner) that published the older ones. Without an
// imageLookupOrg mpool looks in both (DefaultAMIOwners) and takes the
// newest image.
const (
	DefaultAMIOwner  = "819546954734"
	LegacyAMIOwner   = "258751437250"
	DefaultAMIOwners = DefaultAMIOwner + "," + LegacyAMIOwner
	DefaultAMIFormat = "capa-ami-{{.BaseOS}}-?{{.K8sVersion}}-*"
	DefaultAMIBaseOS = "ubuntu-24.04"
)

// AWS's instance refresh defaults, which the strategy follows.
const (
	defaultMinHealthyPercentage = 90
	defaultMaxHealthyPercentage = 100
)

// Adapter maps AWSMachinePool and AWSMachinePoolMachine onto the infrapool
// engine; their Auto Scaling Groups are placed by the AWSCluster.
type Adapter struct {
	kit.Objects[infrav1.AWSMachinePool, infrav1.AWSMachinePoolMachine, infrav1.AWSMachinePoolMachineList, infrav1.AWSCluster]
}

var _ contract.Adapter = Adapter{}

// Kinds implements contract.Adapter.
func (a Adapter) Kinds() contract.Kinds {
	return a.Named(contract.Kinds{Provider: ProviderName, PoolFinalizer: infrav1.AWSMachinePoolFinalizer, InstanceFinalizer: infrav1.AWSMachinePoolMachineFinalizer})
}

// GroupRef implements contract.Adapter: the ASG lives in the AWSCluster's
// region, reached with its identity: an AWSClusterStaticIdentity, or the
// manager's own credentials for none or AWSClusterControllerIdentity.
func (a Adapter) GroupRef(p contract.Pool, infra client.Object) (scalegroup.Ref, error) {
	pool := p.(*infrav1.AWSMachinePool)
	ac, err := a.InfraCluster(infra)
	if err != nil {
		return scalegroup.Ref{}, err
	}
	if ac.Spec.Region == "" {
		return scalegroup.Ref{}, fmt.Errorf("AWSCluster %s has no spec.region: set the region the Auto Scaling Group is created in", ac.Name)
	}
	creds, err := CredentialsOf(ac.Spec.IdentityRef, "AWSCluster "+ac.Name)
	if err != nil {
		return scalegroup.Ref{}, err
	}
	return scalegroup.Ref{
		Name:        GroupName(pool.Namespace, pool.Name),
		Scope:       ac.Spec.Region,
		Namespace:   pool.Namespace,
		Credentials: creds,
	}, nil
}

// CredentialsOf is the Ref.Credentials of an AWS infrastructure object's
// spec.identityRef id (owner names the object in errors, e.g. "AWSCluster
// capa"): an AWSClusterStaticIdentity's, or "" (the manager's own
// credentials, as CAPA's controller identity) for none or an
// AWSClusterControllerIdentity.
func CredentialsOf(id *infrav1.AWSIdentityReference, owner string) (string, error) {
	switch {
	case id == nil, id.Kind == "AWSClusterControllerIdentity", id.Kind == "":
		return "", nil
	case id.Kind == infrav1.AWSClusterStaticIdentityKind:
		return CredentialsPrefix + id.Name, nil
	case id.Kind == "AWSClusterRoleIdentity":
		return "", fmt.Errorf("%s's spec.identityRef is an AWSClusterRoleIdentity, which mpool does not support yet: use an AWSClusterStaticIdentity, or AWSClusterControllerIdentity for the manager's own credentials", owner)
	default:
		return "", fmt.Errorf("%s's spec.identityRef is a %s; mpool reads AWSClusterStaticIdentity and AWSClusterControllerIdentity", owner, id.Kind)
	}
}

// GroupName is the Auto Scaling Group (and launch template) of the
// AWSMachinePool namespace/name (see contract.GroupName), within the
// launch template name's 128 characters.
func GroupName(namespace, name string) string {
	return contract.GroupName(namespace, name, maxGroupName)
}

// Desired implements contract.Adapter.
func (a Adapter) Desired(p contract.Pool, owner contract.Owner) (contract.Desired, error) {
	pool := p.(*infrav1.AWSMachinePool)
	ac, err := a.InfraCluster(owner.InfraCluster)
	if err != nil {
		return contract.Desired{}, err
	}
	spec := pool.Spec
	t := spec.AWSLaunchTemplate
	if t.InstanceType == "" {
		return contract.Desired{}, fmt.Errorf("spec.awsLaunchTemplate.instanceType is required: set the EC2 instance type (for example m5.large)")
	}
	if spec.MixedInstancesPolicy != nil && t.SpotMarketOptions != nil {
		// AWS refuses a launch template requesting Spot in a mixed
		// instances policy: its distribution decides.
		return contract.Desired{}, fmt.Errorf("spec.awsLaunchTemplate.spotMarketOptions cannot be combined with spec.mixedInstancesPolicy: remove it and set the Spot share in spec.mixedInstancesPolicy.instancesDistribution")
	}
	if owner.MachinePool != nil {
		replicas := ptr.Deref(owner.MachinePool.Spec.Replicas, 1)
		if replicas < spec.MinSize || replicas > spec.MaxSize {
			return contract.Desired{}, fmt.Errorf("the MachinePool's replicas %d are outside the AWSMachinePool's [minSize %d, maxSize %d]: change the MachinePool's spec.replicas, or spec.minSize / spec.maxSize",
				replicas, spec.MinSize, spec.MaxSize)
		}
	}
	ami, err := amiOf(t, ac, owner.Version)
	if err != nil {
		return contract.Desired{}, err
	}
	lt := LaunchTemplate{
		AMI:                   ami,
		IAMInstanceProfile:    t.IamInstanceProfile,
		RootVolume:            VolumeOf(t.RootVolume),
		CapacityReservationID: ptr.Deref(t.CapacityReservationID, ""),
	}
	for i := range t.NonRootVolumes {
		lt.NonRootVolumes = append(lt.NonRootVolumes, *VolumeOf(&t.NonRootVolumes[i]))
	}
	switch {
	case t.SSHKeyName != nil:
		lt.SSHKeyName = *t.SSHKeyName
	case ac.Spec.SSHKeyName != nil:
		lt.SSHKeyName = *ac.Spec.SSHKeyName
	}
	for i, sg := range t.AdditionalSecurityGroups {
		id, err := resourceID(sg, fmt.Sprintf("spec.awsLaunchTemplate.additionalSecurityGroups[%d]", i))
		if err != nil {
			return contract.Desired{}, err
		}
		lt.SecurityGroupIDs = append(lt.SecurityGroupIDs, id)
	}
	if s := t.SpotMarketOptions; s != nil {
		lt.Spot = &Spot{MaxPrice: ptr.Deref(s.MaxPrice, "")}
	}
	lt.Metadata, lt.PrivateDNSName = MetadataOf(t.InstanceMetadataOptions), PrivateDNSNameOf(t.PrivateDNSName)

	zones := slices.Clone(spec.AvailabilityZones)
	if len(zones) == 0 && owner.MachinePool != nil {
		zones = slices.Clone(owner.MachinePool.Spec.FailureDomains)
	}
	subnets, zones, err := subnetsOf(pool, ac, zones)
	if err != nil {
		return contract.Desired{}, err
	}
	settings := GroupSettings{
		MinSize:                      spec.MinSize,
		MaxSize:                      spec.MaxSize,
		SubnetIDs:                    subnets,
		CapacityRebalance:            spec.CapacityRebalance,
		DefaultCooldownSeconds:       int32(durationOr(spec.DefaultCoolDown, 300*time.Second).Seconds()),
		DefaultInstanceWarmupSeconds: int32(durationOr(spec.DefaultInstanceWarmup, 300*time.Second).Seconds()),
		SuspendedProcesses:           suspendedProcesses(spec.SuspendProcesses),
		LifecycleHooks:               LifecycleHooksOf(spec.LifecycleHooks),
		MixedInstances:               mixedInstancesOf(spec.MixedInstancesPolicy),
	}
	m := scalegroup.Model{
		InstanceType: t.InstanceType,
		Image:        ami.String(),
		Zones:        zones,
		Version:      owner.Version,
		CustomData:   owner.BootstrapData,
		Tags:         tags(pool, ac, owner),
		Provider:     lt,
		InPlace:      settings,
	}
	view, _ := Adapter{}.ReadPool(pool)
	return contract.Desired{Model: m, Strategy: view.Rollout.Strategy, SkipModelReconciliation: view.Rollout.SkipModelReconciliation}, nil
}

// Strategy maps an AWSMachinePool's refreshPreferences onto the engine's
// rolling update budgets with AWS instance refresh's meaning, the engine
// replacing instances as a refresh would:
//
//   - minHealthyPercentage (AWS's default 90) of the desired capacity stays
//     in service: maxUnavailable = 100% − minHealthyPercentage, of the
//     desired replicas rounded down;
//   - maxHealthyPercentage (AWS's default 100, at most 200) bounds the
//     capacity during the replacement: maxSurge = maxHealthyPercentage −
//     100%, rounded up;
//   - when both round to zero, one instance is replaced at a time (taken
//     down first), as AWS does with minHealthyPercentage 100 and
//     maxHealthyPercentage 100.
//
// refreshPreferences.disable keeps out-of-date instances instead
// (skipModelReconciliation): the engine's SkipMachinePoolModelReconciliation
// behaviour for this pool only.
// instanceWarmup becomes MinReadySeconds when the MachinePool sets none
// (see Desired).
func Strategy(rp *infrav1.RefreshPreferences) rollout.Strategy {
	minHealthy, maxHealthy := int64(defaultMinHealthyPercentage), int64(defaultMaxHealthyPercentage)
	if rp != nil {
		minHealthy = ptr.Deref(rp.MinHealthyPercentage, minHealthy)
		maxHealthy = ptr.Deref(rp.MaxHealthyPercentage, maxHealthy)
	}
	minHealthy = min(max(minHealthy, 0), 100)
	maxHealthy = min(max(maxHealthy, 100), 200)
	unavailable, surge := 100-minHealthy, maxHealthy-100
	if unavailable == 0 && surge == 0 {
		return rollout.Strategy{MaxSurge: ptr.To(intstr.FromInt32(0)), MaxUnavailable: ptr.To(intstr.FromInt32(1))}
	}
	return rollout.Strategy{
		MaxSurge:       ptr.To(intstr.FromString(strconv.FormatInt(surge, 10) + "%")),
		MaxUnavailable: ptr.To(intstr.FromString(strconv.FormatInt(unavailable, 10) + "%")),
	}
}

// amiOf is the launch template's image: its ID, or CAPA's lookup by the
// MachinePool's Kubernetes version with the pool's, else the AWSCluster's,
// else CAPA's default owner, name format and base OS.
func amiOf(t infrav1.AWSLaunchTemplate, ac *infrav1.AWSCluster, k8sVersion string) (AMI, error) {
	if id := ptr.Deref(t.AMI.ID, ""); id != "" {
		return AMI{ID: id}, nil
	}
	if t.AMI.EKSOptimizedLookupType != nil {
		return AMI{}, fmt.Errorf("spec.awsLaunchTemplate.ami.eksLookupType is for EKS clusters, which mpool's AWSMachinePools do not support yet: set spec.awsLaunchTemplate.ami.id")
	}
	if k8sVersion == "" {
		return AMI{}, fmt.Errorf("spec.awsLaunchTemplate.ami.id is unset and the MachinePool has no spec.template.spec.version to look an AMI up by: set one of them")
	}
	first := func(vals ...string) string {
		for _, v := range vals {
			if v != "" {
				return v
			}
		}
		return ""
	}
	return AMI{
		Owner:  first(t.ImageLookupOrg, ac.Spec.ImageLookupOrg, DefaultAMIOwners),
		Format: first(t.ImageLookupFormat, ac.Spec.ImageLookupFormat, DefaultAMIFormat),
		BaseOS: first(t.ImageLookupBaseOS, ac.Spec.ImageLookupBaseOS, DefaultAMIBaseOS),
	}, nil
}

// resourceID is the ID an AWSResourceReference names. Filters would need a
// lookup, which an adapter does not do.
func resourceID(r infrav1.AWSResourceReference, field string) (string, error) {
	if id := ptr.Deref(r.ID, ""); id != "" {
		return id, nil
	}
	return "", fmt.Errorf("%s names no id: mpool does not resolve filters or ARNs yet, set the resource's ID", field)
}

// subnetsOf returns the ASG's subnets and zones: the pool's subnets by ID
// (with the zones given), else the AWSCluster's subnets of the zones (all
// zones when none is given) of the pool's availabilityZoneSubnetType
// (default private), whose zones become the model's when none were given.
func subnetsOf(pool *infrav1.AWSMachinePool, ac *infrav1.AWSCluster, zones []string) ([]string, []string, error) {
	var ids []string
	for i, s := range pool.Spec.Subnets {
		id, err := resourceID(s, fmt.Sprintf("spec.subnets[%d]", i))
		if err != nil {
			return nil, nil, err
		}
		ids = append(ids, id)
	}
	if len(ids) > 0 {
		return sortedUnique(ids), zones, nil
	}
	kind := infrav1.AZSubnetType("private")
	if pool.Spec.AvailabilityZoneSubnetType != nil {
		kind = *pool.Spec.AvailabilityZoneSubnetType
	}
	var found []string
	for _, s := range ac.Spec.NetworkSpec.Subnets {
		switch {
		case s.ID == "":
		case len(zones) > 0 && !slices.Contains(zones, s.AvailabilityZone):
		case kind == "private" && s.IsPublic, kind == "public" && !s.IsPublic:
		default:
			ids = append(ids, s.ID)
			if s.AvailabilityZone != "" {
				found = append(found, s.AvailabilityZone)
			}
		}
	}
	if len(zones) == 0 {
		zones = sortedUnique(found)
	}
	if len(ids) == 0 && len(zones) == 0 {
		return nil, nil, fmt.Errorf("no subnet for the Auto Scaling Group: set spec.subnets, or spec.availabilityZones, or list the VPC's %s subnets (with their IDs) in AWSCluster %s's spec.network.subnets", kind, ac.Name)
	}
	return sortedUnique(ids), zones, nil
}

func sortedUnique(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return slices.Compact(out)
}

// VolumeOf maps a launch template's volume (nil for none), as the AWS
// and EKS providers write it.
func VolumeOf(v *infrav1.Volume) *Volume {
	if v == nil {
		return nil
	}
	out := &Volume{DeviceName: v.DeviceName, SizeGiB: int32(v.Size), Type: v.Type, IOPS: int32(v.IOPS),
		Encrypted: v.Encrypted, KMSKeyID: v.EncryptionKey}
	if v.Throughput != nil {
		out.Throughput = int32(*v.Throughput)
	}
	return out
}

// MetadataOf maps a launch template's instance metadata options (nil for
// none), as the AWS and EKS providers write them.
func MetadataOf(m *infrav1.InstanceMetadataOptions) *Metadata {
	if m == nil {
		return nil
	}
	return &Metadata{HTTPEndpoint: m.HTTPEndpoint, HTTPPutResponseHopLimit: int32(m.HTTPPutResponseHopLimit),
		HTTPTokens: m.HTTPTokens, InstanceMetadataTags: m.InstanceMetadataTags}
}

// PrivateDNSNameOf maps a launch template's private DNS name options (nil
// for none), as the AWS and EKS providers write them.
func PrivateDNSNameOf(d *infrav1.PrivateDNSName) *PrivateDNSName {
	if d == nil {
		return nil
	}
	return &PrivateDNSName{EnableResourceNameDNSAAAARecord: d.EnableResourceNameDNSAAAARecord,
		EnableResourceNameDNSARecord: d.EnableResourceNameDNSARecord, HostnameType: ptr.Deref(d.HostnameType, "")}
}

// allProcesses are the ASG processes CAPA's suspendProcesses.all suspends.
var allProcesses = []string{"AZRebalance", "AddToLoadBalancer", "AlarmNotification", "HealthCheck",
	"InstanceRefresh", "Launch", "ReplaceUnhealthy", "ScheduledActions", "Terminate"}

// suspendedProcesses lists the processes to keep suspended, sorted.
func suspendedProcesses(s *infrav1.SuspendProcessesTypes) []string {
	if s == nil {
		return nil
	}
	if s.All {
		return slices.Clone(allProcesses)
	}
	p := s.Processes
	if p == nil {
		return nil
	}
	var out []string
	for name, on := range map[string]*bool{
		"AZRebalance": p.AZRebalance, "AddToLoadBalancer": p.AddToLoadBalancer, "AlarmNotification": p.AlarmNotification,
		"HealthCheck": p.HealthCheck, "InstanceRefresh": p.InstanceRefresh, "Launch": p.Launch,
		"ReplaceUnhealthy": p.ReplaceUnhealthy, "ScheduledActions": p.ScheduledActions, "Terminate": p.Terminate,
	} {
		if ptr.Deref(on, false) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// tags are the AWSCluster's and the pool's additional tags and CAPA's
// tags of the owning cluster and role, the instances' Name and the pool.
func tags(pool *infrav1.AWSMachinePool, ac *infrav1.AWSCluster, owner contract.Owner) map[string]string {
	out := kit.PoolTags(pool, ac.Spec.AdditionalTags, pool.Spec.AdditionalTags)
	if cluster := owner.ClusterName(); cluster != "" {
		out[TagClusterPrefix+cluster] = "owned"
		out[TagKubernetesClusterPrefix+cluster] = "owned"
	}
	out[TagRole] = "node"
	out[TagName] = pool.Name
	return out
}

// WritePool implements contract.Adapter: the contract's fields, the
// instances, CAPA's asgStatus, the ASG's launch template ID and version,
// and the engine's conditions mirrored under CAPA's names. The launch
// template is left as it is when the report does not name it (the
// reconcile that creates the ASG).
func (a Adapter) WritePool(p contract.Pool, r contract.PoolReport) {
	pool := p.(*infrav1.AWSMachinePool)
	st := &pool.Status
	observed := a.Pool(pool).Write(r)
	kit.MirrorConditions(pool, conditionAliases)
	setLifecycleHookCondition(pool)
	noteSuspendedProcesses(pool)
	if !observed {
		return
	}
	st.ASGStatus = nil
	if op := r.Operation; op != nil && op.Type == scalegroup.OperationDelete {
		st.ASGStatus = ptr.To(asgDeleteInProgress)
	}
	if t := r.Template; t != nil {
		st.LaunchTemplateID = t.ID
		st.LaunchTemplateVersion = nil
		if t.Version != "" {
			st.LaunchTemplateVersion = ptr.To(t.Version)
		}
	}
	st.Instances = nil
	for _, in := range r.Instances {
		s := infrav1.AWSMachinePoolInstanceStatus{InstanceID: in.InstanceID}
		if in.Version != "" {
			s.Version = ptr.To(in.Version)
		}
		st.Instances = append(st.Instances, s)
	}
}

// conditionAliases are the engine's conditions under CAPA's names: the
// ASG is ready when the scale group is, and so is its launch template
// (mpool writes the template with the group).
var conditionAliases = map[string][]kit.ConditionAlias{
	infrav1.ScaleGroupReadyCondition: {
		kit.ReadyAlias(infrav1.ASGReadyCondition, "ASGNotFound", "ASGProvisionFailed", "ASGDeletionInProgress"),
		kit.ReadyAlias(infrav1.LaunchTemplateReadyCondition, "LaunchTemplateNotFound", "LaunchTemplateCreateFailed", ""),
	},
}

// WriteInstanceStatus implements contract.Adapter. The launch template
// version is the one the ASG reports the instance launched from; failing
// that, an instance of an older model's (its ModelHash says it, see
// "Carrying the model hash" in the package doc).
func (a Adapter) WriteInstanceStatus(obj contract.InstanceObject, r contract.InstanceReport) {
	m := obj.(*infrav1.AWSMachinePoolMachine)
	a.Instance(m).WriteStatus(r)
	st := &m.Status
	st.LifecycleState = lifecycleState.Word(r.State)
	st.AvailabilityZone = r.Zone
	st.LaunchTemplateVersion = ""
	if v, ok := strings.CutPrefix(r.ModelHash, staleHashPrefix); ok && !r.LatestModelApplied {
		st.LaunchTemplateVersion = v
	}
	if t := r.Template; t != nil && t.Version != "" {
		st.LaunchTemplateVersion = t.Version
	}
}

// lifecycleState is the instance's state in Auto Scaling's terms, from
// the engine's view of it (InService covers a failed instance the ASG
// still holds: its failure is in failureReason).
// Of the others, those of an instance coming or going say so; the rest
// (Standby, Detaching, Warmed:*, ...) are an instance in service.
var lifecycleState = kit.StateWords[string]{Pending: "Pending", Booting: "Pending:Wait", Running: "InService", Deleting: "Terminating",
	Also: map[string]contract.InstanceState{
		"Pending:Proceed":  contract.InstanceBooting,
		"Terminating:Wait": contract.InstanceDeleting, "Terminating:Proceed": contract.InstanceDeleting, "Terminated": contract.InstanceDeleting,
	}, Other: contract.InstanceRunning}

// ReadPool implements contract.Reader: the engine replaces instances as
// an instance refresh with the pool's refreshPreferences would (see
// Strategy); instanceWarmup is the pool's minReadySeconds unless the
// MachinePool sets one.
func (Adapter) ReadPool(p contract.Pool) (contract.PoolView, error) {
	pool := p.(*infrav1.AWSMachinePool)
	spec := pool.Spec
	rp := spec.RefreshPreferences
	strategy := Strategy(rp)
	minHealthy, maxHealthy := int64(defaultMinHealthyPercentage), int64(defaultMaxHealthyPercentage)
	var set []string
	if rp != nil {
		if rp.MinHealthyPercentage != nil {
			minHealthy = *rp.MinHealthyPercentage
			set = append(set, "minHealthyPercentage")
		}
		if rp.MaxHealthyPercentage != nil {
			maxHealthy = *rp.MaxHealthyPercentage
			set = append(set, "maxHealthyPercentage")
		}
		if rp.InstanceWarmup != nil {
			strategy.MinReadySeconds = int32(min(max(*rp.InstanceWarmup, 0), 1<<31-1))
		}
	}
	source := fmt.Sprintf("spec.refreshPreferences: minHealthyPercentage %d, maxHealthyPercentage %d", minHealthy, maxHealthy)
	switch len(set) {
	case 0:
		source += " (instance refresh's defaults)"
	case 1:
		source += fmt.Sprintf(" (%s is instance refresh's default)", map[string]string{"minHealthyPercentage": "maxHealthyPercentage", "maxHealthyPercentage": "minHealthyPercentage"}[set[0]])
	}
	return contract.PoolView{Rollout: contract.RolloutView{
		Strategy:                strategy,
		Source:                  source,
		SkipModelReconciliation: skipModelReconciliation(spec),
	}, ObservedGeneration: pool.Status.ObservedGeneration}, nil
}

// ReadInstance implements contract.Reader. An AWSMachinePoolMachine
// records the Auto Scaling lifecycle state (CAPA's field): Pending is
// Pending, Pending:Wait (a launch lifecycle hook) Booting, InService
// Running — or Failed when the object records a failure, which the ASG
// still holds in service — and Terminating (and its :Wait and :Proceed)
// Deleting.
func (a Adapter) ReadInstance(obj contract.InstanceObject) contract.InstanceView {
	m := obj.(*infrav1.AWSMachinePoolMachine)
	return a.Instance(m).View(m.Status.LifecycleState, lifecycleState.State(m.Status.LifecycleState), m.Status.AvailabilityZone)
}

// durationOr is d's duration, or def when d is unset (the CRD defaults both
// of the pool's durations; a pool read before defaulting has neither).
func durationOr(d *metav1.Duration, def time.Duration) time.Duration {
	if d == nil {
		return def
	}
	return d.Duration
}
