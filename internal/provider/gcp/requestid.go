package gcp

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"

	"cloud.google.com/go/compute/apiv1/computepb"

	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// requestID is the requestId of a write to the group of ref (Compute
// Engine performs a write once per requestId, answering a repeat with the
// first one's operation): a UUID derived from the write (its verb and
// arguments) and the state of the group it was decided on (igm's ID and
// fingerprint, which changes with every write to the group; nil for a
// group to create). A write repeated on the same state, such as a retry
// after a lost answer or a restarted manager's before it saw the effect,
// is the same request; the same write decided later, on a changed group,
// is a new one. A new group's insert is keyed by its instance template,
// whose name carries the user data's digest, so that a pool deleted and
// created again is a new request; deleteInstances by the instances' IDs.
// Instance templates' inserts and deletes, and the group's delete, carry
// none: they are idempotent by name (alreadyExists, notFound), and a
// requestId could not tell a group created again from the first.
func requestID(ref scalegroup.Ref, igm *computepb.InstanceGroupManager, verb string, args ...string) string {
	parts := []string{ref.Scope, ref.Location, ref.Name, verb}
	if igm != nil {
		parts = append(parts, strconv.FormatUint(igm.GetId(), 10), igm.GetFingerprint())
	}
	sum := sha256.Sum256([]byte(strings.Join(append(parts, args...), "\x00")))
	// A version 8 (custom) RFC 9562 UUID.
	sum[6] = sum[6]&0x0f | 0x80
	sum[8] = sum[8]&0x3f | 0x80
	h := hex.EncodeToString(sum[:16])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}
