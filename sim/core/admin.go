package core

import (
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
		writeJSON(w, http.StatusOK, out)
	})
	mux.HandleFunc("DELETE /admin/stats", func(w http.ResponseWriter, _ *http.Request) {
		s.ResetStats()
		w.WriteHeader(http.StatusNoContent)
	})
	// ?face=<name> reads and sets one face's own switches; DELETE returns
	// the face to the cloud-wide ones.
	mux.HandleFunc("GET /admin/faults", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, toLocalFaults(s.effectiveFaults(r.URL.Query().Get("face"))))
	})
	handlePut(mux, "PUT /admin/faults", func(r *http.Request, f localapi.Faults) (any, error) {
		in := Faults{ThrottleRate: f.ThrottleRate, RetryAfter: f.RetryAfter.Duration, ErrorRate: f.ErrorRate, Latency: f.Latency.Duration}
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
		return toLocalFaults(s.effectiveFaults(face)), nil
	})
	mux.HandleFunc("DELETE /admin/faults", func(w http.ResponseWriter, r *http.Request) {
		_ = s.SetFaceFaults(r.URL.Query().Get("face"), nil)
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /admin/simulation", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, toLocalSimulation(s.cloud.DefaultSimulationKnobs()))
	})
	handlePut(mux, "PUT /admin/simulation", func(_ *http.Request, sim localapi.Simulation) (any, error) {
		out, err := s.cloud.SetDefaultSimulation(*fromLocalSimulation(&sim))
		if err != nil {
			return nil, err
		}
		return toLocalSimulation(out), nil
	})
	handlePut(mux, "PUT /admin/groups/{name}/simulation", func(r *http.Request, sim localapi.Simulation) (any, error) {
		return groupOrError(s.adminScope(r).SetSimulation(r.PathValue("name"), *fromLocalSimulation(&sim)))
	})
	handlePut(mux, "PUT /admin/groups/{name}/capacity", func(r *http.Request, c localapi.Capacity) (any, error) {
		return groupOrError(s.adminScope(r).SetCapacity(r.PathValue("name"), c.Capacity))
	})
	handlePut(mux, "PUT /admin/groups/{name}/faults", func(r *http.Request, f localapi.GroupFaults) (any, error) {
		return groupOrError(s.adminScope(r).SetGroupFaults(r.PathValue("name"), GroupFaults{WrongTokens: f.WrongTokens}))
	})
	// The Azure face's service principals (Entra ID applications with a
	// client secret): PUT registers or replaces one, DELETE removes one.
	mux.HandleFunc("GET /admin/azure/clients", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string][]AzureClient{"clients": AzureClients(s.cloud)})
	})
	handlePut(mux, "PUT /admin/azure/clients", func(_ *http.Request, c AzureClient) (any, error) {
		return c, AzureSetClient(s.cloud, c)
	})
	mux.HandleFunc("DELETE /admin/azure/clients/{tenant}/{client}", func(w http.ResponseWriter, r *http.Request) {
		if err := AzureDeleteClient(s.cloud, r.PathValue("tenant"), r.PathValue("client")); err != nil {
			writeCloudError(w, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	s.registerAWSAdmin(mux)
	mux.HandleFunc("GET /admin/quota", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, localapi.Quota{MaxInstances: s.cloud.MaxInstances()})
	})
	handlePut(mux, "PUT /admin/quota", func(_ *http.Request, q localapi.Quota) (any, error) {
		if err := s.cloud.SetMaxInstances(q.MaxInstances); err != nil {
			return nil, err
		}
		return q, nil
	})
}

// effectiveFaults are the switches that apply to face's requests (the
// cloud-wide ones for "").
func (s *Server) effectiveFaults(face string) Faults {
	if f := s.FaceFaults(face); face != "" && f != nil {
		return *f
	}
	return s.Faults()
}

// adminScope is the scope of an admin request about a group: the query
// parameters face (default local) and scope (default empty).
func (s *Server) adminScope(r *http.Request) Scope {
	face := r.URL.Query().Get("face")
	if face == "" {
		face = LocalFace
	}
	return s.cloud.Scope(face, r.URL.Query().Get("scope"))
}

// handlePut registers an admin PUT handler: the body decoded into In, set
// applied, its answer written as JSON (or its error as a cloud error).
func handlePut[In any](mux *http.ServeMux, pattern string, set func(*http.Request, In) (any, error)) {
	mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		var in In
		if !readJSON(w, r, &in) {
			return
		}
		out, err := set(r, in)
		if err != nil {
			writeCloudError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, out)
	})
}

// groupOrError is the admin answer for a call that returns the changed group.
func groupOrError(g *Group, err error) (any, error) {
	if err != nil {
		return nil, err
	}
	return toLocalGroup(g), nil
}

func toLocalFaults(f Faults) localapi.Faults {
	return localapi.Faults{
		ThrottleRate: f.ThrottleRate,
		RetryAfter:   metav1.Duration{Duration: f.RetryAfter},
		ErrorRate:    f.ErrorRate,
		Latency:      metav1.Duration{Duration: f.Latency},
	}
}
