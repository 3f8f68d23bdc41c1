package aks

import (
	"context"
	"strings"
	"sync"

	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"

	azureprovider "github.com/mpool-dev/mpool/internal/provider/azure"
	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// writes remembers, per agent pool, the last operation mpool started on it
// (by this process, or recorded on the pool by an earlier one: its resume
// token), why it failed once read, and the retries of a failed PUT: an
// agent pool says only "Failed", its operation says why (an upgrade's
// UpgradeFailed names the node it could not drain).
type writes struct {
	mu sync.Mutex
	m  map[string]*write
}

type write struct {
	token  string
	method string // http.MethodPut or http.MethodDelete
	// done: the agent pool was seen at rest since the operation started;
	// an operation seen afterwards is another client's.
	done    bool
	failure string
}

func writeKey(ref scalegroup.Ref) string {
	return strings.ToLower(ref.Scope + "/agentPools/" + ref.Name)
}

// get returns the record of ref, creating it when create is set; nil
// otherwise. The caller holds w.mu.
func (w *writes) get(ref scalegroup.Ref, create bool) *write {
	if w.m == nil {
		w.m = map[string]*write{}
	}
	wr := w.m[writeKey(ref)]
	if wr == nil && create {
		wr = &write{}
		w.m[writeKey(ref)] = wr
	}
	return wr
}

// started records the operation a write on ref started, by its poller's
// resume token.
func (w *writes) started(ref scalegroup.Ref, method, token string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	*w.get(ref, true) = write{token: token, method: method}
}

// recorded takes the operation the pool recorded (an earlier process's)
// when this process knows of none on ref.
func (w *writes) recorded(ref scalegroup.Ref, op scalegroup.Operation) {
	if op.ResumeToken == "" {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.get(ref, false) != nil {
		return
	}
	method := methodPut
	if op.Type == scalegroup.OperationDelete {
		method = methodDelete
	}
	*w.get(ref, true) = write{token: op.ResumeToken, method: method}
}

// inFlight is the resume token of mpool's operation on ref, which is in
// progress; "" when the operation in progress is another client's.
func (w *writes) inFlight(ref scalegroup.Ref) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if wr := w.get(ref, false); wr != nil && !wr.done {
		return wr.token
	}
	return ""
}

// succeeded records that ref is at rest and did not fail.
func (w *writes) succeeded(ref scalegroup.Ref) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if wr := w.get(ref, false); wr != nil {
		wr.done, wr.failure = true, ""
	}
}

// settled records that ref is at rest (its operation, if any, is over).
func (w *writes) settled(ref scalegroup.Ref) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if wr := w.get(ref, false); wr != nil {
		wr.done = true
	}
}

// gone forgets ref (deleted).
func (w *writes) gone(ref scalegroup.Ref) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.m, writeKey(ref))
}

// failure is why mpool's last PUT on ref failed, read from its operation
// (once, by its resume token, even one recorded by an earlier process);
// "" when mpool's last operation is not a failed PUT, or its operation
// cannot be read.
func (w *writes) failure(ctx context.Context, c *sdkClients, at cluster, ref scalegroup.Ref) string {
	w.mu.Lock()
	wr := w.get(ref, false)
	var token string
	if wr != nil && wr.method == methodPut {
		if wr.failure != "" {
			defer w.mu.Unlock()
			return wr.failure
		}
		token = wr.token
	}
	w.mu.Unlock()
	if token == "" {
		return ""
	}
	p, err := c.pools.BeginCreateOrUpdate(ctx, at.resourceGroup, at.name, ref.Name, armcontainerservice.AgentPool{},
		&armcontainerservice.AgentPoolsClientBeginCreateOrUpdateOptions{ResumeToken: token})
	msg := azureprovider.OperationFailure(ctx, p, err)
	if msg == "" {
		return ""
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if wr := w.get(ref, false); wr != nil && wr.token == token {
		wr.failure = msg
	}
	return msg
}

// failedMessage is what a Failed agent pool says: why its last operation
// failed. The engine sends a Failed pool again (Group.Failed), whoever's
// operation failed (an earlier process's whose token is lost, the
// autoscaler's).
func (s *AgentPools) failedMessage(ctx context.Context, c *sdkClients, at cluster, ref scalegroup.Ref) string {
	msg := "the agent pool's last operation failed (provisioningState Failed)"
	if why := s.writes.failure(ctx, c, at, ref); why != "" {
		msg += ": " + why
	}
	s.writes.settled(ref)
	return msg
}

const (
	methodPut    = "PUT"
	methodDelete = "DELETE"
)
