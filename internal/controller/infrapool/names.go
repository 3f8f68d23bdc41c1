package infrapool

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/mpool-dev/mpool/internal/capi"
)

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

// LabelValue is capi.LabelValue: the value of a name label.
func LabelValue(v string) string { return capi.LabelValue(v) }

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
