package scalegroup

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Ref addresses one group at its cloud: where it lives, what it is called
// and whose credentials reach it. The engine asks the pool's Adapter for it
// once (from the pool and its Cluster's infrastructure object) and records
// it on the pool (see the infrapool package), so that every later call, the
// deletion included, uses the same reference even if the Cluster is gone.
// It is a plain value that encodes to JSON.
type Ref struct {
	// Name is the group's name within Scope: predictable (derived from the
	// pool), so a crash half-way through creating it cannot leak it.
	Name string `json:"name"`
	// Scope is where the group lives at its cloud, in the cloud's own
	// terms: "" for the simulated cloud's local face; an Azure resource
	// group's ID (/subscriptions/<id>/resourceGroups/<name>); an AWS
	// region.
	Scope string `json:"scope,omitempty"`
	// Location is the region new resources are created in (Azure's
	// location), "" when Scope already says it or the cloud has none.
	Location string `json:"location,omitempty"`
	// Credentials names the credentials that reach the group: the
	// "<namespace>/<name>" of an identity object (AzureClusterIdentity,
	// AWSClusterRoleIdentity), or "" for the manager's own (its
	// environment and flags).
	Credentials string `json:"credentials,omitempty"`
	// Namespace is the namespace of the pool the group serves: identity
	// objects say which namespaces may use them (allowedNamespaces).
	Namespace string `json:"namespace,omitempty"`
}

// String is the reference as logs and messages show it: Scope/Name.
func (r Ref) String() string {
	if r.Scope == "" {
		return r.Name
	}
	return r.Scope + "/" + r.Name
}

// Encode returns the reference's JSON encoding, as recorded on pools.
func (r Ref) Encode() string {
	b, _ := json.Marshal(r) // a struct of strings always encodes
	return string(b)
}

// DecodeRef parses a reference recorded with Encode.
func DecodeRef(s string) (Ref, error) {
	var r Ref
	if err := json.Unmarshal([]byte(s), &r); err != nil {
		return Ref{}, fmt.Errorf("decoding scale group reference %q: %w", s, err)
	}
	if r.Name == "" {
		return Ref{}, errors.New("scale group reference has no name")
	}
	return r, nil
}
