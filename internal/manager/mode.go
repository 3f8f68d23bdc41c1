package manager

import (
	"fmt"
	"strings"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
)

// Mode is how much of Cluster API a manager runs: all of it, or the part
// upstream Cluster API on the same management cluster leaves to mpool.
type Mode string

const (
	// ModeStandalone runs the whole system: the Cluster, KubeadmConfig and
	// MachinePool controllers, the providers and the rollout engine. No
	// upstream Cluster API runs on the cluster.
	ModeStandalone Mode = "standalone"
	// ModePools runs mpool's MachinePool controller and its providers in
	// place of upstream's MachinePool controller: upstream core runs with
	// its MachinePool feature gate off and owns Clusters and Machines,
	// upstream's kubeadm bootstrap provider owns KubeadmConfigs.
	ModePools Mode = "pools"
	// ModeProviders runs only mpool's infrastructure pool controllers and
	// the rollout engine, under upstream core's MachinePool controller and
	// upstream's kubeadm bootstrap provider: mpool is an infrastructure
	// provider like CAPZ or CAPA.
	ModeProviders Mode = "providers"
)

// Modes are the modes a manager can run in, in the order the help lists
// them.
var Modes = []Mode{ModeStandalone, ModePools, ModeProviders}

// String implements pflag.Value; the empty Mode is ModeStandalone.
func (m Mode) String() string {
	if m == "" {
		return string(ModeStandalone)
	}
	return string(m)
}

// Set implements pflag.Value: one of Modes.
func (m *Mode) Set(s string) error {
	for _, k := range Modes {
		if string(k) == s {
			*m = k
			return nil
		}
	}
	names := make([]string, len(Modes))
	for i, k := range Modes {
		names[i] = string(k)
	}
	return fmt.Errorf("unknown mode %q: want one of %s", s, strings.Join(names, ", "))
}

// Type implements pflag.Value.
func (*Mode) Type() string { return "mode" }

// RunsClusters reports whether mpool's own Cluster and KubeadmConfig
// controllers, and upstream's MachineHealthCheck controller, run (no upstream core or kubeadm bootstrap provider beside it).
func (m Mode) RunsClusters() bool { return m == "" || m == ModeStandalone }

// RunsMachinePools reports whether mpool's MachinePool controller runs.
func (m Mode) RunsMachinePools() bool { return m != ModeProviders }

// ConvertsGroup reports whether mpool's conversion webhook converts the
// kinds of the API group: its own infrastructure kinds always, Cluster API's
// core and bootstrap kinds only when no upstream Cluster API serves them.
func (m Mode) ConvertsGroup(group string) bool {
	return m.RunsClusters() || group == infrav1.GroupVersion.Group
}
