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
// so the control plane here has none of mpool's CRDs: it is CAPA's. The
// stand-ins are test/interop's: a TestControlPlane for the Cluster's
// control plane, and the AWSCluster's status written by the test, as for
// infrastructure managed outside CAPA (the cluster.x-k8s.io/managed-by
// annotation): the default VPC's subnets, security groups, ready. CAPA's
// AWSMachinePool controller does the rest on its own: launch template and
// versions, the Auto Scaling group, instance refresh, per-instance
// AWSMachines (its MachinePoolMachines gate), scaling and deletion.
package peer
