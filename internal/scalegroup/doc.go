// Package scalegroup owns the provider-neutral ScaleGroup interface through
// which the infra pool engine drives a cloud's scale group (Azure VMSS, AWS
// Auto Scaling Groups, EKS managed node groups, the simulated cloud), the
// instance model it applies and the typed errors callers branch on.
// Cross-cutting concerns wrap the interface from outside (metrics and call
// counters: internal/metrics.WithMetrics, applied by the provider registry).
//
// No cloud SDK type appears here; each provider under internal/provider maps
// its cloud's API onto these types. What only one cloud has travels in
// Model.Provider and Model.InPlace as values of the provider's own types.
//
// # Carrying the model hash
//
// The engine decides whether an instance is up to date by comparing
// Instance.ModelHash with the pool's model hash, so every provider must
// report, for each instance, the hash of the model it was created from —
// from the cloud, never from memory, so that a restarted manager sees the
// same drift:
//
//   - Simulated cloud: the group records GroupSpec.ModelHash with its model
//     and stamps it on every instance it creates.
//   - Azure VMSS (Uniform): the hash is a tag of the scale set's VM model;
//     each VM carries the tags of the model it was created from, and a VM
//     whose latestModelApplied is false was created from an older model.
//     Flexible-mode VMs carry the tag themselves.
//   - AWS Auto Scaling Groups: each model is one launch-template version,
//     tagged with the hash; an instance's launch-template version (from
//     DescribeAutoScalingGroups) maps back to the hash.
//   - EKS managed node groups: the node group's release version, Kubernetes
//     version and launch-template version identify the model; an instance's
//     own launch-template version and AMI release say which it runs.
//
// # Bootstrap data
//
// Model.CustomData holds a bootstrap token that rotates. Callers send new
// custom data with a write that creates instances from it (Apply with more
// capacity or a new model), not on its own: a rotation on a group at rest
// costs no cloud write. Providers apply the custom data they are given on
// every Apply, whether or not anything else changed.
//
// # Accounts, regions and credentials
//
// A group is addressed by a Ref: its name, its scope at the cloud (an Azure
// subscription's resource group, an AWS region), the location new
// resources go to and the credentials that reach it (an identity object,
// or the manager's own). The pool's Adapter derives the Ref from the pool
// and its Cluster's infrastructure object (AzureCluster: subscriptionID,
// resourceGroup, location, identityRef); the engine records it on the pool
// before its first write (infrapool.GroupRefAnnotation), so that every
// later call, the deletion included, reaches the same group even when the
// Cluster is gone. A provider's ScaleGroup is built once, from the
// manager's configuration (endpoints, its own credentials), and resolves
// a Ref's credentials per call, caching them per identity; the simulated
// cloud's local face has one scope and needs none.
package scalegroup
