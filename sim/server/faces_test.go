package server

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/face/localface"
	"github.com/mpool-dev/mpool/sim/wire/localapi"
)

func TestFaceRegistration(t *testing.T) {
	for _, tt := range []struct {
		name  string
		faces []core.Face
		err   string
	}{
		{name: "a second face", faces: []core.Face{acmeFace{}}},
		{name: "the local face cannot be replaced", faces: []core.Face{namedFace{"local"}}, err: "registered twice"},
		{name: "twice the same face", faces: []core.Face{acmeFace{}, acmeFace{}}, err: "registered twice"},
		{name: "a name the server serves itself", faces: []core.Face{namedFace{"admin"}}, err: "reserved"},
		{name: "a name that is no path segment", faces: []core.Face{namedFace{"Acme/1"}}, err: "invalid face name"},
	} {
		c, err := core.NewCloud(context.Background(), core.Options{Faces: withLocal(tt.faces)})
		if c != nil {
			_ = c.Stop()
		}
		if tt.err == "" && err != nil || tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.err)
		}
	}
}

// TestSecondFaceBesideLocal serves the acme face beside the local face on
// one listener (and on one of its own): each speaks its protocol, keeps its
// groups apart and answers injected faults in its own shape.
func TestSecondFaceBesideLocal(t *testing.T) {
	s := startServer(t, core.Options{Seed: 5, Faces: []core.Face{acmeFace{}}, FaceAddrs: map[string]string{"acme": "127.0.0.1:0"}})
	u := s.URL()
	acme := u + "/acme"
	eps := s.FaceEndpoints()
	last := len(eps) - 1 // the local face, the built-in ones, then Options.Faces
	if len(eps) != 2+0 || eps[0] != (FaceEndpoint{Face: core.LocalFace, URL: u}) || eps[last].Face != "acme" || eps[last].URL == acme || s.FaceURL("acme") != eps[last].URL || s.FaceURL("nope") != "" {
		t.Fatalf("endpoints %+v", eps)
	}
	own := s.FaceURL("acme")

	var g acmeGroup
	if resp := call(t, "PUT", acme+"/accounts/111/groups/web", acmeGroupSpec{Size: 2, LaunchTemplate: "lt-1"}, &g); resp.StatusCode != 200 {
		t.Fatalf("PUT acme group: %s", resp.Status)
	}
	if g.Account != "111" || g.LaunchTemplate != "lt-1" || len(g.Instances) != 2 || g.Instances[0].ProviderID != "acme://111/"+g.Instances[0].ID {
		t.Fatalf("acme group %+v", g)
	}
	if resp := call(t, "PUT", u+"/v1/groups/web", localapi.GroupSpec{Capacity: 1}, nil); resp.StatusCode != 200 {
		t.Fatalf("PUT local group of the same name: %s", resp.Status)
	}
	var g2 acmeGroup
	if resp := call(t, "GET", own+"/accounts/111/groups/web", nil, &g2); resp.StatusCode != 200 || len(g2.Instances) != 2 || g2.Instances[0].ID != g.Instances[0].ID {
		t.Fatalf("GET acme group on its own listener: %s %+v", resp.Status, g2)
	}
	var local localapi.Group
	if resp := call(t, "GET", u+"/v1/groups/web", nil, &local); resp.StatusCode != 200 || len(local.Instances) != 1 || local.Instances[0].ProviderID != "local:///web/"+local.Instances[0].ID {
		t.Fatalf("GET local group: %s %+v", resp.Status, local)
	}
	// Admin endpoints reach another face's group by face and scope.
	if resp := call(t, "PUT", u+"/admin/groups/web/capacity?face=acme&scope=111", localapi.Capacity{Capacity: 3}, nil); resp.StatusCode != 200 {
		t.Fatalf("admin capacity of an acme group: %s", resp.Status)
	}
	if g, _ := s.Cloud().Scope("acme", "111").GetGroup("web"); g == nil || g.Capacity != 3 {
		t.Fatalf("acme group after the admin change: %+v", g)
	}

	var stats localapi.Stats
	call(t, "GET", u+"/admin/stats", nil, &stats)
	if !slices.ContainsFunc(stats.Requests, func(r localapi.RequestCount) bool { return r.Face == "acme" && r.Operation == "acme.PutGroup" }) {
		t.Fatalf("admin stats without the acme face's requests: %+v", stats)
	}
	if st := s.Stats(); st.CountFace("acme", "acme.PutGroup") != 1 || st.CountFace("acme", "acme.DescribeGroup") != 1 || st.CountFace(core.LocalFace, localface.OpGetGroup) != 1 {
		t.Fatalf("stats %+v", st)
	}

	// Throttling: the local face answers 429 with Retry-After, acme 400
	// with its code Throttling.
	if err := s.SetFaults(core.Faults{ThrottleRate: 1, RetryAfter: 1500 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	var le localapi.ErrorResponse
	resp := call(t, "GET", u+"/v1/groups/web", nil, &le)
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "2" || le.Error.Code != localapi.CodeTooManyRequests {
		t.Fatalf("throttled local request: %s %q %+v", resp.Status, resp.Header.Get("Retry-After"), le)
	}
	for _, base := range []string{acme, own} {
		var ae acmeError
		resp = call(t, "GET", base+"/accounts/111/groups/web", nil, &ae)
		if resp.StatusCode != http.StatusBadRequest || ae.Type != "Throttling" || resp.Header.Get("Retry-After") != "" {
			t.Fatalf("throttled acme request at %s: %s %+v", base, resp.Status, ae)
		}
	}
	if err := s.SetFaults(core.Faults{ErrorRate: 1}); err != nil {
		t.Fatal(err)
	}
	var ae acmeError
	resp = call(t, "GET", acme+"/accounts/111/groups/web", nil, &ae)
	if resp.StatusCode < 500 || ae.Type != "InternalFailure" {
		t.Fatalf("failed acme request: %s %+v", resp.Status, ae)
	}
	if n := s.Stats().CountStatus("acme.DescribeGroup", http.StatusBadRequest); n != 2 {
		t.Fatalf("throttled acme requests counted: %d, want 2", n)
	}
}

// TestFaceFaults: one face's requests can be faulted on their own, by the
// Go API or the admin endpoints.
func TestFaceFaults(t *testing.T) {
	s := startServer(t, core.Options{Seed: 5, Faces: []core.Face{acmeFace{}}})
	u := s.URL()
	throttled := func() (local, acme bool) {
		t.Helper()
		local = call(t, "GET", u+"/v1/groups", nil, nil).StatusCode == http.StatusTooManyRequests
		acme = call(t, "GET", u+"/acme/accounts/1/groups", nil, nil).StatusCode == http.StatusBadRequest
		return local, acme
	}
	if err := s.SetFaceFaults("acme", &core.Faults{ThrottleRate: 1}); err != nil {
		t.Fatal(err)
	}
	if l, a := throttled(); l || !a {
		t.Fatalf("acme faults: local throttled %v, acme throttled %v; want false, true", l, a)
	}
	// The cloud-wide switches do not reach a face with its own.
	if err := s.SetFaults(core.Faults{ThrottleRate: 1}); err != nil {
		t.Fatal(err)
	}
	if resp := call(t, "PUT", u+"/admin/faults?face=acme", localapi.Faults{}, nil); resp.StatusCode != 200 {
		t.Fatalf("PUT acme faults: %s", resp.Status)
	}
	if l, a := throttled(); !l || a {
		t.Fatalf("cloud-wide faults, none for acme: local throttled %v, acme throttled %v; want true, false", l, a)
	}
	if resp := call(t, "DELETE", u+"/admin/faults?face=acme", nil, nil); resp.StatusCode != http.StatusNoContent || s.FaceFaults("acme") != nil {
		t.Fatalf("DELETE acme faults: %s, %+v", resp.Status, s.FaceFaults("acme"))
	}
	var f localapi.Faults
	call(t, "GET", u+"/admin/faults?face=acme", nil, &f)
	if l, a := throttled(); !l || !a || f.ThrottleRate != 1 {
		t.Fatalf("acme back on the cloud-wide faults: local %v, acme %v, %+v", l, a, f)
	}
}

// namedFace is acmeFace under another name.
type namedFace struct{ name string }

func (f namedFace) Name() string { return f.name }
func (namedFace) Handler(env core.FaceEnv) http.Handler {
	return acmeFace{}.Handler(env)
}
func (namedFace) InstanceIdentity(in core.NewInstance) core.InstanceIdentity {
	return acmeFace{}.InstanceIdentity(in)
}
func (namedFace) WriteFault(w http.ResponseWriter, r *http.Request, f core.Fault) {
	acmeFace{}.WriteFault(w, r, f)
}

func TestAdminCapacityAndGroupFaults(t *testing.T) {
	s := startServer(t, core.Options{Seed: 5, MaxInstances: 3})
	u := s.URL()
	if resp := call(t, "PUT", u+"/v1/groups/pool", localapi.GroupSpec{Capacity: 1}, nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("PUT group: %s", resp.Status)
	}
	var g localapi.Group
	if resp := call(t, "PUT", u+"/admin/groups/pool/faults", localapi.GroupFaults{WrongTokens: 1}, &g); resp.StatusCode != http.StatusOK {
		t.Fatalf("PUT faults: %s", resp.Status)
	}
	if resp := call(t, "PUT", u+"/admin/groups/pool/capacity", localapi.Capacity{Capacity: 2}, &g); resp.StatusCode != http.StatusOK || g.Capacity != 2 || len(g.Instances) != 2 {
		t.Fatalf("PUT capacity: %s, %+v", resp.Status, g)
	}
	if !snapshotOf(t, s.Cloud(), "pool").Instances[1].WrongToken {
		t.Fatal("the instance created after arming the fault should boot with a wrong token")
	}
	var e localapi.ErrorResponse
	if resp := call(t, "PUT", u+"/admin/groups/pool/capacity", localapi.Capacity{Capacity: 4}, &e); resp.StatusCode != http.StatusConflict || e.Error.Code != localapi.CodeQuotaExceeded {
		t.Fatalf("capacity over quota: %s %+v", resp.Status, e)
	}
	if resp := call(t, "PUT", u+"/admin/groups/missing/capacity", localapi.Capacity{Capacity: 1}, &e); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("capacity of a missing group: %s", resp.Status)
	}
	// Admin calls are not counted as cloud API requests.
	if n := s.Stats().Total(); n != 1 {
		t.Fatalf("%d counted requests, want the one PUT of the group", n)
	}
}

func snapshotOf(t *testing.T, c *core.Cloud, name string) *core.Group {
	t.Helper()
	g, err := c.GetGroup(name)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestAdminInstanceFaults(t *testing.T) {
	s := startServer(t, core.Options{Seed: 5, Faces: []core.Face{acmeFace{}}})
	u := s.URL()
	var g localapi.Group
	if resp := call(t, "PUT", u+"/v1/groups/pool", localapi.GroupSpec{Capacity: 4}, &g); resp.StatusCode != http.StatusOK {
		t.Fatalf("PUT group: %s", resp.Status)
	}
	id := g.Instances[0].ID

	var f localapi.InstanceFault
	if resp := call(t, "PUT", u+"/admin/instances/"+id+"/fault", localapi.InstanceFault{Fault: localapi.FaultKubeletStopped}, &f); resp.StatusCode != http.StatusOK || f.Fault != localapi.FaultKubeletStopped {
		t.Fatalf("PUT fault: %s %+v", resp.Status, f)
	}
	call(t, "GET", u+"/v1/groups/pool", nil, &g)
	if g.Instances[0].Fault != localapi.FaultKubeletStopped {
		t.Fatalf("the group shows instance faults %+v", g.Instances)
	}
	if resp := call(t, "DELETE", u+"/admin/instances/"+id+"/fault", nil, nil); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE fault: %s", resp.Status)
	}
	if in := snapshotOf(t, s.Cloud(), "pool").Instances[0]; in.Fault != core.FaultNone {
		t.Fatalf("after DELETE: fault %q", in.Fault)
	}
	var e localapi.ErrorResponse
	if resp := call(t, "PUT", u+"/admin/instances/i-missing/fault", localapi.InstanceFault{Fault: localapi.FaultNodeNotReady}, &e); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("fault of a missing instance: %s", resp.Status)
	}
	if resp := call(t, "PUT", u+"/admin/instances/"+id+"/fault", localapi.InstanceFault{Fault: "Sleepy"}, &e); resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("an unknown fault: %s", resp.Status)
	}

	var res localapi.GroupInstanceFaultResult
	if resp := call(t, "PUT", u+"/admin/groups/pool/instance-faults", localapi.GroupInstanceFault{Fraction: 0.5, Fault: localapi.FaultCloudCheckFailing}, &res); resp.StatusCode != http.StatusOK || len(res.InstanceIDs) != 2 {
		t.Fatalf("PUT instance-faults: %s %+v", resp.Status, res)
	}

	// Another face's group, addressed by group.
	acme, err := s.Cloud().Scope("acme", "111").ApplyGroup("web", core.GroupSpec{Capacity: 1})
	if err != nil {
		t.Fatal(err)
	}
	aid := acme.Instances[0].ID
	if resp := call(t, "PUT", u+"/admin/groups/web/instances/"+aid+"/fault?face=acme&scope=111", localapi.InstanceFault{Fault: localapi.FaultNodeNotReady}, &g); resp.StatusCode != http.StatusOK || g.Instances[0].Fault != localapi.FaultNodeNotReady {
		t.Fatalf("PUT a group's instance fault: %s %+v", resp.Status, g)
	}
	if resp := call(t, "DELETE", u+"/admin/groups/web/instances/"+aid+"/fault?face=acme&scope=111", nil, nil); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE a group's instance fault: %s", resp.Status)
	}
}
