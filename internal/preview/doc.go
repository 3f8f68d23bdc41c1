// Package preview holds the rollout engine's pure rules — how a pool's
// instances, their per-instance objects, Machines and Nodes become the
// planner's input, the annotations the engine reads and writes, the
// strategy mapping shared by every provider — and the dry run built on
// them: Input turns what the management cluster's API server holds about a
// pool into rollout.Input, and Project shows how a rollout would unfold.
//
// The engine (internal/controller/infrapool) plans with the same functions,
// so `mpool rollout plan` (internal/cli) shows the engine's own decisions
// without importing the engine or asking the cloud. Nothing here does I/O.
package preview
