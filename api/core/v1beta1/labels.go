package v1beta1

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

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
func (m *MachinePool) ReplicasManagedExternally() bool {
	if m == nil {
		return false
	}
	_, ok := m.Annotations[ReplicasManagedByAnnotation]
	return ok
}
