// Package managedcluster reconciles AzureManagedCluster, the infrastructure
// object of an AKS Cluster in Cluster API Provider Azure's shape (the
// Cluster's spec.infrastructureRef, beside its spec.controlPlaneRef, the
// AzureManagedControlPlane that names the AKS cluster). mpool provisions
// nothing for it: it is marked ready (status.ready, what Cluster API's
// v1beta1 contract reads) once its Cluster's controlPlaneRef names an
// AzureManagedControlPlane that exists, and its Ready condition says what is
// missing until then. An object annotated cluster.x-k8s.io/managed-by, or
// whose Cluster is paused, is left alone.
package managedcluster
