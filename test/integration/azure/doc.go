// Package azure holds the Azure provider's integration tests: a real
// kube-apiserver and etcd (internal/testenv), the mpool manager as `mpool
// manager` builds it, and the simulated cloud's Azure face over HTTPS,
// driven by the real Azure SDK. Seed 000's AzureMachinePool example is
// applied unchanged, beside examples/azure/cluster.yaml.
package azure
