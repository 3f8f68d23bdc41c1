// Package aws holds the AWS provider's integration tests: a real
// kube-apiserver and etcd (internal/testenv), the mpool manager as `mpool
// manager` builds it, and the simulated cloud's AWS face (the Query
// protocol with Signature V4), driven by the real aws-sdk-go-v2. Seed
// 004's AWSMachinePool example is applied unchanged, beside
// examples/aws/cluster.yaml.
package aws
