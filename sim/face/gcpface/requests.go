package gcpface

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/mpool-dev/mpool/sim/admin"
	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/wire/gcpapi"
)

// requestIDRetention is how long the face remembers a write's requestId:
// a write repeated with it within that time is not performed again.
const requestIDRetention = time.Hour

// requests remembers, per face, the operations of the writes that carried
// a requestId, and each group's last operation (its fingerprint).
type requests struct {
	mu sync.Mutex
	// byID are the operations by "<project>/<requestId>".
	byID map[string]requestOp
	// last is each group's last write's operation, by its URL path.
	last map[string]string
}

type requestOp struct {
	op gcpapi.Operation
	at time.Time
}

// repeated answers a write whose requestId (Compute Engine's idempotency
// key, a query parameter of every write) the face has seen within
// requestIDRetention with that write's operation, as Compute Engine does,
// without performing it again; it reports whether it did.
func (h *gcpHandler) repeated(w http.ResponseWriter, r *http.Request) bool {
	id := r.URL.Query().Get("requestId")
	if id == "" {
		return false
	}
	rs := &h.face.requests
	rs.mu.Lock()
	prev, ok := rs.byID[r.PathValue("project")+"/"+id]
	rs.mu.Unlock()
	if !ok || now(h).Sub(prev.at) > requestIDRetention {
		return false
	}
	admin.WriteJSON(w, http.StatusOK, h.operationAt(prev.op, now(h)))
	return true
}

// recordOperation remembers op, the operation of the write r, under the
// write's requestId, and as the last operation of its target.
func (h *gcpHandler) recordOperation(r *http.Request, op gcpapi.Operation) {
	rs := &h.face.requests
	t := now(h)
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.byID == nil {
		rs.byID, rs.last = map[string]requestOp{}, map[string]string{}
	}
	if id := r.URL.Query().Get("requestId"); id != "" {
		if len(rs.byID) > 10000 {
			for k, v := range rs.byID {
				if t.Sub(v.at) > requestIDRetention {
					delete(rs.byID, k)
				}
			}
		}
		rs.byID[r.PathValue("project")+"/"+id] = requestOp{op: op, at: t}
	}
	if len(rs.last) > 10000 {
		clear(rs.last)
	}
	rs.last[targetPath(op.TargetLink)] = op.Name
}

// fingerprint is a group's fingerprint, which changes with every write to
// it (as Compute Engine's, which clients send back for optimistic
// locking): a digest of its template and its last write's operation.
func (h *gcpHandler) fingerprint(r *http.Request, g *core.Group) string {
	rs := &h.face.requests
	rs.mu.Lock()
	last := rs.last[targetPath(h.igmURL(r, g.Name))]
	rs.mu.Unlock()
	sum := sha256.Sum256([]byte(g.ModelHash + "\x00" + last))
	return hex.EncodeToString(sum[:8])
}

// targetPath is a resource URL's path from its project on, whatever host
// the client reached the face at.
func targetPath(u string) string {
	if i := strings.Index(u, computePath); i >= 0 {
		return u[i:]
	}
	return u
}
