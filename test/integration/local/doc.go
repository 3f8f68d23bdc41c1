// Package local holds the end-to-end tests of the local provider: a real
// kube-apiserver (internal/testenv) that is also the workload cluster, the
// simulated cloud started in-process on loopback with its node agent
// joining instances as Nodes through bootstrap tokens, and a real manager
// running the Cluster, MachinePool and LocalMachinePool controllers.
//
// Run them with:
//
//	go test -p 1 ./test/integration/local/
//
// MPOOL_TEST_LOG=<verbosity> writes the controllers' logs to stderr.
// MPOOL_BENCH=1 also runs the 1,000 and 10,000 instance benchmarks
// (TestBenchmark*), which print their figures.
package local
