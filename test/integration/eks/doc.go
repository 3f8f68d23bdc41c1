// Package eks holds the EKS provider's integration tests: a real
// kube-apiserver and etcd (internal/testenv), the mpool manager as `mpool
// manager` builds it, and the simulated cloud's EKS face (REST-JSON with
// Signature V4) and AWS face, driven by the real aws-sdk-go-v2. The
// examples examples/eks/cluster.yaml and examples/eks/machinepool.yaml are
// applied unchanged.
package eks
