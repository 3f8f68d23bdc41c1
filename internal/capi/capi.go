// Package capi holds what mpool adds to Cluster API's own core types
// (sigs.k8s.io/cluster-api/api/core/v1beta2, which mpool's controllers use as
// their one hub version): the condition types and reasons mpool reports that
// upstream's v1beta2 API does not name, the label-value rule every controller
// and client derives object labels with, and small helpers over upstream
// types. Everything else comes from upstream's API module unchanged.
package capi

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// NodeUninitializedTaintKey is the key of upstream's
// clusterv1.NodeUninitializedTaint, as a constant: a Node of a pool
// registers with it (NoSchedule) until the MachinePool controller has
// matched it to its pool and removes it.
const NodeUninitializedTaintKey = "node.cluster.x-k8s.io/uninitialized"

// LabelValue returns the value of a name label (MachinePoolNameLabel,
// ClusterNameLabel) for an object named v: v itself when it fits a label
// value's 63 characters, else its first 46 characters and a hash of v, so
// that every controller and client derives the same value from the same
// name.
func LabelValue(v string) string {
	if len(v) <= 63 {
		return v
	}
	sum := sha256.Sum256([]byte(v))
	return strings.TrimRight(v[:46], "-_.") + "-" + hex.EncodeToString(sum[:8])
}

// ReplicasManagedExternally reports whether the pool carries
// ReplicasManagedByAnnotation, whatever its value (the value names the
// actor): an external autoscaler owns the replica count, and the
// controllers report it instead of enforcing spec.replicas.
func ReplicasManagedExternally(m *clusterv1.MachinePool) bool {
	if m == nil {
		return false
	}
	_, ok := m.Annotations[clusterv1.ReplicasManagedByAnnotation]
	return ok
}
