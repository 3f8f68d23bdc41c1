package cloudsim

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mpool-dev/mpool/internal/cloudsim/awsapi"
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
	d := &eksFaceData{}
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, d)
	}
	return d
}

// eksData returns the face's data.
func (h *eksHandler) data() *eksFaceData { return readEKSData(h.env.Cloud.FaceData(EKSFaceName)) }

// saveEKSData replaces the face's data.
func saveEKSData(c *Cloud, d *eksFaceData) error {
	b, err := json.Marshal(d)
	if err != nil {
		return err
	}
	_, err = c.UpdateFaceData(EKSFaceName, func(json.RawMessage) (json.RawMessage, error) { return b, nil })
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

// EKSCreateCluster registers an active EKS cluster named name in account's
// region of the EKS face of c (version "" is EKSDefaultVersion), as
// `aws eks create-cluster` would; its endpoint and CA are the node agent's
// first workload API server's. A cluster that exists is left as it is.
func EKSCreateCluster(c *Cloud, account, region, name, version string) error {
	f, _ := c.faces[EKSFaceName].(*EKSFace)
	if f == nil {
		return fmt.Errorf("the cloud serves no EKS face")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	cl, err := createEKSCluster(c, account, region, name, version, nil)
	if cl != nil {
		return nil // created, or it exists
	}
	return err
}

func createEKSCluster(c *Cloud, account, region, name, version string, tags map[string]string) (*eksCluster, error) {
	d := readEKSData(c.FaceData(EKSFaceName))
	if cl := d.cluster(account, region, name); cl != nil {
		return cl, &eksError{status: http.StatusConflict, code: EKSCodeResourceInUse, message: "Cluster already exists with name: " + name}
	}
	if version == "" {
		version = EKSDefaultVersion
	}
	if !eksVersionRE.MatchString(version) {
		return nil, eksInvalid("unsupported Kubernetes version %s", version)
	}
	cl := eksCluster{Account: account, Region: region, Name: name, Version: version, CreatedAt: c.clock.Now().UTC(), Tags: tags,
		ARN: fmt.Sprintf("arn:aws:eks:%s:%s:cluster/%s", region, account, name)}
	d.Clusters = append(d.Clusters, cl)
	return &cl, saveEKSData(c, d)
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
}

func (n *eksNodegroup) out() eksNodegroupOut {
	o := eksNodegroupOut{
		NodegroupName: n.Name, NodegroupArn: n.ARN, ClusterName: n.Cluster, Version: n.Version, ReleaseVersion: n.ReleaseVersion,
		CreatedAt: eksTime(n.CreatedAt), ModifiedAt: eksTime(n.ModifiedAt), Status: n.Status, CapacityType: n.CapacityType,
		ScalingConfig: eksScalingConfig{MinSize: &n.MinSize, MaxSize: &n.MaxSize, DesiredSize: &n.DesiredSize},
		InstanceTypes: n.InstanceTypes, Subnets: n.Subnets, RemoteAccess: n.RemoteAccess, AMIType: n.AMIType, NodeRole: n.NodeRole,
		Labels: n.Labels, Taints: n.Taints, DiskSize: n.DiskSize, LaunchTemplate: n.LaunchTemplate, Tags: n.Tags,
		Resources: map[string]any{"autoScalingGroups": []map[string]string{{"name": n.ASG}}},
		Health:    map[string]any{"issues": nonNilIssues(n.Health)},
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

// clusters

func (h *eksHandler) clusterOut(cl *eksCluster) eksClusterOut {
	o := eksClusterOut{Name: cl.Name, ARN: cl.ARN, CreatedAt: eksTime(cl.CreatedAt), Version: cl.Version, Status: EKSStatusActive,
		PlatformVersion: "eks.1", Tags: cl.Tags}
	if s := h.env.Cloud.agent.Servers(); len(s) > 0 {
		o.Endpoint = s[0].Host
		o.CertificateAuthority = map[string]string{"data": base64.StdEncoding.EncodeToString(s[0].CAData)}
	}
	return o
}

func (h *eksHandler) createCluster(w http.ResponseWriter, _ *http.Request, req *eksRequest) {
	var in struct {
		Name    string            `json:"name"`
		Version string            `json:"version"`
		Tags    map[string]string `json:"tags"`
	}
	if err := json.Unmarshal(req.body, &in); err != nil || !eksNameRE.MatchString(in.Name) {
		h.writeErr(w, req, eksInvalid("name must match %s", eksNameRE))
		return
	}
	h.face.mu.Lock()
	cl, err := createEKSCluster(h.env.Cloud, req.account, req.region, in.Name, in.Version, in.Tags)
	h.face.mu.Unlock()
	if err != nil {
		h.writeErr(w, req, err)
		return
	}
	writeEKSResult(w, req, map[string]any{"cluster": h.clusterOut(cl)})
}

func (h *eksHandler) describeCluster(w http.ResponseWriter, _ *http.Request, req *eksRequest) {
	cl := h.data().cluster(req.account, req.region, req.path[1])
	if cl == nil {
		h.writeErr(w, req, eksNotFound("No cluster found for name: %s.", req.path[1]))
		return
	}
	writeEKSResult(w, req, map[string]any{"cluster": h.clusterOut(cl)})
}

func (h *eksHandler) listClusters(w http.ResponseWriter, _ *http.Request, req *eksRequest) {
	names := []string{}
	for _, c := range h.data().Clusters {
		if c.Account == req.account && c.Region == req.region {
			names = append(names, c.Name)
		}
	}
	sort.Strings(names)
	writeEKSResult(w, req, map[string]any{"clusters": names})
}

// node groups

type eksNodegroupIn struct {
	NodegroupName  string             `json:"nodegroupName"`
	ScalingConfig  *eksScalingConfig  `json:"scalingConfig"`
	DiskSize       *int32             `json:"diskSize"`
	Subnets        []string           `json:"subnets"`
	InstanceTypes  []string           `json:"instanceTypes"`
	AMIType        string             `json:"amiType"`
	RemoteAccess   json.RawMessage    `json:"remoteAccess"`
	NodeRole       string             `json:"nodeRole"`
	Labels         map[string]string  `json:"labels"`
	Taints         []eksTaint         `json:"taints"`
	Tags           map[string]string  `json:"tags"`
	LaunchTemplate *eksLaunchTemplate `json:"launchTemplate"`
	UpdateConfig   *eksUpdateConfig   `json:"updateConfig"`
	CapacityType   string             `json:"capacityType"`
	Version        string             `json:"version"`
	ReleaseVersion string             `json:"releaseVersion"`
}

var eksTaintEffects = map[string]string{"NO_SCHEDULE": "NoSchedule", "NO_EXECUTE": "NoExecute", "PREFER_NO_SCHEDULE": "PreferNoSchedule"}

func validScaling(min, max, desired, quota int32) error {
	switch {
	case min < 0 || max < 1 || desired < 0:
		return eksInvalid("scalingConfig: minSize and desiredSize must be at least 0 and maxSize at least 1")
	case min > max:
		return eksInvalid("Minimum capacity %d can't be greater than maximum capacity %d.", min, max)
	case desired < min || desired > max:
		return eksInvalid("Desired capacity %d can't be less than minimum capacity %d or greater than maximum capacity %d.", desired, min, max)
	case max > quota:
		return &eksError{status: http.StatusBadRequest, code: EKSCodeResourceLimitExceeded,
			message: fmt.Sprintf("Maximum capacity %d exceeds the limit of %d nodes per node group.", max, quota)}
	}
	return nil
}

func validUpdateConfig(u *eksUpdateConfig) error {
	if u == nil {
		return nil
	}
	switch {
	case u.MaxUnavailable != nil && u.MaxUnavailablePercentage != nil:
		return eksInvalid("updateConfig: only one of maxUnavailable and maxUnavailablePercentage may be set")
	case u.MaxUnavailable != nil && (*u.MaxUnavailable < 1 || *u.MaxUnavailable > 100):
		return eksInvalid("updateConfig.maxUnavailable must be between 1 and 100")
	case u.MaxUnavailablePercentage != nil && (*u.MaxUnavailablePercentage < 1 || *u.MaxUnavailablePercentage > 100):
		return eksInvalid("updateConfig.maxUnavailablePercentage must be between 1 and 100")
	}
	return nil
}

func validTaints(ts []eksTaint) error {
	for _, t := range ts {
		if t.Key == "" || eksTaintEffects[t.Effect] == "" {
			return eksInvalid("taint %q: key is required and effect must be NO_SCHEDULE, NO_EXECUTE or PREFER_NO_SCHEDULE", t.Key)
		}
	}
	return nil
}

func (h *eksHandler) createNodegroup(w http.ResponseWriter, _ *http.Request, req *eksRequest) {
	var in eksNodegroupIn
	if err := json.Unmarshal(req.body, &in); err != nil {
		h.writeErr(w, req, eksInvalid("the request body is not valid JSON: %v", err))
		return
	}
	h.face.mu.Lock()
	defer h.face.mu.Unlock()
	n, err := h.newNodegroup(req, in)
	if err != nil {
		h.writeErr(w, req, err)
		return
	}
	h.face.kickLocked(h.env)
	writeEKSResult(w, req, map[string]any{"nodegroup": n.out()})
}

func (h *eksHandler) newNodegroup(req *eksRequest, in eksNodegroupIn) (*eksNodegroup, error) {
	clusterName := req.path[1]
	d := h.data()
	cl := d.cluster(req.account, req.region, clusterName)
	if cl == nil {
		return nil, eksNotFound("No cluster found for name: %s.", clusterName)
	}
	if !eksNameRE.MatchString(in.NodegroupName) {
		return nil, eksInvalid("nodegroupName must match %s", eksNameRE)
	}
	if d.nodegroup(req.account, req.region, clusterName, in.NodegroupName) != nil {
		return nil, eksInUse("NodeGroup already exists with name %s and cluster name %s", in.NodegroupName, clusterName)
	}
	count := 0
	for _, n := range d.Nodegroups {
		if n.Account == req.account && n.Region == req.region && n.Cluster == clusterName {
			count++
		}
	}
	if count >= h.face.maxNodegroups() {
		return nil, &eksError{status: http.StatusBadRequest, code: EKSCodeResourceLimitExceeded,
			message: fmt.Sprintf("Cluster %s already has the maximum of %d node groups.", clusterName, h.face.maxNodegroups())}
	}
	if in.NodeRole == "" {
		return nil, eksInvalid("nodeRole is required")
	}
	if len(in.Subnets) == 0 {
		return nil, eksInvalid("subnets is required")
	}
	for _, s := range in.Subnets {
		if findSubnet(req.account, req.region, s) == nil {
			return nil, eksInvalid("The subnet ID '%s' does not exist", s)
		}
	}
	sc := eksScalingConfig{}
	if in.ScalingConfig != nil {
		sc = *in.ScalingConfig
	}
	minSize, maxSize, desired := ptrOr(sc.MinSize, 1), ptrOr(sc.MaxSize, 2), ptrOr(sc.DesiredSize, ptrOr(sc.MinSize, 1))
	if err := validScaling(minSize, maxSize, desired, h.face.maxNodes()); err != nil {
		return nil, err
	}
	if err := validUpdateConfig(in.UpdateConfig); err != nil {
		return nil, err
	}
	if err := validTaints(in.Taints); err != nil {
		return nil, err
	}
	version := in.Version
	if version == "" {
		version = cl.Version
	}
	if !eksVersionRE.MatchString(version) {
		return nil, eksInvalid("Requested Nodegroup Kubernetes version %s is invalid", version)
	}
	if minorOf(version) > minorOf(cl.Version) {
		return nil, eksInvalid("Requested Nodegroup Kubernetes version %s is newer than the cluster's %s", version, cl.Version)
	}
	release := in.ReleaseVersion
	if release == "" {
		release = defaultRelease(version)
	}
	if m := eksReleaseRE.FindStringSubmatch(release); m == nil || m[1] != version {
		return nil, eksInvalid("Requested release version %s is not valid for Kubernetes version %s", release, version)
	}
	if in.LaunchTemplate != nil {
		if in.LaunchTemplate.ID == "" && in.LaunchTemplate.Name == "" {
			return nil, eksInvalid("launchTemplate needs an id or a name")
		}
		if len(in.InstanceTypes) > 0 && in.DiskSize != nil {
			return nil, eksInvalid("Disk size must be specified within the launch template.")
		}
		if in.LaunchTemplate.Version == "" {
			in.LaunchTemplate.Version = "1"
		}
		if in.LaunchTemplate.ID == "" {
			in.LaunchTemplate.ID = "lt-" + awsHex(17, "template", req.account, req.region, in.LaunchTemplate.Name)
		}
	}
	capacity := in.CapacityType
	if capacity == "" {
		capacity = "ON_DEMAND"
	}
	if capacity != "ON_DEMAND" && capacity != "SPOT" && capacity != "CAPACITY_BLOCK" {
		return nil, eksInvalid("capacityType must be ON_DEMAND, SPOT or CAPACITY_BLOCK")
	}
	ami := in.AMIType
	if ami == "" {
		ami = "AL2023_x86_64_STANDARD"
	}
	types := in.InstanceTypes
	if len(types) == 0 {
		types = []string{"t3.medium"}
	}
	disk := int32(0)
	if in.LaunchTemplate == nil {
		disk = ptrOr(in.DiskSize, 20)
	}
	now := h.env.Cloud.clock.Now().UTC()
	u := uuidFrom([]byte(awsHex(32, "nodegroup", req.account, req.region, clusterName, in.NodegroupName, now.String()))[:16])
	n := &eksNodegroup{
		Account: req.account, Region: req.region, Cluster: clusterName, Name: in.NodegroupName,
		ARN:    fmt.Sprintf("arn:aws:eks:%s:%s:nodegroup/%s/%s/%s", req.region, req.account, clusterName, in.NodegroupName, u),
		ASG:    "eks-" + in.NodegroupName + "-" + u,
		Status: EKSStatusCreating, Version: version, ReleaseVersion: release, AMIType: ami, CapacityType: capacity,
		InstanceTypes: types, DiskSize: disk, Subnets: slices.Clone(in.Subnets), NodeRole: in.NodeRole, RemoteAccess: in.RemoteAccess,
		MinSize: minSize, MaxSize: maxSize, DesiredSize: desired, Labels: in.Labels, Taints: in.Taints, Tags: in.Tags,
		LaunchTemplate: in.LaunchTemplate, CreatedAt: now, ModifiedAt: now, MaxUnavailable: 1,
	}
	if uc := in.UpdateConfig; uc != nil {
		n.MaxUnavailable, n.MaxUnavailPct = ptrOr(uc.MaxUnavailable, 0), ptrOr(uc.MaxUnavailablePercentage, 0)
	}
	if err := h.face.ensureToken(h.env, n); err != nil {
		return nil, &eksError{status: http.StatusInternalServerError, code: EKSCodeServer, message: "bootstrapping the node group: " + err.Error()}
	}
	d.Nodegroups = append(d.Nodegroups, *n)
	if err := saveEKSData(h.env.Cloud, d); err != nil {
		return nil, err
	}
	if _, err := h.face.applyASG(h.env, n, int32(n.DesiredSize)); err != nil {
		// Leave nothing behind: the node group was not created.
		d.Nodegroups = d.Nodegroups[:len(d.Nodegroups)-1]
		_ = saveEKSData(h.env.Cloud, d)
		return nil, err
	}
	return n, nil
}

func ptrOr(p *int32, def int32) int32 {
	if p == nil {
		return def
	}
	return *p
}

// minorOf is the minor version of "1.x".
func minorOf(v string) int {
	_, m, _ := strings.Cut(v, ".")
	n, _ := strconv.Atoi(m)
	return n
}

// nodegroupOf reads the request's node group (path /clusters/c/node-groups/n).
func (h *eksHandler) nodegroupOf(req *eksRequest) (*eksFaceData, *eksNodegroup, error) {
	d := h.data()
	if d.cluster(req.account, req.region, req.path[1]) == nil {
		return nil, nil, eksNotFound("No cluster found for name: %s.", req.path[1])
	}
	n := d.nodegroup(req.account, req.region, req.path[1], req.path[3])
	if n == nil {
		return nil, nil, eksNotFound("No node group found for name: %s.", req.path[3])
	}
	return d, n, nil
}

func (h *eksHandler) describeNodegroup(w http.ResponseWriter, _ *http.Request, req *eksRequest) {
	_, n, err := h.nodegroupOf(req)
	if err != nil {
		h.writeErr(w, req, err)
		return
	}
	if n.Status == EKSStatusCreating || n.Status == EKSStatusUpdating || n.Status == EKSStatusDeleting {
		h.face.kick(h.env)
	}
	writeEKSResult(w, req, map[string]any{"nodegroup": n.out()})
}

func (h *eksHandler) listNodegroups(w http.ResponseWriter, _ *http.Request, req *eksRequest) {
	d := h.data()
	if d.cluster(req.account, req.region, req.path[1]) == nil {
		h.writeErr(w, req, eksNotFound("No cluster found for name: %s.", req.path[1]))
		return
	}
	names := []string{}
	for _, n := range d.Nodegroups {
		if n.Account == req.account && n.Region == req.region && n.Cluster == req.path[1] {
			names = append(names, n.Name)
		}
	}
	sort.Strings(names)
	writeEKSResult(w, req, map[string]any{"nodegroups": names})
}

func (h *eksHandler) deleteNodegroup(w http.ResponseWriter, _ *http.Request, req *eksRequest) {
	h.face.mu.Lock()
	defer h.face.mu.Unlock()
	d, n, err := h.nodegroupOf(req)
	if err != nil {
		h.writeErr(w, req, err)
		return
	}
	if n.Status != EKSStatusDeleting {
		if u := d.running(n); u != nil {
			u.Status, u.Errors = EKSUpdateFailed, []eksUpdateError{{ErrorCode: "Unknown", ErrorMessage: "the node group is being deleted"}}
		}
		n.Status, n.ModifiedAt = EKSStatusDeleting, h.env.Cloud.clock.Now().UTC()
		if err := saveEKSData(h.env.Cloud, d); err != nil {
			h.writeErr(w, req, err)
			return
		}
		h.face.kickLocked(h.env)
	}
	writeEKSResult(w, req, map[string]any{"nodegroup": n.out()})
}

func (h *eksHandler) updateNodegroupConfig(w http.ResponseWriter, _ *http.Request, req *eksRequest) {
	var in struct {
		Labels *struct {
			AddOrUpdateLabels map[string]string `json:"addOrUpdateLabels"`
			RemoveLabels      []string          `json:"removeLabels"`
		} `json:"labels"`
		Taints *struct {
			AddOrUpdateTaints []eksTaint `json:"addOrUpdateTaints"`
			RemoveTaints      []eksTaint `json:"removeTaints"`
		} `json:"taints"`
		ScalingConfig *eksScalingConfig `json:"scalingConfig"`
		UpdateConfig  *eksUpdateConfig  `json:"updateConfig"`
	}
	if err := json.Unmarshal(req.body, &in); err != nil {
		h.writeErr(w, req, eksInvalid("the request body is not valid JSON: %v", err))
		return
	}
	h.face.mu.Lock()
	defer h.face.mu.Unlock()
	d, n, err := h.nodegroupOf(req)
	if err == nil {
		err = h.checkUpdatable(d, n)
	}
	if err != nil {
		h.writeErr(w, req, err)
		return
	}
	u := eksUpdate{Type: EKSUpdateConfig, OldLabels: maps.Clone(n.Labels), OldTaints: slices.Clone(n.Taints)}
	if l := in.Labels; l != nil && (len(l.AddOrUpdateLabels) > 0 || len(l.RemoveLabels) > 0) {
		labels := maps.Clone(n.Labels)
		if labels == nil {
			labels = map[string]string{}
		}
		maps.Copy(labels, l.AddOrUpdateLabels)
		for _, k := range l.RemoveLabels {
			delete(labels, k)
		}
		b, _ := json.Marshal(l)
		u.Params = append(u.Params, eksUpdateParam{Type: "LabelsToAdd", Value: string(b)})
		n.Labels, u.Relabel = labels, true
	}
	if t := in.Taints; t != nil && (len(t.AddOrUpdateTaints) > 0 || len(t.RemoveTaints) > 0) {
		if err := validTaints(t.AddOrUpdateTaints); err != nil {
			h.writeErr(w, req, err)
			return
		}
		taints := slices.DeleteFunc(slices.Clone(n.Taints), func(x eksTaint) bool {
			return slices.ContainsFunc(append(slices.Clone(t.RemoveTaints), t.AddOrUpdateTaints...), func(r eksTaint) bool { return r.Key == x.Key && (r.Effect == x.Effect || r.Effect == "") })
		})
		n.Taints, u.Relabel = append(taints, t.AddOrUpdateTaints...), true
		b, _ := json.Marshal(t)
		u.Params = append(u.Params, eksUpdateParam{Type: "TaintsToAdd", Value: string(b)})
	}
	if s := in.ScalingConfig; s != nil {
		mn, mx, ds := ptrOr(s.MinSize, n.MinSize), ptrOr(s.MaxSize, n.MaxSize), ptrOr(s.DesiredSize, n.DesiredSize)
		if err := validScaling(mn, mx, ds, h.face.maxNodes()); err != nil {
			h.writeErr(w, req, err)
			return
		}
		for _, p := range []struct {
			name     string
			old, new int32
		}{{"MinSize", n.MinSize, mn}, {"MaxSize", n.MaxSize, mx}, {"DesiredSize", n.DesiredSize, ds}} {
			if p.old != p.new {
				u.Params = append(u.Params, eksUpdateParam{Type: p.name, Value: strconv.Itoa(int(p.new))})
			}
		}
		n.MinSize, n.MaxSize, n.DesiredSize = mn, mx, ds
	}
	if c := in.UpdateConfig; c != nil {
		if err := validUpdateConfig(c); err != nil {
			h.writeErr(w, req, err)
			return
		}
		b, _ := json.Marshal(c)
		u.Params = append(u.Params, eksUpdateParam{Type: "UpdateConfig", Value: string(b)})
		n.MaxUnavailable, n.MaxUnavailPct = ptrOr(c.MaxUnavailable, 0), ptrOr(c.MaxUnavailablePercentage, 0)
		if n.MaxUnavailable == 0 && n.MaxUnavailPct == 0 {
			n.MaxUnavailable = 1
		}
	}
	if len(u.Params) == 0 {
		h.writeErr(w, req, eksInvalid("No changes needed"))
		return
	}
	h.startUpdate(w, req, d, n, u)
}

func (h *eksHandler) updateNodegroupVersion(w http.ResponseWriter, _ *http.Request, req *eksRequest) {
	var in struct {
		Version        string             `json:"version"`
		ReleaseVersion string             `json:"releaseVersion"`
		LaunchTemplate *eksLaunchTemplate `json:"launchTemplate"`
		Force          bool               `json:"force"`
	}
	if err := json.Unmarshal(req.body, &in); err != nil {
		h.writeErr(w, req, eksInvalid("the request body is not valid JSON: %v", err))
		return
	}
	h.face.mu.Lock()
	defer h.face.mu.Unlock()
	d, n, err := h.nodegroupOf(req)
	if err == nil {
		err = h.checkUpdatable(d, n)
	}
	if err != nil {
		h.writeErr(w, req, err)
		return
	}
	cl := d.cluster(n.Account, n.Region, n.Cluster)
	u := eksUpdate{Type: EKSUpdateVersion, Force: in.Force, PrevVersion: n.Version, PrevRelease: n.ReleaseVersion}
	if n.LaunchTemplate != nil {
		u.PrevLTVersion = n.LaunchTemplate.Version
	}
	version := in.Version
	if version == "" {
		version = n.Version
		if in.ReleaseVersion == "" && in.LaunchTemplate == nil {
			version = cl.Version
		}
	}
	switch {
	case !eksVersionRE.MatchString(version):
		err = eksInvalid("Requested Nodegroup Kubernetes version %s is invalid", version)
	case minorOf(version) > minorOf(cl.Version):
		err = eksInvalid("Requested Nodegroup Kubernetes version %s is newer than the cluster's %s", version, cl.Version)
	case minorOf(version) < minorOf(n.Version):
		err = eksInvalid("Requested Nodegroup Kubernetes version %s is older than the node group's %s", version, n.Version)
	case minorOf(version) > minorOf(n.Version)+1:
		err = eksInvalid("Requested Nodegroup Kubernetes version %s skips a minor version: update to 1.%d first", version, minorOf(n.Version)+1)
	case in.LaunchTemplate != nil && n.LaunchTemplate == nil:
		err = eksInvalid("The node group was not created with a launch template: it cannot be updated to one")
	}
	if err != nil {
		h.writeErr(w, req, err)
		return
	}
	release := in.ReleaseVersion
	if release == "" {
		release = n.ReleaseVersion
		if version != n.Version || in.LaunchTemplate == nil {
			release = defaultRelease(version)
		}
	}
	if m := eksReleaseRE.FindStringSubmatch(release); m == nil || m[1] != version {
		h.writeErr(w, req, eksInvalid("Requested release version %s is not valid for Kubernetes version %s", release, version))
		return
	}
	var lt *eksLaunchTemplate
	if n.LaunchTemplate != nil {
		c := *n.LaunchTemplate
		lt = &c
		if in.LaunchTemplate != nil {
			if in.LaunchTemplate.ID != "" && in.LaunchTemplate.ID != c.ID || in.LaunchTemplate.Name != "" && in.LaunchTemplate.Name != c.Name {
				h.writeErr(w, req, eksInvalid("The launch template of a node group cannot change: update its version"))
				return
			}
			lt.Version = in.LaunchTemplate.Version
		}
	}
	if version == n.Version && release == n.ReleaseVersion && (lt == nil || *lt == *n.LaunchTemplate) {
		h.writeErr(w, req, eksInvalid("Nodegroup %s is already at version %s with release %s", n.Name, version, release))
		return
	}
	u.Params = []eksUpdateParam{{Type: "Version", Value: version}, {Type: "ReleaseVersion", Value: release}}
	if lt != nil {
		u.Params = append(u.Params, eksUpdateParam{Type: "LaunchTemplateVersion", Value: lt.Version})
	}
	n.Version, n.ReleaseVersion, n.LaunchTemplate = version, release, lt
	h.startUpdate(w, req, d, n, u)
}

// checkUpdatable refuses an update while another runs or the node group is
// not active, as EKS does.
func (h *eksHandler) checkUpdatable(d *eksFaceData, n *eksNodegroup) error {
	if u := d.running(n); u != nil {
		return eksInUse("Nodegroup %s already has an update in progress (update %s)", n.Name, u.ID)
	}
	if n.Status != EKSStatusActive && n.Status != EKSStatusDegraded {
		return eksInUse("Nodegroup %s is currently %s and cannot be updated", n.Name, n.Status)
	}
	return nil
}

// startUpdate records u for n (already changed in d), applies the node
// group's new model to its ASG and answers the update.
func (h *eksHandler) startUpdate(w http.ResponseWriter, req *eksRequest, d *eksFaceData, n *eksNodegroup, u eksUpdate) {
	now := h.env.Cloud.clock.Now().UTC()
	u.ID = newRequestID()
	u.Account, u.Region, u.Cluster, u.Nodegroup = n.Account, n.Region, n.Cluster, n.Name
	u.Status, u.CreatedAt = EKSUpdateInProgress, now
	n.Status, n.ModifiedAt, n.Health = EKSStatusUpdating, now, nil
	d.Updates = append(d.Updates, u)
	if err := saveEKSData(h.env.Cloud, d); err != nil {
		h.writeErr(w, req, err)
		return
	}
	// The model only: the loop surges and drains.
	if g, err := h.env.Cloud.Scope(AWSFaceName, AWSScope(n.Account, n.Region)).GetGroup(n.ASG); err == nil {
		if _, err := h.face.applyASG(h.env, n, g.Capacity); err != nil {
			h.writeErr(w, req, err)
			return
		}
	}
	h.face.kickLocked(h.env)
	writeEKSResult(w, req, map[string]any{"update": u.out()})
}

func (h *eksHandler) describeUpdate(w http.ResponseWriter, _ *http.Request, req *eksRequest) {
	ng := req.query.Get("nodegroupName")
	for _, u := range h.data().Updates {
		if u.Account == req.account && u.Region == req.region && u.Cluster == req.path[1] && u.ID == req.path[3] && (ng == "" || u.Nodegroup == ng) {
			writeEKSResult(w, req, map[string]any{"update": u.out()})
			return
		}
	}
	h.writeErr(w, req, eksNotFound("No update found for ID: %s", req.path[3]))
}

func (h *eksHandler) listUpdates(w http.ResponseWriter, _ *http.Request, req *eksRequest) {
	ng := req.query.Get("nodegroupName")
	d := h.data()
	if d.cluster(req.account, req.region, req.path[1]) == nil {
		h.writeErr(w, req, eksNotFound("No cluster found for name: %s.", req.path[1]))
		return
	}
	if ng != "" && d.nodegroup(req.account, req.region, req.path[1], ng) == nil {
		h.writeErr(w, req, eksNotFound("No node group found for name: %s.", ng))
		return
	}
	ids := []string{}
	for _, u := range d.Updates {
		if u.Account == req.account && u.Region == req.region && u.Cluster == req.path[1] && u.Nodegroup == ng {
			ids = append(ids, u.ID)
		}
	}
	writeEKSResult(w, req, map[string]any{"updateIds": ids})
}

// tags

// tagged finds the node group or cluster an ARN names.
func (d *eksFaceData) tagged(arn string) (*map[string]string, *eksNodegroup) {
	for i := range d.Nodegroups {
		if d.Nodegroups[i].ARN == arn {
			return &d.Nodegroups[i].Tags, &d.Nodegroups[i]
		}
	}
	for i := range d.Clusters {
		if d.Clusters[i].ARN == arn {
			return &d.Clusters[i].Tags, nil
		}
	}
	return nil, nil
}

func (h *eksHandler) tagResource(w http.ResponseWriter, _ *http.Request, req *eksRequest) {
	var in struct {
		Tags map[string]string `json:"tags"`
	}
	if err := json.Unmarshal(req.body, &in); err != nil || len(in.Tags) == 0 {
		h.writeErr(w, req, eksInvalid("tags are required"))
		return
	}
	h.changeTags(w, req, func(t map[string]string) { maps.Copy(t, in.Tags) })
}

func (h *eksHandler) untagResource(w http.ResponseWriter, _ *http.Request, req *eksRequest) {
	keys := req.query["tagKeys"]
	h.changeTags(w, req, func(t map[string]string) {
		for _, k := range keys {
			delete(t, k)
		}
	})
}

func (h *eksHandler) changeTags(w http.ResponseWriter, req *eksRequest, fn func(map[string]string)) {
	arn := strings.Join(req.path[1:], "/")
	h.face.mu.Lock()
	defer h.face.mu.Unlock()
	d := h.data()
	tags, n := d.tagged(arn)
	if tags == nil {
		h.writeErr(w, req, eksNotFound("No resource found for ARN: %s", arn))
		return
	}
	if *tags == nil {
		*tags = map[string]string{}
	}
	fn(*tags)
	if err := saveEKSData(h.env.Cloud, d); err != nil {
		h.writeErr(w, req, err)
		return
	}
	if n != nil && n.Status != EKSStatusDeleting {
		// Instances launched from now on carry the new tags.
		if g, err := h.env.Cloud.Scope(AWSFaceName, AWSScope(n.Account, n.Region)).GetGroup(n.ASG); err == nil {
			if _, err := h.face.applyASG(h.env, n, g.Capacity); err != nil {
				h.writeErr(w, req, err)
				return
			}
		}
	}
	writeEKSResult(w, req, map[string]any{})
}

func (h *eksHandler) listTags(w http.ResponseWriter, _ *http.Request, req *eksRequest) {
	arn := strings.Join(req.path[1:], "/")
	tags, _ := h.data().tagged(arn)
	if tags == nil {
		h.writeErr(w, req, eksNotFound("No resource found for ARN: %s", arn))
		return
	}
	out := *tags
	if out == nil {
		out = map[string]string{}
	}
	writeEKSResult(w, req, map[string]any{"tags": out})
}

// The node group's Auto Scaling group.

// applyASG writes the node group's ASG (a group of the AWS face) with its
// current model and the given capacity. New instances launch from the
// model; existing ones keep theirs.
func (f *EKSFace) applyASG(env FaceEnv, n *eksNodegroup, capacity int32) (*Group, error) {
	sc := env.Cloud.Scope(AWSFaceName, AWSScope(n.Account, n.Region))
	ami := eksImageID(n)
	var zones []string
	for _, s := range n.Subnets {
		if sn := findSubnet(n.Account, n.Region, s); sn != nil {
			zones = append(zones, sn.zone)
		}
	}
	slices.Sort(zones)
	zones = slices.Compact(zones)
	instTags := []awsapi.Tag{
		{Key: EKSTagClusterName, Value: n.Cluster},
		{Key: EKSTagNodegroupName, Value: n.Name},
		{Key: "kubernetes.io/cluster/" + n.Cluster, Value: "owned"},
		{Key: EKSTagRelease, Value: n.release()},
	}
	for _, k := range slices.Sorted(maps.Keys(n.Tags)) {
		instTags = append(instTags, awsapi.Tag{Key: k, Value: n.Tags[k]})
	}
	p := awsGroupPayload{
		Name: n.ASG, CreatedTime: n.CreatedAt, HealthCheckType: "EC2", DefaultCooldown: 300,
		ARN:          fmt.Sprintf("arn:aws:autoscaling:%s:%s:autoScalingGroup:%s:autoScalingGroupName/%s", n.Region, n.Account, awsHex(8, n.ARN), n.ASG),
		InstanceType: n.InstanceTypes[0], ImageID: ami, Spot: n.CapacityType == "SPOT",
		TemplateTags: instTags, MinSize: n.MinSize, MaxSize: max(n.MaxSize, capacity), Desired: capacity,
		Subnets: slices.Clone(n.Subnets), Zones: zones,
		Tags: []awsTag{
			{Key: EKSTagClusterName, Value: n.Cluster, PropagateAtLaunch: true},
			{Key: EKSTagNodegroupName, Value: n.Name, PropagateAtLaunch: true},
			{Key: "k8s.io/cluster-autoscaler/enabled", Value: "true", PropagateAtLaunch: true},
			{Key: "k8s.io/cluster-autoscaler/" + n.Cluster, Value: "owned", PropagateAtLaunch: true},
		},
	}
	payload, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	kubelet := "v" + strings.SplitN(n.ReleaseVersion, "-", 2)[0]
	model := Model{
		InstanceType: n.InstanceTypes[0], Image: ami, Zones: zones, CustomData: eksCloudInit(n),
		Tags:  map[string]string{EKSTagClusterName: n.Cluster, EKSTagNodegroupName: n.Name},
		Extra: map[string]string{ExtraVersion: kubelet},
	}
	return sc.ApplyGroup(n.ASG, GroupSpec{Capacity: capacity, ModelHash: n.release(), Model: model, Payload: payload})
}

// eksImageID is the AMI of a node group's release.
func eksImageID(n *eksNodegroup) string {
	return "ami-" + awsHex(17, "eks-ami", n.Region, n.AMIType, n.ReleaseVersion)
}

// eksNodeLabels are the labels a node group's Nodes register with.
func eksNodeLabels(n *eksNodegroup) map[string]string {
	l := maps.Clone(n.Labels)
	if l == nil {
		l = map[string]string{}
	}
	l[EKSLabelNodegroup] = n.Name
	l[EKSLabelCapacityType] = n.CapacityType
	l[EKSLabelNodegroupImage] = eksImageID(n)
	if n.LaunchTemplate != nil {
		l["eks.amazonaws.com/sourceLaunchTemplateId"] = n.LaunchTemplate.ID
		l["eks.amazonaws.com/sourceLaunchTemplateVersion"] = n.LaunchTemplate.Version
	}
	return l
}

// eksCloudInit is the bootstrap data EKS gives a node group's instances: a
// kubeadm join of the cluster's API server with the node group's token,
// labels and taints. Without a workload API server it is empty (the
// instances boot and never join).
func eksCloudInit(n *eksNodegroup) []byte {
	if n.Endpoint == "" || n.Token == "" || n.CAHash == "" {
		return nil
	}
	labels := eksNodeLabels(n)
	var pairs []string
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		pairs = append(pairs, k+"="+labels[k])
	}
	var taints strings.Builder
	if len(n.Taints) > 0 {
		taints.WriteString("      taints:\n")
		for _, t := range n.Taints {
			fmt.Fprintf(&taints, "      - key: %q\n        value: %q\n        effect: %s\n", t.Key, t.Value, eksTaintEffects[t.Effect])
		}
	}
	host := strings.TrimPrefix(strings.TrimPrefix(n.Endpoint, "https://"), "http://")
	return fmt.Appendf(nil, `## template: jinja
#cloud-config
write_files:
- path: /run/kubeadm/kubeadm-join-config.yaml
  owner: root:root
  permissions: '0640'
  content: |
    apiVersion: kubeadm.k8s.io/v1beta3
    kind: JoinConfiguration
    discovery:
      bootstrapToken:
        apiServerEndpoint: %s
        token: %s
        caCertHashes:
        - %s
    nodeRegistration:
      name: '{{ ds.meta_data["local_hostname"] }}'
%s      kubeletExtraArgs:
        node-labels: %q
runcmd:
- kubeadm join --config /run/kubeadm/kubeadm-join-config.yaml
`, host, n.Token, n.CAHash, taints.String(), strings.Join(pairs, ","))
}
