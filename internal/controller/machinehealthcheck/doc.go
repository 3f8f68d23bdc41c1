// Package machinehealthcheck runs upstream Cluster API's own
// MachineHealthCheck controller (sigs.k8s.io/cluster-api
// core/reconcilers/machinehealthcheck, v1.14) in a standalone manager, with
// upstream's own workload-cluster cache (controllers/clustercache), which
// reaches each workload cluster through its <cluster>-kubeconfig Secret as
// mpool's own cache does. Upstream's controller marks unhealthy Machines
// (HealthCheckSucceeded False, OwnerRemediated False with reason
// WaitingForRemediation), honours remediation.triggerIf and fills the
// MachineHealthCheck's status; it leaves the remediation to the Machine's
// owner, which for a pool Machine is mpool's rollout engine
// (internal/controller/infrapool). Beside upstream core (modes pools and
// providers) upstream runs this controller itself and mpool does not.
//
// External remediation (spec.remediation.templateRef) is not served: a
// ValidatingAdmissionPolicy (config/crd/policies) refuses it in a standalone
// manager; beside upstream, which serves it, the policy is removed.
package machinehealthcheck
