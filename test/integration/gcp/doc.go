// Package gcp holds the GCP provider's integration tests: a real
// kube-apiserver and etcd (internal/testenv), the mpool manager as `mpool
// manager` builds it, and the simulated cloud's GCP face (Compute Engine's
// REST API over TLS, OAuth 2 with a service account key), driven by the
// real cloud.google.com/go/compute clients. examples/gcp's Cluster,
// GCPCluster and GCPMachinePool are applied unchanged.
package gcp
