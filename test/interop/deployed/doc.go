// Package deployed runs mpool's manager as its deploy overlay deploys it,
// beside upstream Cluster API v1.14 (package interop): the built `mpool`
// binary, two replicas with leader election, each with the arguments and
// environment of the overlay's Deployment, authenticated as the overlay's
// ServiceAccount — a token the API server issues for it (TokenRequest), not
// the admin kubeconfig — and authorized by nothing but the overlay's RBAC
// (its ClusterRole, Roles and bindings, applied as rendered). The test kills
// the leader (SIGKILL) in the middle of a version roll and checks, from
// outside, that the other replica takes the Lease and finishes the roll
// within the pool's budgets (itest.WatchBudgets), that no instance is
// deleted twice (each replica reaches the simulated cloud through a proxy
// that counts delete requests by instance ID), and that neither replica
// was refused anything by RBAC.
//
// It runs in ModeProviders, with config/providers: mpool as the
// infrastructure provider under upstream's MachinePool controller, the way
// a management cluster that already runs Cluster API adopts it (clusterctl
// installs core and the bootstrap provider; mpool replaces CAPZ's or
// CAPA's pools). There the leader change is mpool's alone while upstream's
// controllers keep running, which is what a platform engineer meets when a
// node of the management cluster dies. The test reads the mode from the
// Upstream it runs beside (up.Mode) and the overlay from it
// (config/<mode>), so running it in ModePools is a matter of the constant
// in TestMain (and a package of its own, since one control plane runs
// upstream in one mode).
//
// What stands in for the cluster, and what is left out:
//
//   - The replicas are processes on this machine, not Pods: the Deployment
//     and the Service are not applied. The leader election namespace, which
//     a Pod reads from its mounted ServiceAccount, is passed as the flag
//     --leader-election-namespace; the Deployment's fieldRef environment
//     (POD_NAMESPACE) is set to the Deployment's namespace.
//   - The conversion webhook (--conversion-webhook) is turned off: the
//     API server cannot reach a process on loopback through the overlay's
//     Service, and the package's control plane serves conversion for
//     mpool's CRDs itself. Its Secret's RBAC is still applied and checked
//     by config/deploytest.
//   - The lease timings are shortened (--leader-elect-lease-duration and
//     friends) so that the survivor takes the lead in seconds; the
//     Deployment keeps the defaults (15s, 10s, 2s).
//   - The workload cluster is reached, as deployed, with the Cluster's
//     <cluster>-kubeconfig Secret (here the package's API server as admin),
//     not the ServiceAccount.
//   - The provider is the local one (the local sample, examples/local), the
//     simplest to point a process at (--local-cloud-url); its budgets are
//     the sample's strategy at 5 replicas (maxSurge 25% rounds up to 2,
//     maxUnavailable 1).
//
// What upstream does differently: upstream's managers take the same
// leader-election flags with the same defaults (--leader-elect,
// --leader-elect-lease-duration 15s, --leader-elect-renew-deadline 10s,
// --leader-elect-retry-period 2s) but deploy one replica: leader election
// there guards a rolling update of the Deployment, not the loss of a node,
// and a replica that stops does not release its Lease, so the next waits
// for it to expire. mpool's Deployment runs two replicas and releases the
// Lease on a clean stop; after a kill, as here, the survivor waits for the
// Lease to expire. The interop packages run upstream's own managers with
// --leader-elect=false, one each.
package deployed
