package gcp_test

import (
	"context"
	"crypto/tls"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mpool-dev/mpool/internal/provider/contract/contracttest"
	"github.com/mpool-dev/mpool/internal/provider/gcp"
	"github.com/mpool-dev/mpool/internal/scalegroup"
	"github.com/mpool-dev/mpool/internal/testenv/cloudtest"
	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/face/gcpface"
	"github.com/mpool-dev/mpool/sim/server"
)

// startGCP starts a simulated cloud on a fake clock with the GCP face
// (face, nil for the default one) and the ScaleGroup reaching it with the
// default service account's key (through the transport wrap returns, if
// any).
func startGCP(t testing.TB, face *gcpface.GCPFace, wrap ...func(http.RoundTripper) http.RoundTripper) *cloudtest.Env {
	t.Helper()
	o := cloudtest.Options{Face: gcpface.GCPFaceName, Simulation: cloudtest.DefaultSimulation, Ignored: []string{gcpface.OpGCPToken}}
	if face != nil {
		o.Faces = []core.Face{face}
	}
	return cloudtest.Start(t, o, func(c *cloudtest.Env) (scalegroup.ScaleGroup, error) {
		pool, err := server.CertPool(c.Srv.CA())
		if err != nil {
			return nil, err
		}
		var tr http.RoundTripper = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}
		for _, w := range wrap {
			tr = w(tr)
		}
		base := &http.Client{Timeout: 30 * time.Second, Transport: tr}
		u := c.FaceURL()
		acct := (&gcpface.GCPFace{}).DefaultAccount()
		key := gcp.KeyFile(acct.Tenant, acct.ID, acct.Secret, u+"/token")
		return gcp.New(gcp.Options{Endpoint: u, Clock: c.Clk, Credentials: &gcp.Credentials{Base: base, DefaultKey: key}}), nil
	})
}

func ref(name string) scalegroup.Ref {
	return scalegroup.Ref{Name: name, Scope: gcpface.GCPDefaultProject, Location: "us-central1", Namespace: "default"}
}

func spec(capacity int32, hash, userData string) scalegroup.GroupSpec {
	return scalegroup.GroupSpec{Capacity: capacity, ModelHash: hash, Model: scalegroup.Model{
		InstanceType: "n2-standard-2",
		Image:        "projects/mpool-sim/global/images/family/capi-ubuntu-1804-k8s-v1-30",
		Zones:        []string{"us-central1-a", "us-central1-b"},
		Version:      "v1.30.4",
		CustomData:   []byte(userData),
		Tags:         map[string]string{"mpool.dev/pool": "default/pool0", "capg-role": "node"},
		Provider:     gcp.Template{Network: "projects/mpool-sim/global/networks/default", ServiceAccount: "default", CanIPForward: true},
	}}
}

// TestScaleGroupKeepsTheContract runs the ScaleGroup contract suite on the
// GCP provider against the simulated Compute Engine, through the real
// cloud.google.com/go/compute REST clients.
func TestScaleGroupKeepsTheContract(t *testing.T) {
	e := startGCP(t, nil)
	contracttest.ScaleGroup(t, e.ContractCase(t, ref, func(capacity int32, hash string) scalegroup.GroupSpec {
		return spec(capacity, hash, "#cloud-config\n")
	}))
}

// TestZonalGroup: a ref located in a zone is a zonal group, whose
// instances are all in it, with gce:// providerIDs.
func TestZonalGroup(t *testing.T) {
	e := startGCP(t, nil)
	r := ref("zonal0")
	r.Location = "us-central1-c"
	s := spec(2, "h1", "#cloud-config\n")
	s.Model.Zones = []string{"us-central1-c"}
	e.Apply(t, r, s)
	g := e.Settle(t, r)
	if len(g.Instances) != 2 {
		t.Fatalf("instances: %+v", g.Instances)
	}
	for _, in := range g.Instances {
		if in.Zone != "us-central1-c" || in.ProviderID != "gce://mpool-sim/us-central1-c/"+in.ID || !strings.HasPrefix(in.ID, "zonal0-") {
			t.Errorf("instance %+v", in)
		}
	}
}

// TestModelChangeIsANewTemplate: a model change writes a new instance
// template and sets it (existing instances keep theirs); applying it again
// writes nothing; a token rotation at rest writes nothing, and is sent
// with the next scale-up as a new template.
func TestModelChangeIsANewTemplate(t *testing.T) {
	e := startGCP(t, nil)
	r := ref("pool0")
	e.Apply(t, r, spec(2, "aaaa", "token-1"))
	g := e.Settle(t, r)
	old := g.Template.ID

	_, got := e.ApplyCounted(t, r, spec(2, "bbbb", "token-1"))
	if got[gcpface.OpGCPTemplatesInsert] != 1 || got[gcpface.OpGCPIGMSetInstanceTemplate] != 1 || got[gcpface.OpGCPIGMResize] != 0 {
		t.Errorf("a model change made %v", got)
	}
	g = e.Get(t, r)
	if g.Template.ID == old || !slices.ContainsFunc(g.Instances, func(in scalegroup.Instance) bool { return in.Template.ID == old }) {
		t.Errorf("after a model change: template %s, instances %+v", g.Template.ID, g.Instances)
	}
	for _, s := range []scalegroup.GroupSpec{spec(2, "bbbb", "token-1"), spec(2, "bbbb", "token-2")} {
		if _, got := e.ApplyCounted(t, r, s); got.Total() != 2 {
			t.Errorf("applying at rest made %v, want the group's and its instances' reads only", got)
		}
	}
	_, got = e.ApplyCounted(t, r, spec(3, "bbbb", "token-2"))
	if got[gcpface.OpGCPTemplatesInsert] != 1 || got[gcpface.OpGCPIGMSetInstanceTemplate] != 1 || got[gcpface.OpGCPIGMResize] != 1 {
		t.Errorf("a scale-up with a rotated token made %v", got)
	}
}

// TestUnknownMachineTypeIsInvalid: a machine type the group's zones do not
// offer is refused, naming it and the zone.
func TestUnknownMachineTypeIsInvalid(t *testing.T) {
	e := startGCP(t, nil)
	s := spec(1, "h1", "x")
	s.Model.InstanceType = "n9-huge-1"
	_, err := e.SG.Apply(context.Background(), ref("bad0"), s)
	if !scalegroup.IsInvalid(err) || !strings.Contains(err.Error(), "n9-huge-1") || !strings.Contains(err.Error(), "us-central1-a") {
		t.Fatalf("Apply: %v, want Invalid naming the machine type and zone", err)
	}
}

// TestCPUQuota: a resize beyond the project's CPUS quota is QuotaExceeded.
func TestCPUQuota(t *testing.T) {
	e := startGCP(t, &gcpface.GCPFace{CPUQuota: 8})
	r := ref("pool0")
	e.Apply(t, r, spec(2, "h1", "x"))
	_, err := e.SG.Apply(context.Background(), r, spec(5, "h1", "x"))
	if !scalegroup.IsQuotaExceeded(err) || !strings.Contains(err.Error(), "CPUS") {
		t.Fatalf("Apply: %v, want QuotaExceeded naming the CPUS quota", err)
	}
}

// TestDeleteRemovesTemplates: deleting the group, then (once it is gone)
// its templates, leaves nothing; Get is NotFound only then.
func TestDeleteRemovesTemplates(t *testing.T) {
	e := startGCP(t, nil)
	r := ref("pool0")
	e.Apply(t, r, spec(1, "h1", "x"))
	e.Settle(t, r)
	e.Apply(t, r, spec(1, "h2", "x"))
	ctx := context.Background()
	for range 30 {
		if err := e.SG.Delete(ctx, r); err != nil {
			t.Fatal(err)
		}
		e.Clk.Step(time.Second)
		if _, err := e.SG.Get(ctx, r); scalegroup.IsNotFound(err) {
			return
		} else if err != nil {
			t.Fatal(err)
		}
	}
	t.Fatal("the group and its templates were not deleted")
}

// TestRefusedKey: a deleted service account key is Unauthorized.
func TestRefusedKey(t *testing.T) {
	e := startGCP(t, nil)
	if err := gcpface.GCPDeleteKey(e.Srv.Cloud(), gcpface.GCPDefaultKeyID); err != nil {
		t.Fatal(err)
	}
	_, err := e.SG.Get(context.Background(), ref("pool0"))
	if !scalegroup.IsUnauthorized(err) || !strings.Contains(err.Error(), "invalid_grant") {
		t.Fatalf("Get: %v, want Unauthorized naming invalid_grant", err)
	}
}
