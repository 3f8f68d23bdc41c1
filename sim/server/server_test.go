package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/face/localface"
	"github.com/mpool-dev/mpool/sim/wire/localapi"
)

func startServer(t *testing.T, opts core.Options) *Server {
	t.Helper()
	if opts.DefaultSimulation == nil {
		opts.DefaultSimulation = &core.Simulation{}
	}
	s, err := Start(context.Background(), opts)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _ = s.Stop() })
	return s
}

func call(t *testing.T, method, url string, body any, out any) *http.Response {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, url, r)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	if out != nil {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Fatalf("%s %s: decoding: %v", method, url, err)
		}
	}
	return resp
}

func TestAdminEndpoints(t *testing.T) {
	s := startServer(t, core.Options{Seed: 3})
	u := s.URL()

	if resp := call(t, "PUT", u+"/v1/groups/pool", localapi.GroupSpec{Capacity: 2, Model: localapi.Model{CustomData: []byte("secret-data")}}, nil); resp.StatusCode != 200 {
		t.Fatalf("PUT group: %s", resp.Status)
	}
	var g localapi.Group
	call(t, "GET", u+"/v1/groups/pool", nil, &g)
	if len(g.Instances) != 2 || g.Model.CustomData != nil {
		t.Fatalf("GET group: %d instances, custom data echoed: %v", len(g.Instances), g.Model.CustomData != nil)
	}
	if resp := call(t, "PUT", u+"/v1/groups/pool", map[string]any{"capacity": 1, "bogus": true}, nil); resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("unknown field: %s, want 400", resp.Status)
	}

	// Throttle everything through the admin endpoint.
	var f localapi.Faults
	call(t, "PUT", u+"/admin/faults", map[string]any{"throttleRate": 1, "retryAfter": "2s"}, &f)
	if f.ThrottleRate != 1 || f.RetryAfter.Duration != 2*time.Second {
		t.Fatalf("faults = %+v", f)
	}
	resp := call(t, "GET", u+"/v1/groups/pool", nil, nil)
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "2" {
		t.Fatalf("throttled GET: %s Retry-After %q, want 429 and 2", resp.Status, resp.Header.Get("Retry-After"))
	}
	// Admin endpoints are never faulted.
	var st localapi.Stats
	if resp := call(t, "GET", u+"/admin/stats", nil, &st); resp.StatusCode != 200 {
		t.Fatalf("stats while throttling: %s", resp.Status)
	}
	counts := map[string]int64{}
	for _, r := range st.Requests {
		counts[fmt.Sprintf("%s %d", r.Operation, r.Status)] = r.Count
	}
	want := map[string]int64{"PutGroup 200": 1, "PutGroup 400": 1, "GetGroup 200": 1, "GetGroup 429": 1}
	for k, v := range want {
		if counts[k] != v {
			t.Fatalf("stats = %v, want %v", counts, want)
		}
	}

	// 5xx at a rate: about half of 200 requests fail.
	call(t, "PUT", u+"/admin/faults", map[string]any{"errorRate": 0.5}, nil)
	call(t, "DELETE", u+"/admin/stats", nil, nil)
	for range 200 {
		call(t, "GET", u+"/v1/groups/pool", nil, nil)
	}
	stats := s.Stats()
	fails := stats.Count(localface.OpGetGroup) - stats.CountStatus(localface.OpGetGroup, 200)
	if stats.Count(localface.OpGetGroup) != 200 || fails < 70 || fails > 130 {
		t.Fatalf("error rate 0.5 over 200 requests: %d failed (stats %+v)", fails, stats)
	}

	// Latency.
	call(t, "PUT", u+"/admin/faults", map[string]any{"latency": "150ms"}, nil)
	start := time.Now()
	call(t, "GET", u+"/v1/groups/pool", nil, nil)
	if d := time.Since(start); d < 150*time.Millisecond {
		t.Fatalf("request with 150ms latency took %s", d)
	}
	call(t, "PUT", u+"/admin/faults", map[string]any{}, nil)

	// Simulation knobs and quota.
	var sim localapi.Simulation
	call(t, "PUT", u+"/admin/simulation", map[string]any{"bootDelay": "3s", "failureRate": 0.1}, &sim)
	if sim.BootDelay.Duration != 3*time.Second || *sim.FailureRate != 0.1 {
		t.Fatalf("default simulation = %+v", sim)
	}
	call(t, "PUT", u+"/admin/groups/pool/simulation", map[string]any{"deleteDelay": "1s"}, &g)
	if g.Simulation.DeleteDelay.Duration != time.Second {
		t.Fatalf("group simulation = %+v", g.Simulation)
	}
	call(t, "PUT", u+"/admin/quota", localapi.Quota{MaxInstances: 3}, nil)
	var e localapi.ErrorResponse
	if resp := call(t, "PUT", u+"/v1/groups/other", localapi.GroupSpec{Capacity: 2}, &e); resp.StatusCode != http.StatusConflict || e.Error.Code != localapi.CodeQuotaExceeded {
		t.Fatalf("over quota: %s %+v", resp.Status, e)
	}
}
