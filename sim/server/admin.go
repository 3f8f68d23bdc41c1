package server

import (
	"github.com/mpool-dev/mpool/sim/admin"
	"net/http"

	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/wire/localapi"
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
			out.Requests[i] = localapi.RequestCount{Face: r.Face, Operation: r.Operation, Status: r.Status, Count: r.Count}
		}
		admin.WriteJSON(w, http.StatusOK, out)
	})
	mux.HandleFunc("DELETE /admin/stats", func(w http.ResponseWriter, _ *http.Request) {
		s.ResetStats()
		w.WriteHeader(http.StatusNoContent)
	})
	// ?face=<name> reads and sets one face's own switches; DELETE returns
	// the face to the cloud-wide ones.
	mux.HandleFunc("GET /admin/faults", func(w http.ResponseWriter, r *http.Request) {
		admin.WriteJSON(w, http.StatusOK, admin.ToLocalFaults(s.effectiveFaults(r.URL.Query().Get("face"))))
	})
	admin.HandlePut(mux, "PUT /admin/faults", func(r *http.Request, f localapi.Faults) (any, error) {
		in := core.Faults{ThrottleRate: f.ThrottleRate, RetryAfter: f.RetryAfter.Duration, ErrorRate: f.ErrorRate, Latency: f.Latency.Duration}
		face := r.URL.Query().Get("face")
		var err error
		if face == "" {
			err = s.SetFaults(in)
		} else {
			err = s.SetFaceFaults(face, &in)
		}
		if err != nil {
			return nil, err
		}
		return admin.ToLocalFaults(s.effectiveFaults(face)), nil
	})
	mux.HandleFunc("DELETE /admin/faults", func(w http.ResponseWriter, r *http.Request) {
		_ = s.SetFaceFaults(r.URL.Query().Get("face"), nil)
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /admin/simulation", func(w http.ResponseWriter, _ *http.Request) {
		admin.WriteJSON(w, http.StatusOK, admin.ToLocalSimulation(s.cloud.DefaultSimulationKnobs()))
	})
	admin.HandlePut(mux, "PUT /admin/simulation", func(_ *http.Request, sim localapi.Simulation) (any, error) {
		out, err := s.cloud.SetDefaultSimulation(*admin.FromLocalSimulation(&sim))
		if err != nil {
			return nil, err
		}
		return admin.ToLocalSimulation(out), nil
	})
	admin.HandlePut(mux, "PUT /admin/groups/{name}/simulation", func(r *http.Request, sim localapi.Simulation) (any, error) {
		return admin.GroupOrError(s.adminScope(r).SetSimulation(r.PathValue("name"), *admin.FromLocalSimulation(&sim)))
	})
	admin.HandlePut(mux, "PUT /admin/groups/{name}/capacity", func(r *http.Request, c localapi.Capacity) (any, error) {
		return admin.GroupOrError(s.adminScope(r).SetCapacity(r.PathValue("name"), c.Capacity))
	})
	admin.HandlePut(mux, "PUT /admin/groups/{name}/faults", func(r *http.Request, f localapi.GroupFaults) (any, error) {
		return admin.GroupOrError(s.adminScope(r).SetGroupFaults(r.PathValue("name"), core.GroupFaults{WrongTokens: f.WrongTokens, NeverJoins: f.NeverJoins}))
	})
	s.registerInstanceFaults(mux)
	for _, f := range s.faces {
		if af, ok := f.(core.AdminFace); ok {
			af.RegisterAdmin(mux, s.cloud)
		}
	}
	mux.HandleFunc("GET /admin/quota", func(w http.ResponseWriter, _ *http.Request) {
		admin.WriteJSON(w, http.StatusOK, localapi.Quota{MaxInstances: s.cloud.MaxInstances()})
	})
	admin.HandlePut(mux, "PUT /admin/quota", func(_ *http.Request, q localapi.Quota) (any, error) {
		if err := s.cloud.SetMaxInstances(q.MaxInstances); err != nil {
			return nil, err
		}
		return q, nil
	})
}

// effectiveFaults are the switches that apply to face's requests (the
// cloud-wide ones for "").
func (s *Server) effectiveFaults(face string) core.Faults {
	if f := s.FaceFaults(face); face != "" && f != nil {
		return *f
	}
	return s.Faults()
}

// adminScope is the scope of an admin request about a group: the query
// parameters face (default local) and scope (default empty).
func (s *Server) adminScope(r *http.Request) core.Scope {
	face := r.URL.Query().Get("face")
	if face == "" {
		face = core.LocalFace
	}
	return s.cloud.Scope(face, r.URL.Query().Get("scope"))
}
