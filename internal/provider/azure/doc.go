// Package azure is the Azure provider: AzureMachinePools driven onto Azure
// Virtual Machine Scale Sets, Uniform and Flexible, through the Azure SDK
// for Go (armcompute, azidentity, azcore). It is an Adapter (adapter.go:
// AzureMachinePool and AzureMachinePoolMachine onto the infrapool engine)
// plus a ScaleGroup (scaleset.go: scalegroup.ScaleGroup on armcompute), and
// the resolution of credentials per AzureClusterIdentity (credentials.go).
// No Azure SDK type leaves this package.
//
// # Placing a scale set
//
// A pool's scale set lives in the AzureCluster's subscription and resource
// group (scalegroup.Ref.Scope "/subscriptions/<id>/resourceGroups/<rg>"),
// in the pool's location (spec.location, else the AzureCluster's), reached
// with the AzureCluster's identityRef (Ref.Credentials
// "<namespace>/<name>"), or with the manager's own credentials (the
// standard AZURE_* environment variables) when it names none. Its name is
// derived from the pool's namespace and name, at most 64 characters as
// Azure allows; Uniform VMs' host names are its computerNamePrefix plus six
// base-36 digits.
//
// # Carrying the model hash
//
// The scale set's tag mpool.dev/model-hash is the model hash; Uniform VMs
// report latestModelApplied against the scale set's current model and
// carry the tags of the model they were created from, Flexible VMs carry
// the tag themselves. An instance's ModelHash is its tag's value, and the
// pool's when Azure says the VM has the latest model.
//
// # Cost of a reconcile
//
// Get is the scale set GET plus the VM list (its pages): never a GET per VM
// (CAPZ does one per VM per reconcile). Apply reads the scale set and
// writes only when the model, capacity, tags or in-place settings differ,
// so a pool at rest costs no write.
//
// # Operations
//
// A write's long-running operation is not waited for: its poller's resume
// token is reported (scalegroup.Operation.ResumeToken) and recorded on the
// pool as CAPZ records a future (status.longRunningOperationStates,
// Future). A restarted manager hands it back (RecordedOperation,
// scalegroup.WithRecordedOperation) and Get resumes it: the operation is
// still mpool's, with the same token, and a scale set left Failed says why
// from it (OperationFailure), without a second write. The AKS provider
// (package aks) records and resumes its agent pools' operations the same
// way.
package azure
