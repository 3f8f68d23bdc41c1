package aks

import (
	"context"
	"errors"
	"strings"
	"sync"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"

	azureprovider "github.com/mpool-dev/mpool/internal/provider/azure"
	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// writes remembers, per agent pool, the resume token of the last write
// this process started and, once read, why it failed: an agent pool says
// only "Failed", its operation says why (an upgrade's UpgradeFailed names
// the node it could not drain).
type writes struct {
	mu sync.Mutex
	m  map[string]*write
}

type write struct {
	token   string
	failure string
}

func writeKey(ref scalegroup.Ref) string {
	return strings.ToLower(ref.Scope + "/agentPools/" + ref.Name)
}

// started records the write p started on ref.
func (w *writes) started(ref scalegroup.Ref, p *runtime.Poller[armcontainerservice.AgentPoolsClientCreateOrUpdateResponse]) {
	tok, err := p.ResumeToken()
	if err != nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.m == nil {
		w.m = map[string]*write{}
	}
	w.m[writeKey(ref)] = &write{token: tok}
}

// failure is why the last write this process started on ref failed, read
// from its operation (once); "" when it did not fail or is unknown (a
// write of another process, or of this one before a restart).
func (w *writes) failure(ctx context.Context, c *sdkClients, at cluster, ref scalegroup.Ref) string {
	w.mu.Lock()
	wr := w.m[writeKey(ref)]
	w.mu.Unlock()
	if wr == nil {
		return ""
	}
	if wr.failure != "" {
		return wr.failure
	}
	p, err := c.pools.BeginCreateOrUpdate(ctx, at.resourceGroup, at.name, ref.Name, armcontainerservice.AgentPool{},
		&armcontainerservice.AgentPoolsClientBeginCreateOrUpdateOptions{ResumeToken: wr.token})
	if err != nil {
		return ""
	}
	if _, err := p.Poll(ctx); err != nil || !p.Done() {
		return ""
	}
	_, err = p.Result(ctx)
	var re *azcore.ResponseError
	if !errors.As(err, &re) {
		return ""
	}
	msg, why := azureprovider.ErrorBody(re)
	if why != "" {
		msg += ": " + why
	}
	w.mu.Lock()
	wr.failure = msg
	w.mu.Unlock()
	return msg
}
