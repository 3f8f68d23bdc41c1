// Package examples embeds the example manifests that `mpool up` applies, so
// the binary works outside a checkout.
package examples

import _ "embed"

// LocalMachinePool is examples/local/machinepool.yaml: a MachinePool,
// LocalMachinePool and KubeadmConfig for the Cluster "local" that `mpool up`
// registers.
//
//go:embed local/machinepool.yaml
var LocalMachinePool []byte
