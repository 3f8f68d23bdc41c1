// Package aks holds the AKS provider's integration tests: a real
// kube-apiserver and etcd (internal/testenv), the mpool manager as `mpool
// manager` builds it, and the simulated AKS of the simulated cloud's Azure
// face (ARM with Entra ID tokens over TLS), driven by the real
// armcontainerservice. The examples examples/aks/cluster.yaml and
// examples/aks/machinepool.yaml are applied unchanged.
package aks
