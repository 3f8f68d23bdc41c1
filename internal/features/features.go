// Package features owns mpool's feature gates: their names, defaults, and how
// the Cluster API environment variables (EXP_MACHINE_POOL, ...) set them.
package features

import (
	"fmt"
	"strconv"

	"k8s.io/component-base/featuregate"
)

const (
	// MachinePool enables the MachinePool controllers and lets MachinePools
	// be created. Env: EXP_MACHINE_POOL.
	MachinePool featuregate.Feature = "MachinePool"
	// SkipMachinePoolModelReconciliation stops the rollout engine from
	// replacing instances only because they run a stale model; deletePolicy
	// and the budgets alone decide. Env: EXP_SKIP_MACHINE_POOL_MODEL_RECONCILIATION.
	SkipMachinePoolModelReconciliation featuregate.Feature = "SkipMachinePoolModelReconciliation"
)

// specs are the gates, their defaults and maturity, as the Cluster API and
// CAPZ documentation give them.
var specs = map[featuregate.Feature]featuregate.FeatureSpec{
	MachinePool:                        {Default: true, PreRelease: featuregate.Beta},
	SkipMachinePoolModelReconciliation: {Default: false, PreRelease: featuregate.Alpha},
}

// envVars maps each gate to the environment variable that sets it.
var envVars = map[featuregate.Feature]string{
	MachinePool:                        "EXP_MACHINE_POOL",
	SkipMachinePoolModelReconciliation: "EXP_SKIP_MACHINE_POOL_MODEL_RECONCILIATION",
}

// NewGate returns a gate with mpool's features at their defaults.
func NewGate() featuregate.MutableFeatureGate {
	g := featuregate.NewFeatureGate()
	if err := g.Add(specs); err != nil {
		panic(err) // the specs above are static and valid
	}
	return g
}

// ApplyEnv sets gates from their environment variables (read through getenv).
// Call it before applying --feature-gates, which takes precedence.
func ApplyEnv(g featuregate.MutableFeatureGate, getenv func(string) string) error {
	set := map[string]bool{}
	for f, name := range envVars {
		v := getenv(name)
		if v == "" {
			continue
		}
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("environment variable %s=%q: want true or false", name, v)
		}
		set[string(f)] = b
	}
	if len(set) == 0 {
		return nil
	}
	return g.SetFromMap(set)
}
