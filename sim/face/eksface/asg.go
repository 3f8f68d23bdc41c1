package eksface

import (
	"bytes"
	"maps"
	"slices"
	"strings"

	"github.com/mpool-dev/mpool/sim/cloudinit"
	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/face/awsface"
	"github.com/mpool-dev/mpool/sim/wire/awsapi"
	corev1 "k8s.io/api/core/v1"
)

// The node group's Auto Scaling group.

// applyASG writes the node group's ASG (a group of the AWS face) with its
// current model and the given desired capacity. New instances launch from
// the model; existing ones keep theirs. What launchLimit holds back is not
// launched (the group's capacity in the core stays below its desired
// capacity, never below the instances it has) and is recorded as a failed
// scaling activity; relaunch retries it.
func (f *EKSFace) applyASG(env core.FaceEnv, n *eksNodegroup, capacity int32) (*core.Group, error) {
	sc := asgScope(env, n)
	existing, _ := sc.GetGroup(n.ASG)
	launch := capacity
	fit, issue := f.launchLimit(env, n)
	if fit >= 0 && int(capacity) > fit {
		have := 0
		if existing != nil {
			have = int(existing.Capacity)
		}
		launch = int32(max(fit, min(int(capacity), have)))
	}
	ami := eksImageID(n)
	var zones []string
	for _, s := range n.Subnets {
		if z, ok := awsface.AWSSubnetZone(n.Account, n.Region, s); ok {
			zones = append(zones, z)
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
	payload, err := awsface.AWSManagedGroup{
		Name: n.ASG, CreatedTime: n.CreatedAt, ARN: awsface.AWSGroupARN(n.Account, n.Region, awsface.AWSHex(8, n.ARN), n.ASG),
		InstanceType: n.InstanceTypes[0], ImageID: ami, Spot: n.CapacityType == "SPOT",
		InstanceTags: instTags, MinSize: n.MinSize, MaxSize: max(n.MaxSize, capacity), Desired: capacity,
		Subnets: slices.Clone(n.Subnets), Zones: zones,
		Tags: []awsface.AWSGroupTag{
			{Key: EKSTagClusterName, Value: n.Cluster, PropagateAtLaunch: true},
			{Key: EKSTagNodegroupName, Value: n.Name, PropagateAtLaunch: true},
			{Key: "k8s.io/cluster-autoscaler/enabled", Value: "true", PropagateAtLaunch: true},
			{Key: "k8s.io/cluster-autoscaler/" + n.Cluster, Value: "owned", PropagateAtLaunch: true},
		},
	}.Payload()
	if err != nil {
		return nil, err
	}
	kubelet := "v" + strings.SplitN(n.ReleaseVersion, "-", 2)[0]
	model := core.Model{
		InstanceType: n.InstanceTypes[0], Image: ami, Zones: zones, CustomData: eksCloudInit(n),
		Tags:  map[string]string{EKSTagClusterName: n.Cluster, EKSTagNodegroupName: n.Name},
		Extra: map[string]string{core.ExtraVersion: kubelet},
	}
	if launch < capacity && existing != nil && existing.Capacity == launch && existing.ModelHash == n.release() && bytes.Equal(existing.Payload, payload) {
		// Still held back: nothing to write (the loop retries each tick).
		if cd, err := sc.CustomData(n.ASG); err == nil && bytes.Equal(cd, model.CustomData) {
			return existing, nil
		}
	}
	g, err := sc.ApplyGroup(n.ASG, core.GroupSpec{Capacity: launch, ModelHash: n.release(), Model: model, Payload: payload})
	if err == nil && launch < capacity && issue != nil {
		f.heldBack(env, n, issue, launch, capacity)
	}
	return g, err
}

// asgScope is the core scope of the node group's Auto Scaling group: its
// account's region of the AWS face.
func asgScope(env core.FaceEnv, n *eksNodegroup) core.Scope {
	return env.Cloud.Scope(awsface.AWSFaceName, awsface.AWSScope(n.Account, n.Region))
}

// reapplyASG writes the node group's current model to its Auto Scaling
// group, keeping the group's capacity: instances launched from now on
// launch from it. A group that is gone is left so.
func (f *EKSFace) reapplyASG(env core.FaceEnv, n *eksNodegroup) error {
	g, err := asgScope(env, n).GetGroup(n.ASG)
	if err != nil {
		return nil
	}
	_, err = f.applyASG(env, n, g.Capacity)
	return err
}

// eksImageID is the AMI of a node group's release.
func eksImageID(n *eksNodegroup) string {
	return "ami-" + awsface.AWSHex(17, "eks-ami", n.Region, n.AMIType, n.ReleaseVersion)
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
	var taints []corev1.Taint
	for _, t := range n.Taints {
		taints = append(taints, corev1.Taint{Key: t.Key, Value: t.Value, Effect: corev1.TaintEffect(eksTaintEffects[t.Effect])})
	}
	return cloudinit.WriteJoin(cloudinit.JoinConfig{
		APIServerEndpoint: strings.TrimPrefix(strings.TrimPrefix(n.Endpoint, "https://"), "http://"),
		DiscoveryToken:    n.Token,
		CACertHashes:      []string{n.CAHash},
		Taints:            taints,
		NodeLabels:        eksNodeLabels(n),
	}, false)
}
