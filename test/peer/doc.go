// Package peer runs a real peer of mpool against mpool's simulated AWS:
// Cluster API Provider AWS's unmodified manager (CAPA
// kubeenv.UpstreamCAPAVersion, built from the Go module proxy and cached,
// kubeenv.EnsureUpstreamCAPA) beside upstream Cluster API's core and
// kubeadm bootstrap managers (test/interop's Start), as processes against
// the package's embedded control plane, with CAPA's own CRDs, conversion and
// admission webhooks. CAPA talks to the simulated cloud's AWS face
// (--service-endpoints) with the face's static credentials, every request
// signed and verified as SigV4; the instances it launches join the
// package's API server with the bootstrap data its launch templates carry.
//
// mpool serves AWSMachinePool and AWSCluster in the same API group as CAPA,
// so the package's control plane has none of mpool's CRDs: it is CAPA's.
// mpool runs beside it on a second control plane of the package, with its
// own CRDs, `mpool manager` (built from this tree) as a process in its
// standalone mode with its AWS provider pointed at the same simulated AWS;
// the node agent joins each instance to the API server its bootstrap data
// names. Both systems get the same manifests (testdata), the same
// scenario (runScenario) and the same observations (observe_test.go); a
// System says what differs between them (their per-instance kind, group
// names, processes). The
// stand-ins are test/interop's: a TestControlPlane for the Cluster's
// control plane, and the AWSCluster's status written by the test, as for
// infrastructure managed outside CAPA (the cluster.x-k8s.io/managed-by
// annotation): the default VPC's subnets, security groups, ready. CAPA's
// AWSMachinePool controller does the rest on its own: launch template and
// versions, the Auto Scaling group, instance refresh, per-instance
// AWSMachines (its MachinePoolMachines gate), scaling and deletion.
package peer
