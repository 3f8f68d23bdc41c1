// Package contract is what a provider implements for mpool's infra pool
// engine, and the one reader everything else uses to see a provider's
// objects.
//
// A provider maps one infra pool kind (LocalMachinePool, AzureMachinePool,
// AWSMachinePool, AWSManagedMachinePool, ...) and its per-instance kind onto
// the engine with an Adapter: Kinds describes the kinds, Desired turns a pool
// into the instance model and rollout strategy, WritePool and
// WriteInstanceSpec/Status write the engine's reports into the provider's
// own field layout, and ReadPool and ReadInstance read that layout back as
// one provider-neutral view (PoolView, InstanceView). Only the provider
// knows its kinds' fields: the engine, `mpool describe`, `mpool rollout
// plan` and `status`, the plan's preview and the metrics read the views and
// never guess a field name.
//
// The package imports no engine, no cloud SDK and no other provider: a
// provider imports the contract, never the controller that drives it (the
// layer check in hack/layers says so).
package contract
