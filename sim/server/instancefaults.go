package server

import (
	"net/http"

	"github.com/mpool-dev/mpool/sim/admin"
	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/wire/localapi"
)

// registerInstanceFaults serves the instances' health faults
// (core.InstanceFault): one instance's by ID or providerID, one instance's
// within a group (?face=&scope=), or a fraction of a group's.
func (s *Server) registerInstanceFaults(mux *http.ServeMux) {
	setByID := func(r *http.Request, f localapi.InstanceFault) (any, error) {
		if err := s.cloud.SetInstanceFault(r.PathValue("id"), core.InstanceFault(f.Fault)); err != nil {
			return nil, err
		}
		return f, nil
	}
	setInGroup := func(r *http.Request, f localapi.InstanceFault) (any, error) {
		return admin.GroupOrError(s.adminScope(r).SetInstanceFault(r.PathValue("name"), r.PathValue("id"), core.InstanceFault(f.Fault)))
	}
	clearFault := func(set func(*http.Request, localapi.InstanceFault) (any, error)) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if _, err := set(r, localapi.InstanceFault{}); err != nil {
				admin.WriteError(w, err)
				return
			}
			w.WriteHeader(http.StatusNoContent)
		}
	}
	admin.HandlePut(mux, "PUT /admin/instances/{id}/fault", setByID)
	mux.HandleFunc("DELETE /admin/instances/{id}/fault", clearFault(setByID))
	admin.HandlePut(mux, "PUT /admin/groups/{name}/instances/{id}/fault", setInGroup)
	mux.HandleFunc("DELETE /admin/groups/{name}/instances/{id}/fault", clearFault(setInGroup))
	admin.HandlePut(mux, "PUT /admin/groups/{name}/instance-faults", func(r *http.Request, f localapi.GroupInstanceFault) (any, error) {
		ids, err := s.adminScope(r).SetGroupInstanceFault(r.PathValue("name"), f.Fraction, core.InstanceFault(f.Fault))
		if err != nil {
			return nil, err
		}
		return localapi.GroupInstanceFaultResult{InstanceIDs: append([]string{}, ids...)}, nil
	})
}
