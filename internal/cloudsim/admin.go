package cloudsim

import (
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mpool-dev/mpool/internal/cloudsim/localapi"
)

// registerAdmin serves the admin endpoints: fault switches, request
// counters, simulation knobs, quota, and the actions of actors other than
// the cloud's API clients (an external autoscaler changing a group's
// capacity, instances booting with a wrong bootstrap token). They are never
// faulted or counted.
func (s *Server) registerAdmin(mux *http.ServeMux) {
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /admin/stats", func(w http.ResponseWriter, _ *http.Request) {
		st := s.Stats()
		out := localapi.Stats{Requests: make([]localapi.RequestCount, len(st.Requests))}
		for i, r := range st.Requests {
			out.Requests[i] = localapi.RequestCount{Operation: r.Operation, Status: r.Status, Count: r.Count}
		}
		writeJSON(w, http.StatusOK, out)
	})
	mux.HandleFunc("DELETE /admin/stats", func(w http.ResponseWriter, _ *http.Request) {
		s.ResetStats()
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /admin/faults", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, toLocalFaults(s.Faults()))
	})
	mux.HandleFunc("PUT /admin/faults", func(w http.ResponseWriter, r *http.Request) {
		var f localapi.Faults
		if !readJSON(w, r, &f) {
			return
		}
		if err := s.SetFaults(Faults{ThrottleRate: f.ThrottleRate, RetryAfter: f.RetryAfter.Duration, ErrorRate: f.ErrorRate, Latency: f.Latency.Duration}); err != nil {
			writeCloudError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, toLocalFaults(s.Faults()))
	})
	mux.HandleFunc("GET /admin/simulation", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, toLocalSimulation(s.cloud.DefaultSimulationKnobs()))
	})
	mux.HandleFunc("PUT /admin/simulation", func(w http.ResponseWriter, r *http.Request) {
		var sim localapi.Simulation
		if !readJSON(w, r, &sim) {
			return
		}
		out, err := s.cloud.SetDefaultSimulation(*fromLocalSimulation(&sim))
		if err != nil {
			writeCloudError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, toLocalSimulation(out))
	})
	mux.HandleFunc("PUT /admin/groups/{name}/simulation", func(w http.ResponseWriter, r *http.Request) {
		var sim localapi.Simulation
		if !readJSON(w, r, &sim) {
			return
		}
		g, err := s.cloud.SetSimulation(r.PathValue("name"), *fromLocalSimulation(&sim))
		if err != nil {
			writeCloudError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, toLocalGroup(g))
	})
	mux.HandleFunc("PUT /admin/groups/{name}/capacity", func(w http.ResponseWriter, r *http.Request) {
		var c localapi.Capacity
		if !readJSON(w, r, &c) {
			return
		}
		g, err := s.cloud.SetCapacity(r.PathValue("name"), c.Capacity)
		if err != nil {
			writeCloudError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, toLocalGroup(g))
	})
	mux.HandleFunc("PUT /admin/groups/{name}/faults", func(w http.ResponseWriter, r *http.Request) {
		var f localapi.GroupFaults
		if !readJSON(w, r, &f) {
			return
		}
		g, err := s.cloud.SetGroupFaults(r.PathValue("name"), GroupFaults{WrongTokens: f.WrongTokens})
		if err != nil {
			writeCloudError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, toLocalGroup(g))
	})
	mux.HandleFunc("GET /admin/quota", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, localapi.Quota{MaxInstances: s.cloud.MaxInstances()})
	})
	mux.HandleFunc("PUT /admin/quota", func(w http.ResponseWriter, r *http.Request) {
		var q localapi.Quota
		if !readJSON(w, r, &q) {
			return
		}
		if err := s.cloud.SetMaxInstances(q.MaxInstances); err != nil {
			writeCloudError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, q)
	})
}

func toLocalFaults(f Faults) localapi.Faults {
	return localapi.Faults{
		ThrottleRate: f.ThrottleRate,
		RetryAfter:   metav1.Duration{Duration: f.RetryAfter},
		ErrorRate:    f.ErrorRate,
		Latency:      metav1.Duration{Duration: f.Latency},
	}
}
