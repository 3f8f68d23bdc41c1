// Package scalegroup owns the provider-neutral ScaleGroup interface through
// which the infra pool engine drives a cloud's scale group (Azure VMSS, AWS
// Auto Scaling Groups, EKS managed node groups, the simulated cloud), the
// instance model it applies, the typed errors callers branch on, and
// decorators for cross-cutting concerns (WithMetrics).
//
// No cloud SDK type appears here; each provider under internal/provider maps
// its cloud's API onto these types.
package scalegroup
