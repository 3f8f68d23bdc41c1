// Package provider is the provider registry: one line per cloud (All), and
// Setup, which `mpool manager`, `mpool up` and the integration tests all use
// to start the engine for every provider the manager's Config configures.
//
// # Adding a provider
//
// A provider is a recipe, not a copy: nothing generic goes into it. Adding
// a cloud (Azure, AWS and EKS follow this) is five steps.
//
//  1. API types in api/infrastructure/v1beta1: the infra pool kind (with
//     spec.providerIDList and the infra machine pool contract's status:
//     ready, replicas, infrastructureMachineKind, failureReason/Message,
//     conditions) and its per-instance kind, with OpenAPI/CEL validation so
//     bad input is refused at admission with a message naming the field.
//     Generate with hack/generate.sh.
//  2. An Adapter (internal/provider/<cloud>/adapter.go) implementing
//     contract.Adapter: the kinds and finalizers, the kind of the Cluster's
//     infrastructure object it reads (AzureCluster; none for the local
//     provider), GroupRef (a predictable group name and the scope, location
//     and credentials the infrastructure object gives; the engine records
//     it on the pool), Desired (the pool and its MachinePool → scalegroup.Model and the
//     rollout strategy; the cloud's own fields go in a typed Model.Provider,
//     hashed, and Model.InPlace, applied in place; the strategy through
//     preview.Strategy where the kind uses the common one), WritePool and
//     WriteInstanceSpec/Status. No I/O. RBAC markers for the two kinds beside
//     it (rbac.go).
//  3. A ScaleGroup (internal/provider/<cloud>) implementing
//     scalegroup.ScaleGroup on the cloud's own SDK, over real HTTP. Its
//     contract is in package scalegroup: one read per Get, idempotent
//     writes, typed errors (NotFound, Throttled with Retry-After,
//     QuotaExceeded, Invalid, Unauthorized, Transient), the model hash
//     carried on the cloud's instances; it resolves a Ref's credentials per
//     call (internal/provider/azure's IdentityCredentials). No SDK type leaves the package; SDK imports stay
//     under internal/provider/<cloud> (the layer check in
//     hack/layers_test.go refuses them elsewhere).
//  4. A face of the simulated cloud (internal/cloudsim, see its doc) that
//     speaks the cloud's wire protocol, so the real SDK is tested against
//     it on loopback.
//  5. One line in All: the provider's name, its Adapter, and how its
//     ScaleGroup is made from Config (endpoints, the manager's own
//     credentials; clients.go); a provider whose Config is empty is not
//     started.
//
// Everything else — observing, planning, draining, deleting, reporting,
// orphaned per-instance objects, metrics, the CLI's describe and rollout
// plan — is the engine's and works for the new kind unchanged.
package provider
