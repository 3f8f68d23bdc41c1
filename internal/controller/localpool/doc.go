// Package localpool holds the controllers of the local provider:
// LocalMachinePool, a scale group of mpool's simulated cloud
// (internal/cloudsim) driven by the infrapool engine through the local
// ScaleGroup client (internal/provider/local), and LocalMachinePoolMachine,
// its per-instance objects.
//
// The Adapter maps a LocalMachinePool onto the engine: the group is named
// after the pool's namespace and name, the model is the pool's template
// (instance type, image, zones) plus the MachinePool's Kubernetes version,
// which the simulated Nodes report, and the pool's simulation knobs (boot
// delay, jitter, failure rate), applied in place without replacing
// instances.
package localpool
