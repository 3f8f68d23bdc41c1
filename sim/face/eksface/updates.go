package eksface

import (
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/mpool-dev/mpool/sim/face/awsface"
)

// node group updates

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
		Repair        *eksRepairConfig  `json:"nodeRepairConfig"`
	}
	h.update(w, req, &in, func(_ *eksFaceData, n *eksNodegroup) (eksUpdate, error) {
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
				return u, err
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
				return u, err
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
				return u, err
			}
			b, _ := json.Marshal(c)
			u.Params = append(u.Params, eksUpdateParam{Type: "UpdateConfig", Value: string(b)})
			n.MaxUnavailable, n.MaxUnavailPct = ptrOr(c.MaxUnavailable, 0), ptrOr(c.MaxUnavailablePercentage, 0)
			if n.MaxUnavailable == 0 && n.MaxUnavailPct == 0 {
				n.MaxUnavailable = 1
			}
		}
		if c := in.Repair; c != nil {
			if err := validRepair(c); err != nil {
				return u, err
			}
			u.Params = append(u.Params, repairParams(c)...)
			n.Repair = c
		}
		if len(u.Params) == 0 {
			return u, eksInvalid("No changes needed")
		}
		return u, nil
	})
}

func (h *eksHandler) updateNodegroupVersion(w http.ResponseWriter, _ *http.Request, req *eksRequest) {
	var in struct {
		Version        string             `json:"version"`
		ReleaseVersion string             `json:"releaseVersion"`
		LaunchTemplate *eksLaunchTemplate `json:"launchTemplate"`
		Force          bool               `json:"force"`
	}
	h.update(w, req, &in, func(d *eksFaceData, n *eksNodegroup) (eksUpdate, error) {
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
			return u, eksInvalid("Requested Nodegroup Kubernetes version %s is invalid", version)
		case minorOf(version) > minorOf(cl.Version):
			return u, eksInvalid("Requested Nodegroup Kubernetes version %s is newer than the cluster's %s", version, cl.Version)
		case minorOf(version) < minorOf(n.Version):
			return u, eksInvalid("Requested Nodegroup Kubernetes version %s is older than the node group's %s", version, n.Version)
		case minorOf(version) > minorOf(n.Version)+1:
			return u, eksInvalid("Requested Nodegroup Kubernetes version %s skips a minor version: update to 1.%d first", version, minorOf(n.Version)+1)
		case in.LaunchTemplate != nil && n.LaunchTemplate == nil:
			return u, eksInvalid("The node group was not created with a launch template: it cannot be updated to one")
		}
		release := in.ReleaseVersion
		if release == "" {
			release = n.ReleaseVersion
			if version != n.Version || in.LaunchTemplate == nil {
				release = defaultRelease(version)
			}
		}
		if m := eksReleaseRE.FindStringSubmatch(release); m == nil || m[1] != version {
			return u, eksInvalid("Requested release version %s is not valid for Kubernetes version %s", release, version)
		}
		var lt *eksLaunchTemplate
		if n.LaunchTemplate != nil {
			c := *n.LaunchTemplate
			lt = &c
			if in.LaunchTemplate != nil {
				if in.LaunchTemplate.ID != "" && in.LaunchTemplate.ID != c.ID || in.LaunchTemplate.Name != "" && in.LaunchTemplate.Name != c.Name {
					return u, eksInvalid("The launch template of a node group cannot change: update its version")
				}
				lt.Version = in.LaunchTemplate.Version
			}
		}
		if version == n.Version && release == n.ReleaseVersion && (lt == nil || *lt == *n.LaunchTemplate) {
			return u, eksInvalid("Nodegroup %s is already at version %s with release %s", n.Name, version, release)
		}
		u.Params = []eksUpdateParam{{Type: "Version", Value: version}, {Type: "ReleaseVersion", Value: release}}
		if lt != nil {
			u.Params = append(u.Params, eksUpdateParam{Type: "LaunchTemplateVersion", Value: lt.Version})
		}
		n.Version, n.ReleaseVersion, n.LaunchTemplate = version, release, lt
		return u, nil
	})
}

// update serves an update of the request's node group: it decodes the
// request's body into in and, with the face locked, has change describe
// the update and apply it to the node group n (in d), unless the node
// group cannot be updated (checkUpdatable); then it starts the update.
func (h *eksHandler) update(w http.ResponseWriter, req *eksRequest, in any, change func(d *eksFaceData, n *eksNodegroup) (eksUpdate, error)) {
	if err := json.Unmarshal(req.body, in); err != nil {
		h.writeErr(w, req, eksInvalid("the request body is not valid JSON: %v", err))
		return
	}
	h.face.mu.Lock()
	defer h.face.mu.Unlock()
	d, n, err := h.nodegroupOf(req)
	if err == nil {
		err = h.checkUpdatable(d, n)
	}
	var u eksUpdate
	if err == nil {
		u, err = change(d, n)
	}
	if err != nil {
		h.writeErr(w, req, err)
		return
	}
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
	now := h.env.Cloud.Clock().Now().UTC()
	u.ID = awsface.NewRequestID()
	u.Account, u.Region, u.Cluster, u.Nodegroup = n.Account, n.Region, n.Cluster, n.Name
	u.Status, u.CreatedAt = EKSUpdateInProgress, now
	n.Status, n.ModifiedAt, n.Health = EKSStatusUpdating, now, nil
	d.Updates = append(d.Updates, u)
	if err := saveEKSData(h.env.Cloud, d); err != nil {
		h.writeErr(w, req, err)
		return
	}
	// The model only: the loop surges and drains.
	if err := h.face.reapplyASG(h.env, n); err != nil {
		h.writeErr(w, req, err)
		return
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
		if err := h.face.reapplyASG(h.env, n); err != nil {
			h.writeErr(w, req, err)
			return
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
