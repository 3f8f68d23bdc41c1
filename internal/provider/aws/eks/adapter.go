package eks

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/capi"
	awsprovider "github.com/mpool-dev/mpool/internal/provider/aws"
	"github.com/mpool-dev/mpool/internal/provider/contract"
	"github.com/mpool-dev/mpool/internal/provider/kit"
	"github.com/mpool-dev/mpool/internal/rollout"
	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// ProviderName labels the EKS provider in metrics, events and logs.
const ProviderName = "eks"

// AnnotationForceUpdate on a pool set to "true" forces its node group's
// version updates (see infrav1.AnnotationEKSForceUpdate).
const AnnotationForceUpdate = infrav1.AnnotationEKSForceUpdate

// maxNodegroupName is EKS's limit on a node group's name.
const maxNodegroupName = 63

// DefaultNodeRole is the IAM role of a node group whose pool names none,
// as CAPA's default (eks-nodegroup.cluster-api-provider-aws.sigs.k8s.io).
const DefaultNodeRole = "eks-nodegroup.cluster-api-provider-aws.sigs.k8s.io"

// CAPA's defaults of an AWSManagedMachinePool.
const (
	defaultAMIType      = "AL2_x86_64"
	defaultCapacityType = "ON_DEMAND"
)

// Nodegroup is the part of the model that changes what a node is (the
// model hash covers it): EKS replaces every node when ReleaseVersion
// changes, and refuses a change of the others on an existing node group.
type Nodegroup struct {
	InstanceType   string   `json:"instanceType,omitempty"`
	AMIType        string   `json:"amiType,omitempty"`
	ReleaseVersion string   `json:"releaseVersion,omitempty"`
	CapacityType   string   `json:"capacityType,omitempty"`
	DiskSize       int32    `json:"diskSize,omitempty"`
	Subnets        []string `json:"subnets,omitempty"`
	// NodeRole and RemoteAccess are sent at creation only (EKS cannot
	// change them): not hashed, so that a change cannot leave the nodes
	// stale forever.
	NodeRole     string        `json:"-"`
	RemoteAccess *RemoteAccess `json:"-"`
	// LaunchTemplate is the node group's launch template (from
	// spec.awsLaunchTemplate), nil for the one EKS makes itself.
	LaunchTemplate *Template `json:"launchTemplate,omitempty"`
}

// RemoteAccess is a node group's SSH access.
type RemoteAccess struct {
	SSHKeyName           string
	SourceSecurityGroups []string
}

// Settings are what EKS applies to a node group in place
// (UpdateNodegroupConfig): not part of the model hash.
type Settings struct {
	MinSize, MaxSize         int32
	Labels                   map[string]string
	Taints                   []Taint
	MaxUnavailable           int32
	MaxUnavailablePercentage int32
	// ForceUpdate asks EKS for forced version updates (the pool's
	// infrav1.AnnotationEKSForceUpdate): a node whose drain a
	// PodDisruptionBudget blocks is terminated anyway.
	ForceUpdate bool
	// ExternalReplicas: an autoscaler owns the size (the MachinePool's
	// replicas-managed-by). The node group then keeps the spec's min and
	// max exactly, and a desired size outside them is clamped into them
	// (CAPA #5746: raising minSize above, or lowering maxSize below, the
	// autoscaler's current size must not be refused). Otherwise the range
	// widens to take a capacity outside it (a surge), as the spec's
	// replicas are checked against the range in Desired.
	ExternalReplicas bool
}

// scaling returns the node group's minSize, maxSize and desiredSize for
// capacity under st (see Settings.ExternalReplicas).
func (st Settings) scaling(capacity int32) (minSize, maxSize, desired int32) {
	if st.ExternalReplicas {
		return st.MinSize, max(st.MaxSize, 1), min(max(capacity, st.MinSize), max(st.MaxSize, 1))
	}
	return min(st.MinSize, capacity), max(st.MaxSize, capacity, 1), capacity
}

// Taint is a node group taint in EKS's terms (effect NO_SCHEDULE, ...).
type Taint struct {
	Key, Value, Effect string
}

// Adapter maps AWSManagedMachinePool and AWSManagedMachinePoolMachine onto
// the infrapool engine; their node groups are placed by the Cluster's
// AWSManagedControlPlane.
type Adapter struct {
	kit.Objects[infrav1.AWSManagedMachinePool, infrav1.AWSManagedMachinePoolMachine, infrav1.AWSManagedMachinePoolMachineList, infrav1.AWSManagedControlPlane]
}

var _ contract.Adapter = Adapter{}

// Kinds implements contract.Adapter. EKS bootstraps its nodes: the
// MachinePool's dataSecretName is "".
func (a Adapter) Kinds() contract.Kinds {
	return a.Named(contract.Kinds{Provider: ProviderName, PoolFinalizer: infrav1.AWSManagedMachinePoolFinalizer,
		InstanceFinalizer: infrav1.AWSManagedMachinePoolMachineFinalizer, SelfBootstrapping: true})
}

// GroupRef implements contract.Adapter: the node group (spec.eksNodegroupName,
// else derived from the pool) of the AWSManagedControlPlane's cluster and
// region, reached with its identity.
func (a Adapter) GroupRef(p contract.Pool, infra client.Object) (scalegroup.Ref, error) {
	pool := p.(*infrav1.AWSManagedMachinePool)
	cp, err := a.InfraCluster(infra)
	if err != nil {
		return scalegroup.Ref{}, err
	}
	if cp.Spec.Region == "" || cp.Spec.EKSClusterName == "" {
		return scalegroup.Ref{}, fmt.Errorf("AWSManagedControlPlane %s needs spec.region and spec.eksClusterName", cp.Name)
	}
	creds, err := awsprovider.CredentialsOf(cp.Spec.IdentityRef, "AWSManagedControlPlane "+cp.Name)
	if err != nil {
		return scalegroup.Ref{}, err
	}
	return scalegroup.Ref{
		Name:        NodegroupName(pool),
		Scope:       cp.Spec.Region + "/" + cp.Spec.EKSClusterName,
		Namespace:   pool.Namespace,
		Credentials: creds,
	}, nil
}

// NodegroupName is the pool's node group: spec.eksNodegroupName, else
// derived from its namespace and name (contract.GroupName) within EKS's
// 63 characters.
func NodegroupName(pool *infrav1.AWSManagedMachinePool) string {
	if pool.Spec.EKSNodegroupName != "" {
		return pool.Spec.EKSNodegroupName
	}
	return contract.GroupName(pool.Namespace, pool.Name, maxNodegroupName)
}

// Desired implements contract.Adapter.
func (Adapter) Desired(p contract.Pool, owner contract.Owner) (contract.Desired, error) {
	pool := p.(*infrav1.AWSManagedMachinePool)
	spec := pool.Spec
	if len(spec.SubnetIDs) == 0 {
		return contract.Desired{}, fmt.Errorf("spec.subnetIDs is required: mpool does not look the cluster's subnets up by spec.availabilityZones yet")
	}
	replicas := kit.OwnerReplicas(owner)
	st := Settings{MinSize: 0, MaxSize: max(replicas, 1), Labels: maps.Clone(spec.Labels),
		ForceUpdate:      pool.Annotations[infrav1.AnnotationEKSForceUpdate] == "true",
		ExternalReplicas: capi.ReplicasManagedExternally(owner.MachinePool)}
	if sc := spec.Scaling; sc != nil {
		st.MinSize = ptr.Deref(sc.MinSize, st.MinSize)
		st.MaxSize = ptr.Deref(sc.MaxSize, st.MaxSize)
		if err := kit.CheckScaling("AWSManagedMachinePool", replicas, st.MinSize, st.MaxSize, st.ExternalReplicas); err != nil {
			return contract.Desired{}, err
		}
	}
	for _, t := range spec.Taints {
		st.Taints = append(st.Taints, Taint{Key: t.Key, Value: t.Value, Effect: strings.ToUpper(strings.ReplaceAll(string(t.Effect), "-", "_"))})
	}
	if uc := spec.UpdateConfig; uc != nil {
		st.MaxUnavailable, st.MaxUnavailablePercentage = ptr.Deref(uc.MaxUnavailable, 0), ptr.Deref(uc.MaxUnavailablePercentage, 0)
	}
	subnets := slices.Clone(spec.SubnetIDs)
	slices.Sort(subnets)
	ng := Nodegroup{
		InstanceType:   ptr.Deref(spec.InstanceType, ""),
		AMIType:        string(ptr.Deref(spec.AMIType, defaultAMIType)),
		ReleaseVersion: ptr.Deref(spec.AMIVersion, ""),
		CapacityType:   capacityType(spec.CapacityType),
		DiskSize:       ptr.Deref(spec.DiskSize, 0),
		Subnets:        slices.Compact(subnets),
		NodeRole:       spec.RoleName,
	}
	if ng.NodeRole == "" {
		ng.NodeRole = DefaultNodeRole
	}
	if r := spec.RemoteAccess; r != nil {
		ng.RemoteAccess = &RemoteAccess{SSHKeyName: ptr.Deref(r.SSHKeyName, ""), SourceSecurityGroups: r.SourceSecurityGroups}
	}
	if t := spec.AWSLaunchTemplate; t != nil {
		lt, err := templateOf(pool, owner, t)
		if err != nil {
			return contract.Desired{}, err
		}
		ng.LaunchTemplate = lt
		if lt.ImageID != "" {
			// A custom AMI: EKS takes no AMI type with it (as CAPA sends none).
			ng.AMIType = ""
		}
	}
	if ng.ReleaseVersion != "" && owner.Version != "" && !strings.HasPrefix(ng.ReleaseVersion, minorVersion(owner.Version)+".") {
		return contract.Desired{}, fmt.Errorf("spec.amiVersion %s is not a release of the MachinePool's Kubernetes version %s", ng.ReleaseVersion, owner.Version)
	}
	tags := kit.PoolTags(pool, spec.AdditionalTags)
	if cluster := owner.ClusterName(); cluster != "" {
		tags[awsprovider.TagClusterPrefix+cluster] = "owned"
	}
	instanceType := ng.InstanceType
	if ng.LaunchTemplate != nil {
		instanceType = ng.LaunchTemplate.InstanceType
	}
	m := scalegroup.Model{
		InstanceType: instanceType,
		Version:      owner.Version,
		Tags:         tags,
		Provider:     ng,
		InPlace:      st,
	}
	view, _ := Adapter{}.ReadPool(pool)
	d := contract.Desired{Model: m, Strategy: view.Rollout.Strategy}
	if st.ExternalReplicas {
		d.ReplicaRange = &[2]int32{st.MinSize, max(st.MaxSize, 1)}
	}
	return d, nil
}

// templateOf is the pool's launch template: named spec.awsLaunchTemplate.name,
// else "<AWSManagedControlPlane>-<pool>" as CAPA names it.
func templateOf(pool *infrav1.AWSManagedMachinePool, owner contract.Owner, t *infrav1.AWSLaunchTemplate) (*Template, error) {
	switch {
	case t.IamInstanceProfile != "":
		return nil, fmt.Errorf("spec.awsLaunchTemplate.iamInstanceProfile is prohibited in an EKS managed node group's launch template: EKS sets the node role's (spec.roleName)")
	case t.SpotMarketOptions != nil:
		return nil, fmt.Errorf("spec.awsLaunchTemplate.spotMarketOptions is prohibited in an EKS managed node group's launch template: set spec.capacityType: spot")
	case t.AMI.EKSOptimizedLookupType != nil || t.ImageLookupFormat != "" || t.ImageLookupOrg != "" || t.ImageLookupBaseOS != "":
		return nil, fmt.Errorf("spec.awsLaunchTemplate's AMI lookups (ami.eksLookupType, imageLookupFormat, imageLookupOrg, imageLookupBaseOS) are not supported by mpool's EKS node groups yet: set spec.awsLaunchTemplate.ami.id, or none for the AMI EKS picks by spec.amiType")
	}
	name := t.Name
	if name == "" {
		cp := ""
		if owner.InfraCluster != nil {
			cp = owner.InfraCluster.GetName()
		}
		if cp == "" {
			return nil, fmt.Errorf("spec.awsLaunchTemplate.name is empty and the Cluster's AWSManagedControlPlane is not known to name the launch template after")
		}
		name = cp + "-" + pool.Name
		if len(name) > maxTemplateName {
			name = contract.GroupName(pool.Namespace, name, maxTemplateName)
		}
	}
	lt := &Template{
		Name:                  name,
		ImageID:               ptr.Deref(t.AMI.ID, ""),
		InstanceType:          t.InstanceType,
		RootVolume:            awsprovider.VolumeOf(t.RootVolume),
		SSHKeyName:            ptr.Deref(t.SSHKeyName, ""),
		CapacityReservationID: ptr.Deref(t.CapacityReservationID, ""),
	}
	for i := range t.NonRootVolumes {
		lt.NonRootVolumes = append(lt.NonRootVolumes, *awsprovider.VolumeOf(&t.NonRootVolumes[i]))
	}
	for i, sg := range t.AdditionalSecurityGroups {
		if sg.ID == nil || *sg.ID == "" {
			return nil, fmt.Errorf("spec.awsLaunchTemplate.additionalSecurityGroups[%d]: mpool's EKS node groups take security groups by id only", i)
		}
		lt.SecurityGroupIDs = append(lt.SecurityGroupIDs, *sg.ID)
	}
	lt.Metadata, lt.PrivateDNSName = awsprovider.MetadataOf(t.InstanceMetadataOptions), awsprovider.PrivateDNSNameOf(t.PrivateDNSName)
	return lt, nil
}

// capacityType is EKS's name of a pool's capacity type.
func capacityType(c *infrav1.ManagedMachinePoolCapacityType) string {
	if c != nil && *c == infrav1.ManagedMachinePoolCapacityTypeSpot {
		return "SPOT"
	}
	return defaultCapacityType
}

// Strategy is the engine's view of EKS's update budget: EKS surges and
// takes down at most updateConfig.maxUnavailable (or the percentage) nodes
// at a time, one by default.
func Strategy(uc *infrav1.UpdateConfig) rollout.Strategy {
	v := intstr.FromInt32(1)
	if uc != nil {
		switch {
		case uc.MaxUnavailable != nil:
			v = intstr.FromInt32(*uc.MaxUnavailable)
		case uc.MaxUnavailablePercentage != nil:
			v = intstr.FromString(fmt.Sprintf("%d%%", *uc.MaxUnavailablePercentage))
		}
	}
	return rollout.Strategy{MaxSurge: ptr.To(v), MaxUnavailable: ptr.To(v)}
}

// WritePool implements contract.Adapter: the contract's fields, the
// launch template and version the node group launches from
// (status.launchTemplateID, launchTemplateVersion, as CAPA's), and the
// engine's conditions mirrored under CAPA's names (EKSNodegroupReady, and
// LaunchTemplateReady for a pool with spec.awsLaunchTemplate, see
// setTemplateCondition).
func (a Adapter) WritePool(p contract.Pool, r contract.PoolReport) {
	pool := p.(*infrav1.AWSManagedMachinePool)
	st := &pool.Status
	observed := a.Pool(pool).Write(r)
	kit.MirrorConditions(pool, conditionAliases)
	if observed {
		if t := r.Template; t != nil && t.ID != "" {
			st.LaunchTemplateID, st.LaunchTemplateVersion = ptr.To(t.ID), nil
			if t.Version != "" {
				st.LaunchTemplateVersion = ptr.To(t.Version)
			}
		}
	}
	if pool.Spec.AWSLaunchTemplate != nil {
		setTemplateCondition(pool)
	}
}

// setTemplateCondition writes CAPA's LaunchTemplateReady: False
// (LaunchTemplateReconcileFailed) while writing the launch template fails,
// the error in the message; True once the node group runs a version of it
// (status.launchTemplateID); False (LaunchTemplateNotFound) before.
func setTemplateCondition(pool *infrav1.AWSManagedMachinePool) {
	conds := pool.GetConditions()
	c := metav1.Condition{Type: infrav1.LaunchTemplateReadyCondition, ObservedGeneration: pool.Generation}
	sg := meta.FindStatusCondition(conds, infrav1.ScaleGroupReadyCondition)
	switch {
	case sg != nil && sg.Status == metav1.ConditionFalse && strings.Contains(sg.Message, templateErrorMarker):
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, "LaunchTemplateReconcileFailed", sg.Message
	case pool.Status.LaunchTemplateID != nil:
		c.Status, c.Reason = metav1.ConditionTrue, "LaunchTemplateReady"
		c.Message = "the node group launches from launch template " + *pool.Status.LaunchTemplateID
		if v := pool.Status.LaunchTemplateVersion; v != nil {
			c.Message += " version " + *v
		}
	default:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, "LaunchTemplateNotFound", "the launch template is not created yet"
	}
	meta.SetStatusCondition(&conds, c)
	pool.SetConditions(conds)
}

// nodegroupAlias is EKSNodegroupReady, the engine's ScaleGroupReady under
// CAPA's name and reasons.
var nodegroupAlias = kit.ReadyAlias(infrav1.EKSNodegroupReadyCondition,
	"EKSNodegroupNotFound", "EKSNodegroupReconciliationFailed", "EKSNodegroupDeletionInProgress")

// conditionAliases are the engine's conditions under CAPA's names.
var conditionAliases = map[string][]kit.ConditionAlias{
	infrav1.ScaleGroupReadyCondition: {nodegroupAlias},
}

// WriteInstanceStatus implements contract.Adapter: the EC2 state and the
// zone.
func (a Adapter) WriteInstanceStatus(obj contract.InstanceObject, r contract.InstanceReport) {
	m := obj.(*infrav1.AWSManagedMachinePoolMachine)
	a.Instance(m).WriteStatus(r)
	m.Status.State = ec2State.Word(r.State)
	m.Status.AvailabilityZone = r.Zone
}

// ec2State is the instance's EC2 state from the engine's view of it.
var ec2State = kit.StateWords[string]{Pending: "pending", Running: "running", Deleting: "shutting-down",
	Also: map[string]contract.InstanceState{
		"stopping": contract.InstanceDeleting, "stopped": contract.InstanceDeleting, "terminated": contract.InstanceDeleting,
	}, Other: contract.InstanceRunning}

// ReadPool implements contract.Reader: EKS replaces out-of-date nodes
// itself, surging and taking down at most spec.updateConfig's
// maxUnavailable (or maxUnavailablePercentage) at a time, one by default.
func (Adapter) ReadPool(p contract.Pool) (contract.PoolView, error) {
	pool := p.(*infrav1.AWSManagedMachinePool)
	uc := pool.Spec.UpdateConfig
	source := "spec.updateConfig: maxUnavailable 1 (EKS's default)"
	switch {
	case uc != nil && uc.MaxUnavailable != nil:
		source = fmt.Sprintf("spec.updateConfig: maxUnavailable %d", *uc.MaxUnavailable)
	case uc != nil && uc.MaxUnavailablePercentage != nil:
		source = fmt.Sprintf("spec.updateConfig: maxUnavailablePercentage %d", *uc.MaxUnavailablePercentage)
	}
	return contract.PoolView{Rollout: contract.RolloutView{
		Strategy:      Strategy(uc),
		Source:        source + ": EKS replaces the nodes itself",
		CloudRollouts: true,
	}, ObservedGeneration: pool.Status.ObservedGeneration}, nil
}

// ReadInstance implements contract.Reader. An AWSManagedMachinePoolMachine
// records the EC2 instance state: pending is Pending, running Running — or
// Failed when the object records a failure — and shutting-down, stopping
// and terminated Deleting.
func (a Adapter) ReadInstance(obj contract.InstanceObject) contract.InstanceView {
	m := obj.(*infrav1.AWSManagedMachinePoolMachine)
	return a.Instance(m).View(m.Status.State, ec2State.State(m.Status.State), m.Status.AvailabilityZone)
}
