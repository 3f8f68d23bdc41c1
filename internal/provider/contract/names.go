package contract

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// GroupRefAnnotation records on a pool the reference of its scale group
// (scalegroup.Ref.Encode), written once, before the group is first
// created, for adapters whose groups live in a scope the Cluster's
// infrastructure object names (an Azure subscription and resource group,
// an AWS region and identity). Every later call uses it, the deletion
// included, so a pool whose Cluster is gone can still be torn down.
const GroupRefAnnotation = "mpool.dev/scale-group"

// ZoneLabel is the label the engine puts on every per-instance object,
// valued with the availability zone of its instance (the well-known label
// Nodes carry), for kinds whose status has no zone field of their own.
const ZoneLabel = corev1.LabelTopologyZone

// GroupName derives a scale group name from a pool's namespace and name:
// "<namespace>-<name>" lower-cased, with every character other than a-z,
// 0-9 and '-' replaced by '-', followed by a short hash of "namespace/name"
// so that distinct pools never share a group ("a-b"/"c" and "a"/"b-c"), and
// shortened to maxLen. The result is a valid DNS-1123 label when maxLen is at
// most 63, and the same pool always gets the same name.
func GroupName(namespace, name string, maxLen int) string {
	sum := sha256.Sum256([]byte(namespace + "/" + name))
	suffix := "-" + hex.EncodeToString(sum[:4])
	base := sanitize(namespace + "-" + name)
	if room := maxLen - len(suffix); len(base) > room {
		base = strings.TrimRight(base[:max(room, 0)], "-")
	}
	if base == "" {
		return "g" + suffix
	}
	return base + suffix
}

// InstanceObjectName is the name of the per-instance object of instanceID in
// pool: "<pool>-<instanceID>", shortened with a hash if it would exceed the
// 253 characters of an object name.
func InstanceObjectName(pool, instanceID string) string {
	name := pool + "-" + sanitize(instanceID)
	if len(name) <= 253 {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	return strings.TrimRight(name[:236], "-.") + "-" + hex.EncodeToString(sum[:8])
}

// sanitize lower-cases s and replaces characters outside [a-z0-9-] with '-',
// trimming '-' at both ends.
func sanitize(s string) string {
	b := []byte(strings.ToLower(s))
	for i, c := range b {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			b[i] = '-'
		}
	}
	return strings.Trim(string(b), "-")
}
