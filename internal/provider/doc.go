// Package provider is the provider registry: one line per cloud (All),
// each with its Adapter and its own configuration (Configs), which
// `mpool manager` fills from its flags, `mpool up` and the integration
// tests point at the simulated cloud, and the manager builds every
// configured provider's ScaleGroup from.
//
// # Adding a provider
//
// A provider is a recipe, not a copy: nothing generic goes into it, and
// nothing outside it names its settings. Adding a cloud (Azure, AWS and
// EKS follow this) is five steps.
//
//  1. API types in api/infrastructure/v1beta1: the infra pool kind (with
//     spec.providerIDList and the infra machine pool contract's status:
//     ready, replicas, infrastructureMachineKind, failureReason/Message,
//     conditions) and its per-instance kind, with OpenAPI/CEL validation so
//     bad input is refused at admission with a message naming the field.
//     Generate with hack/generate.sh.
//  2. One provider package, internal/provider/<cloud>, with three parts.
//     Its Adapter (adapter.go) implements contract.Adapter: Kinds, the
//     kind of the Cluster's infrastructure object it reads, GroupRef (a
//     predictable group name and the scope, location and credentials the
//     infrastructure object gives; the engine records it on the pool),
//     Desired (the pool and its MachinePool → scalegroup.Model and the
//     rollout strategy; the cloud's own fields in a typed Model.Provider,
//     hashed, and Model.InPlace, applied in place), WritePool,
//     WriteInstanceSpec/Status and the one reader (ReadPool,
//     ReadInstance). No I/O. RBAC markers for the two kinds beside it
//     (rbac.go). Its ScaleGroup implements scalegroup.ScaleGroup on the cloud's own
//     SDK, over real HTTP: one read per Get, idempotent writes, typed
//     errors (NotFound, Throttled with Retry-After, QuotaExceeded, Invalid,
//     Unauthorized, Transient), the model hash carried on the cloud's
//     instances; it resolves a Ref's credentials per call. No SDK type
//     leaves the package; SDK imports stay under internal/provider/<cloud>
//     (hack/layers refuses them elsewhere, the contract and kit included).
//     Its Config (config.go) implements kit.Config: its flags, named
//     after the provider, and the environment variables that default them;
//     how it points itself at its face of the simulated cloud; how it
//     builds its ScaleGroup (nil when the provider is off). What every provider needs comes from package kit (Retry-After, client
//     and credential caches, identity checks, condition mirroring), not a
//     copy.
//  3. A face of the simulated cloud, one package of its own, named as the
//     provider, that speaks the cloud's wire protocol, so the real SDK is
//     tested against it on loopback.
//  4. One line in All: the provider's name, its Adapter and its Config's
//     constructor.
//  5. The contract suite: provider_test.go runs contracttest on every
//     registry entry; the provider's tests run its ScaleGroup against its
//     face, and an integration package (test/integration/<cloud>, with
//     itest.Providers) runs pools end to end.
//
// Everything else — observing, planning, draining, deleting, reporting,
// orphaned per-instance objects, metrics, the CLI's describe and rollout
// plan — is the engine's and works for the new kind unchanged.
package provider
