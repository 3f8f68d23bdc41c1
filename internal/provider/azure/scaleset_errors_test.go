package azure_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"

	"github.com/mpool-dev/mpool/internal/provider/azure"
	"github.com/mpool-dev/mpool/internal/scalegroup"
	"github.com/mpool-dev/mpool/internal/testenv/cloudtest"
	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/face/azureface"
)

func TestErrors(t *testing.T) {
	e := startAzureWith(t, &azureface.AzureFace{VCPUQuota: map[string]int{"standardDSv3Family": 8}}, cloudtest.DefaultSimulation)
	ctx := context.Background()
	e.Apply(t, ref("exists"), spec(1, "h1", "Uniform"))
	// apply is an Apply of one Uniform VM to the scale set name, ref and
	// spec edited first.
	apply := func(name string, edit func(*scalegroup.Ref, *scalegroup.GroupSpec)) func() error {
		return func() error {
			r, s := ref(name), spec(1, "h1", "Uniform")
			edit(&r, &s)
			_, err := e.sg.Apply(ctx, r, s)
			return err
		}
	}

	for _, tc := range []struct {
		name string
		why  string
		call func() error
		// is classifies the error; contains are parts of its message.
		is       func(error) bool
		contains []string
		// noRequests: refused before any request.
		noRequests bool
	}{
		{
			name: "unknown VM size", why: "ARM's SkuNotAvailable says what to change",
			call: apply("bad-sku", func(_ *scalegroup.Ref, s *scalegroup.GroupSpec) { s.Model.InstanceType = "Standard_Nope" }),
			is:   scalegroup.IsInvalid, contains: []string{"SkuNotAvailable", "spec.template.vmSize"},
		},
		{
			name: "zone the size lacks", why: "the size's zones (resourceSkus) are checked before the PUT",
			call: apply("bad-zone", func(_ *scalegroup.Ref, s *scalegroup.GroupSpec) {
				s.Model.InstanceType, s.Model.Zones = "Standard_NC6s_v3", []string{"1"}
			}),
			is: scalegroup.IsInvalid, contains: []string{"not offered in zone 1", "spec.failureDomains"},
		},
		{
			name: "size too small", why: "CAPZ requires 2 vCPUs and 2 GiB",
			call: apply("too-small", func(_ *scalegroup.Ref, s *scalegroup.GroupSpec) { s.Model.InstanceType = "Standard_B1s" }),
			is:   scalegroup.IsInvalid, contains: []string{"Standard_B1s has 1 vCPUs and 1 GiB", "spec.template.vmSize"},
		},
		{
			name: "vCPU quota", why: "409 OperationNotAllowed about quota is QuotaExceeded",
			call: apply("big", func(_ *scalegroup.Ref, s *scalegroup.GroupSpec) { s.Capacity = 5 }),
			is:   scalegroup.IsQuotaExceeded, contains: []string{"OperationNotAllowed", "standardDSv3Family Cores quota"},
		},
		{
			name: "missing scale set", why: "Get of a scale set that does not exist is NotFound",
			call: func() error { _, err := e.sg.Get(ctx, ref("missing")); return err },
			is:   scalegroup.IsNotFound, contains: []string{"ResourceNotFound"},
		},
		{
			name: "invalid name", why: "Azure's naming rules are checked before any request",
			call: func() error { _, err := e.sg.Get(ctx, ref("-bad.")); return err },
			is:   scalegroup.IsInvalid, contains: []string{"not a valid scale set name"}, noRequests: true,
		},
		{
			name: "scope not a resource group", why: "the Ref's scope must be a resource group's ID",
			call: func() error {
				r := ref("pool0")
				r.Scope = "/subscriptions/" + azureface.AzureDefaultSubscriptionID
				_, err := e.sg.Get(ctx, r)
				return err
			},
			is: scalegroup.IsInvalid, contains: []string{"not a resource group's ID"}, noRequests: true,
		},
		{
			name: "model without the Azure part", why: "Model.Provider must be an azure.VMModel",
			call: apply("pool0", func(_ *scalegroup.Ref, s *scalegroup.GroupSpec) { s.Model.Provider = "nope" }),
			is:   scalegroup.IsInvalid, contains: []string{"azure.VMModel"}, noRequests: true,
		},
		{
			name: "no location to create in", why: "a create needs the Ref's location",
			call: apply("nowhere", func(r *scalegroup.Ref, _ *scalegroup.GroupSpec) { r.Location = "" }),
			is:   scalegroup.IsInvalid, contains: []string{"no location"},
		},
		{
			name: "moved location", why: "Azure cannot move a scale set",
			call: apply("exists", func(r *scalegroup.Ref, _ *scalegroup.GroupSpec) { r.Location = "westeurope" }),
			is:   scalegroup.IsInvalid, contains: []string{"cannot move"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.Srv.ResetStats()
			err := tc.call()
			t.Log(err)
			if err == nil || !tc.is(err) {
				t.Fatalf("%s: got %v", tc.why, err)
			}
			for _, s := range tc.contains {
				if !strings.Contains(err.Error(), s) {
					t.Fatalf("%s: %q does not say %q", tc.why, err, s)
				}
			}
			if n := e.Requests().Total(); tc.noRequests && n != 0 {
				t.Fatalf("%s: %d requests", tc.why, n)
			}
			if strings.Contains(err.Error(), "token abc") || strings.Contains(err.Error(), azureface.AzureDefaultClientSecret) {
				t.Fatalf("the error shows custom data or a secret: %v", err)
			}
		})
	}
}

func TestThrottledAndServerErrors(t *testing.T) {
	e := startAzure(t)
	ctx := context.Background()
	r := ref("pool0")
	e.Apply(t, r, spec(1, "h1", "Uniform")) // holds a token from now on

	if err := e.Srv.SetFaceFaults(azureface.AzureFaceName, &core.Faults{ThrottleRate: 1, RetryAfter: 3 * time.Second}); err != nil {
		t.Fatal(err)
	}
	e.Srv.ResetStats()
	_, err := e.sg.Get(ctx, r)
	if ra, ok := scalegroup.IsThrottled(err); !ok || ra != 3*time.Second {
		t.Fatalf("throttled Get: %v (retry after %s), want Throttled for 3s", err, ra)
	}
	// No retries behind the engine's back: the one request was answered.
	if n := e.Requests().Total(); n != 1 {
		t.Fatalf("%d requests for a throttled Get, want 1", n)
	}
	if err := e.sg.DeleteInstances(ctx, r, []string{"0"}); !isThrottled(err) {
		t.Fatalf("throttled DeleteInstances: %v", err)
	}

	if err := e.Srv.SetFaceFaults(azureface.AzureFaceName, &core.Faults{ErrorRate: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.sg.Apply(ctx, r, spec(2, "h1", "Uniform")); !scalegroup.IsTransient(err) {
		t.Fatalf("Apply answered by a server error: %v, want Transient", err)
	}
	if err := e.sg.Delete(ctx, r); !scalegroup.IsTransient(err) {
		t.Fatalf("Delete answered by a server error: %v, want Transient", err)
	}

	// An ARM request budget: 429 with the bucket's Retry-After.
	e2 := startAzureWith(t, &azureface.AzureFace{ScaleSetWrites: core.Budget{Burst: 1, PerSecond: 0.25}}, cloudtest.DefaultSimulation)
	e2.Apply(t, r, spec(1, "h1", "Uniform"))
	_, err = e2.sg.Apply(ctx, r, spec(2, "h1", "Uniform"))
	if ra, ok := scalegroup.IsThrottled(err); !ok || ra != 4*time.Second {
		t.Fatalf("the scale set's write budget spent: %v, want Throttled for 4s", err)
	}
}

func isThrottled(err error) bool { _, ok := scalegroup.IsThrottled(err); return ok }

func TestUnauthorized(t *testing.T) {
	e := startAzure(t)
	ctx := context.Background()
	r := ref("pool0")
	r.Credentials = "default/azure-identity"

	e.creds.renew("wrong-secret")
	_, err := e.sg.Get(ctx, r)
	t.Log(err)
	if !scalegroup.IsUnauthorized(err) {
		t.Fatalf("wrong secret: %v, want Unauthorized", err)
	}
	for _, s := range []string{"AADSTS7000215", azureface.AzureDefaultTenantID, "AzureClusterIdentity default/azure-identity", "Secret"} {
		if !strings.Contains(err.Error(), s) {
			t.Fatalf("wrong secret: %q does not say %q", err, s)
		}
	}
	if strings.Contains(err.Error(), "wrong-secret") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("the error shows the secret or spans lines: %q", err)
	}

	// The manager's own credentials: the hint names its environment.
	r.Credentials = ""
	if _, err := e.sg.Get(ctx, r); !scalegroup.IsUnauthorized(err) || !strings.Contains(err.Error(), "AZURE_CLIENT_SECRET") {
		t.Fatalf("wrong secret of the manager's credentials: %v", err)
	}

	// A resolver's error that is not classified is Unauthorized: the
	// identity needs fixing.
	sg, err := azure.New(azure.Options{ResourceManagerEndpoint: e.Srv.FaceURL(azureface.AzureFaceName), AuthorityHost: e.Srv.FaceURL(azureface.AzureFaceName), Credentials: failingCredentials{}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sg.Get(ctx, r); !scalegroup.IsUnauthorized(err) || !strings.Contains(err.Error(), "no Secret") {
		t.Fatalf("resolver error: %v", err)
	}
}

type failingCredentials struct{}

func (failingCredentials) TokenCredential(context.Context, scalegroup.Ref) (azcore.TokenCredential, error) {
	return nil, errors.New("no Secret")
}
