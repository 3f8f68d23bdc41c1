package eksface

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/face/awsface"
)

// EKSCreateCluster registers an active EKS cluster named name in account's
// region of the EKS face of c (version "" is EKSDefaultVersion), as
// `aws eks create-cluster` would; its endpoint and CA are the node agent's
// first workload API server's. A cluster that exists is left as it is.
func EKSCreateCluster(c *core.Cloud, account, region, name, version string) error {
	f, _ := c.Face(EKSFaceName).(*EKSFace)
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

func createEKSCluster(c *core.Cloud, account, region, name, version string, tags map[string]string) (*eksCluster, error) {
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
	cl := eksCluster{Account: account, Region: region, Name: name, Version: version, CreatedAt: c.Clock().Now().UTC(), Tags: tags,
		ARN: fmt.Sprintf("arn:aws:eks:%s:%s:cluster/%s", region, account, name)}
	d.Clusters = append(d.Clusters, cl)
	return &cl, saveEKSData(c, d)
}

// clusters

func (h *eksHandler) clusterOut(cl *eksCluster) eksClusterOut {
	o := eksClusterOut{Name: cl.Name, ARN: cl.ARN, CreatedAt: eksTime(cl.CreatedAt), Version: cl.Version, Status: EKSStatusActive,
		PlatformVersion: "eks.1", Tags: cl.Tags}
	if s := h.env.Cloud.Agent().Servers(); len(s) > 0 {
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
	Repair         *eksRepairConfig   `json:"nodeRepairConfig"`
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
		if _, ok := awsface.AWSSubnetZone(req.account, req.region, s); !ok {
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
	if err := validRepair(in.Repair); err != nil {
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
	ltSeen := false
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
		// A template of the AWS face is named by its own ID and name (and
		// watched: its deletion is a health issue); another keeps a made-up
		// ID, as before the AWS face served templates.
		if t, ok := awsface.AWSLaunchTemplate(h.env.Cloud, req.account, req.region, in.LaunchTemplate.ID, in.LaunchTemplate.Name); ok {
			in.LaunchTemplate.ID, in.LaunchTemplate.Name, ltSeen = t.LaunchTemplateID, t.LaunchTemplateName, true
		}
		if in.LaunchTemplate.ID == "" {
			in.LaunchTemplate.ID = "lt-" + awsface.AWSHex(17, "template", req.account, req.region, in.LaunchTemplate.Name)
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
	now := h.env.Cloud.Clock().Now().UTC()
	u := core.UUIDFrom([]byte(awsface.AWSHex(32, "nodegroup", req.account, req.region, clusterName, in.NodegroupName, now.String()))[:16])
	n := &eksNodegroup{
		Account: req.account, Region: req.region, Cluster: clusterName, Name: in.NodegroupName,
		ARN:    fmt.Sprintf("arn:aws:eks:%s:%s:nodegroup/%s/%s/%s", req.region, req.account, clusterName, in.NodegroupName, u),
		ASG:    "eks-" + in.NodegroupName + "-" + u,
		Status: EKSStatusCreating, Version: version, ReleaseVersion: release, AMIType: ami, CapacityType: capacity,
		InstanceTypes: types, DiskSize: disk, Subnets: slices.Clone(in.Subnets), NodeRole: in.NodeRole, RemoteAccess: in.RemoteAccess,
		MinSize: minSize, MaxSize: maxSize, DesiredSize: desired, Labels: in.Labels, Taints: in.Taints, Tags: in.Tags,
		LaunchTemplate: in.LaunchTemplate, LTSeen: ltSeen, CreatedAt: now, ModifiedAt: now, MaxUnavailable: 1, Repair: in.Repair,
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
	switch n.Status {
	case EKSStatusCreating, EKSStatusUpdating, EKSStatusDeleting:
		h.face.kick(h.env)
	case EKSStatusActive, EKSStatusDegraded:
		// EKS watches its node groups' health: here when they are looked
		// at, and by the loop while one is DEGRADED. A loop that holds the
		// lock checks it itself.
		if h.face.mu.TryLock() {
			if d, cur, err := h.nodegroupOf(req); err == nil && (cur.Status == EKSStatusActive || cur.Status == EKSStatusDegraded) &&
				h.face.checkHealth(h.env, cur, h.env.Cloud.Clock().Now().UTC()) {
				if err := saveEKSData(h.env.Cloud, d); err != nil {
					h.face.mu.Unlock()
					h.writeErr(w, req, err)
					return
				}
				h.face.kickLocked(h.env)
				n = cur
			}
			h.face.mu.Unlock()
		}
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
		n.Status, n.ModifiedAt = EKSStatusDeleting, h.env.Cloud.Clock().Now().UTC()
		if err := saveEKSData(h.env.Cloud, d); err != nil {
			h.writeErr(w, req, err)
			return
		}
		h.face.kickLocked(h.env)
	}
	writeEKSResult(w, req, map[string]any{"nodegroup": n.out()})
}
