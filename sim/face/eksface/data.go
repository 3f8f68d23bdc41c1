package eksface

import (
	"encoding/json"
	"regexp"
	"time"

	"github.com/mpool-dev/mpool/sim/core"
)

// Node group statuses, as EKS reports them.
const (
	EKSStatusCreating     = "CREATING"
	EKSStatusActive       = "ACTIVE"
	EKSStatusUpdating     = "UPDATING"
	EKSStatusDeleting     = "DELETING"
	EKSStatusCreateFailed = "CREATE_FAILED"
	EKSStatusDegraded     = "DEGRADED"
)

// Update types and statuses, as EKS reports them.
const (
	EKSUpdateVersion    = "VersionUpdate"
	EKSUpdateConfig     = "ConfigUpdate"
	EKSUpdateInProgress = "InProgress"
	EKSUpdateSuccessful = "Successful"
	EKSUpdateFailed     = "Failed"
)

// EKSMaxNodegroupsPerCluster and EKSMaxNodesPerNodegroup are EKS's default
// quotas (EKSFace.MaxNodegroupsPerCluster, MaxNodesPerNodegroup).
const (
	EKSMaxNodegroupsPerCluster = 30
	EKSMaxNodesPerNodegroup    = 450
)

// eksFaceData is the EKS face's own data (Cloud.UpdateFaceData).
type eksFaceData struct {
	Clusters   []eksCluster   `json:"clusters,omitempty"`
	Nodegroups []eksNodegroup `json:"nodegroups,omitempty"`
	Updates    []eksUpdate    `json:"updates,omitempty"`
}

type eksCluster struct {
	Account   string            `json:"account"`
	Region    string            `json:"region"`
	Name      string            `json:"name"`
	ARN       string            `json:"arn"`
	Version   string            `json:"version"`
	CreatedAt time.Time         `json:"createdAt"`
	Tags      map[string]string `json:"tags,omitempty"`
}

type eksLaunchTemplate struct {
	ID      string `json:"id,omitempty"`
	Name    string `json:"name,omitempty"`
	Version string `json:"version,omitempty"`
}

type eksTaint struct {
	Key    string `json:"key"`
	Value  string `json:"value,omitempty"`
	Effect string `json:"effect"`
}

type eksIssue struct {
	Code        string   `json:"code"`
	Message     string   `json:"message"`
	ResourceIDs []string `json:"resourceIds,omitempty"`
}

type eksNodegroup struct {
	Account        string             `json:"account"`
	Region         string             `json:"region"`
	Cluster        string             `json:"cluster"`
	Name           string             `json:"name"`
	ARN            string             `json:"arn"`
	ASG            string             `json:"asg"`
	Status         string             `json:"status"`
	Version        string             `json:"version"`
	ReleaseVersion string             `json:"releaseVersion"`
	AMIType        string             `json:"amiType"`
	CapacityType   string             `json:"capacityType"`
	InstanceTypes  []string           `json:"instanceTypes"`
	DiskSize       int32              `json:"diskSize,omitempty"`
	Subnets        []string           `json:"subnets"`
	NodeRole       string             `json:"nodeRole"`
	RemoteAccess   json.RawMessage    `json:"remoteAccess,omitempty"`
	MinSize        int32              `json:"minSize"`
	MaxSize        int32              `json:"maxSize"`
	DesiredSize    int32              `json:"desiredSize"`
	Labels         map[string]string  `json:"labels,omitempty"`
	Taints         []eksTaint         `json:"taints,omitempty"`
	Tags           map[string]string  `json:"tags,omitempty"`
	MaxUnavailable int32              `json:"maxUnavailable,omitempty"`
	MaxUnavailPct  int32              `json:"maxUnavailablePercentage,omitempty"`
	LaunchTemplate *eksLaunchTemplate `json:"launchTemplate,omitempty"`
	Repair         *eksRepairConfig   `json:"nodeRepairConfig,omitempty"`
	CreatedAt      time.Time          `json:"createdAt"`
	ModifiedAt     time.Time          `json:"modifiedAt"`
	Health         []eksIssue         `json:"health,omitempty"`
	// Token is the bootstrap token ("<id>.<secret>") its nodes join with.
	Token string `json:"token,omitempty"`
	// Endpoint is the workload API server its nodes join (a node agent
	// credentials' host).
	Endpoint string `json:"endpoint,omitempty"`
	// CAHash is the pin of that server's CA (kubeadm's caCertHashes).
	CAHash string `json:"caHash,omitempty"`
	// LTSeen: LaunchTemplate existed in the AWS face when the node group
	// was created (its ID is the template's), so its deletion is the
	// health issue Ec2LaunchTemplateNotFound.
	LTSeen bool `json:"ltSeen,omitempty"`
	// LaunchBlockedSince is when an update of the node group first found
	// its launches held back (health.go), zero when they are not.
	LaunchBlockedSince time.Time `json:"launchBlockedSince,omitempty"`
}

// key identifies the node group.
func (n *eksNodegroup) key() string {
	return n.Account + "/" + n.Region + "/" + n.Cluster + "/" + n.Name
}

// release is the release its new nodes launch from (EKSTagRelease).
func (n *eksNodegroup) release() string {
	lt := ""
	if n.LaunchTemplate != nil {
		lt = n.LaunchTemplate.ID + ":" + n.LaunchTemplate.Version
	}
	return n.Version + "/" + n.ReleaseVersion + "/" + lt
}

// maxUnavailable is the update budget for a node group of desired nodes.
func (n *eksNodegroup) maxUnavailable() int {
	if n.MaxUnavailPct > 0 {
		return max(1, int(n.DesiredSize)*int(n.MaxUnavailPct)/100)
	}
	return max(1, int(n.MaxUnavailable))
}

type eksUpdateParam struct {
	Type  string `json:"type"`
	Value string `json:"value"`
}

type eksUpdateError struct {
	ErrorCode    string   `json:"errorCode"`
	ErrorMessage string   `json:"errorMessage"`
	ResourceIDs  []string `json:"resourceIds,omitempty"`
}

type eksUpdate struct {
	ID        string           `json:"id"`
	Account   string           `json:"account"`
	Region    string           `json:"region"`
	Cluster   string           `json:"cluster"`
	Nodegroup string           `json:"nodegroup"`
	Type      string           `json:"type"`
	Status    string           `json:"status"`
	Params    []eksUpdateParam `json:"params"`
	Errors    []eksUpdateError `json:"errors,omitempty"`
	CreatedAt time.Time        `json:"createdAt"`
	Force     bool             `json:"force,omitempty"`
	// Draining are the instances being drained before their termination,
	// by ID, with when their drain began.
	Draining map[string]time.Time `json:"draining,omitempty"`
	// OldLabels and OldTaints are the node group's before a ConfigUpdate,
	// for the loop to update the existing Nodes.
	OldLabels map[string]string `json:"oldLabels,omitempty"`
	OldTaints []eksTaint        `json:"oldTaints,omitempty"`
	Relabel   bool              `json:"relabel,omitempty"`
	// PrevVersion, PrevRelease and PrevLTVersion are the node group's
	// before a VersionUpdate, restored when it fails.
	PrevVersion   string `json:"prevVersion,omitempty"`
	PrevRelease   string `json:"prevRelease,omitempty"`
	PrevLTVersion string `json:"prevLTVersion,omitempty"`
}

func readEKSData(raw json.RawMessage) *eksFaceData {
	d := core.DecodePayload[eksFaceData](raw)
	return &d
}

// eksData returns the face's data.
func (h *eksHandler) data() *eksFaceData { return readEKSData(h.env.Cloud.FaceData(EKSFaceName)) }

// saveEKSData replaces the face's data.
func saveEKSData(c *core.Cloud, d *eksFaceData) error {
	_, err := c.UpdateFaceData(EKSFaceName, core.ReplacePayload(d))
	return err
}

func (d *eksFaceData) cluster(account, region, name string) *eksCluster {
	for i := range d.Clusters {
		c := &d.Clusters[i]
		if c.Account == account && c.Region == region && c.Name == name {
			return c
		}
	}
	return nil
}

func (d *eksFaceData) nodegroup(account, region, cluster, name string) *eksNodegroup {
	for i := range d.Nodegroups {
		n := &d.Nodegroups[i]
		if n.Account == account && n.Region == region && n.Cluster == cluster && n.Name == name {
			return n
		}
	}
	return nil
}

// running returns the node group's update in progress, nil when none.
func (d *eksFaceData) running(n *eksNodegroup) *eksUpdate {
	for i := range d.Updates {
		u := &d.Updates[i]
		if u.Account == n.Account && u.Region == n.Region && u.Cluster == n.Cluster && u.Nodegroup == n.Name && u.Status == EKSUpdateInProgress {
			return u
		}
	}
	return nil
}

var (
	eksVersionRE = regexp.MustCompile(`^1\.(0|[1-9][0-9]*)$`)
	eksReleaseRE = regexp.MustCompile(`^(1\.(?:0|[1-9][0-9]*))\.(0|[1-9][0-9]*)-[0-9]{8}$`)
	eksNameRE    = regexp.MustCompile(`^[0-9A-Za-z][A-Za-z0-9\-_]{0,62}$`)
)

// defaultRelease is the latest AMI release of a Kubernetes version.
func defaultRelease(version string) string { return version + ".0-" + EKSReleaseDate }

// wire shapes

type eksClusterOut struct {
	Name                 string            `json:"name"`
	ARN                  string            `json:"arn"`
	CreatedAt            eksTime           `json:"createdAt"`
	Version              string            `json:"version"`
	Endpoint             string            `json:"endpoint,omitempty"`
	Status               string            `json:"status"`
	PlatformVersion      string            `json:"platformVersion"`
	CertificateAuthority map[string]string `json:"certificateAuthority,omitempty"`
	Tags                 map[string]string `json:"tags,omitempty"`
}

type eksScalingConfig struct {
	MinSize     *int32 `json:"minSize,omitempty"`
	MaxSize     *int32 `json:"maxSize,omitempty"`
	DesiredSize *int32 `json:"desiredSize,omitempty"`
}

type eksUpdateConfig struct {
	MaxUnavailable           *int32 `json:"maxUnavailable,omitempty"`
	MaxUnavailablePercentage *int32 `json:"maxUnavailablePercentage,omitempty"`
}

type eksNodegroupOut struct {
	NodegroupName  string             `json:"nodegroupName"`
	NodegroupArn   string             `json:"nodegroupArn"`
	ClusterName    string             `json:"clusterName"`
	Version        string             `json:"version"`
	ReleaseVersion string             `json:"releaseVersion"`
	CreatedAt      eksTime            `json:"createdAt"`
	ModifiedAt     eksTime            `json:"modifiedAt"`
	Status         string             `json:"status"`
	CapacityType   string             `json:"capacityType"`
	ScalingConfig  eksScalingConfig   `json:"scalingConfig"`
	InstanceTypes  []string           `json:"instanceTypes,omitempty"`
	Subnets        []string           `json:"subnets"`
	RemoteAccess   json.RawMessage    `json:"remoteAccess,omitempty"`
	AMIType        string             `json:"amiType"`
	NodeRole       string             `json:"nodeRole"`
	Labels         map[string]string  `json:"labels,omitempty"`
	Taints         []eksTaint         `json:"taints,omitempty"`
	Resources      any                `json:"resources"`
	DiskSize       int32              `json:"diskSize,omitempty"`
	Health         map[string]any     `json:"health"`
	UpdateConfig   eksUpdateConfig    `json:"updateConfig"`
	LaunchTemplate *eksLaunchTemplate `json:"launchTemplate,omitempty"`
	Tags           map[string]string  `json:"tags,omitempty"`
	// NodeRepairConfig is as set (repair.go), absent when never set.
	NodeRepairConfig *eksRepairConfig `json:"nodeRepairConfig,omitempty"`
}

func (n *eksNodegroup) out() eksNodegroupOut {
	o := eksNodegroupOut{
		NodegroupName: n.Name, NodegroupArn: n.ARN, ClusterName: n.Cluster, Version: n.Version, ReleaseVersion: n.ReleaseVersion,
		CreatedAt: eksTime(n.CreatedAt), ModifiedAt: eksTime(n.ModifiedAt), Status: n.Status, CapacityType: n.CapacityType,
		ScalingConfig: eksScalingConfig{MinSize: &n.MinSize, MaxSize: &n.MaxSize, DesiredSize: &n.DesiredSize},
		InstanceTypes: n.InstanceTypes, Subnets: n.Subnets, RemoteAccess: n.RemoteAccess, AMIType: n.AMIType, NodeRole: n.NodeRole,
		Labels: n.Labels, Taints: n.Taints, DiskSize: n.DiskSize, LaunchTemplate: n.LaunchTemplate, Tags: n.Tags,
		Resources:        map[string]any{"autoScalingGroups": []map[string]string{{"name": n.ASG}}},
		Health:           map[string]any{"issues": nonNilIssues(n.Health)},
		NodeRepairConfig: n.Repair,
	}
	if n.MaxUnavailPct > 0 {
		o.UpdateConfig.MaxUnavailablePercentage = &n.MaxUnavailPct
	} else {
		o.UpdateConfig.MaxUnavailable = &n.MaxUnavailable
	}
	return o
}

func nonNilIssues(i []eksIssue) []eksIssue {
	if i == nil {
		return []eksIssue{}
	}
	return i
}

type eksUpdateOut struct {
	ID        string           `json:"id"`
	Status    string           `json:"status"`
	Type      string           `json:"type"`
	Params    []eksUpdateParam `json:"params"`
	CreatedAt eksTime          `json:"createdAt"`
	Errors    []eksUpdateError `json:"errors"`
}

func (u *eksUpdate) out() eksUpdateOut {
	errs := u.Errors
	if errs == nil {
		errs = []eksUpdateError{}
	}
	return eksUpdateOut{ID: u.ID, Status: u.Status, Type: u.Type, Params: u.Params, CreatedAt: eksTime(u.CreatedAt), Errors: errs}
}
