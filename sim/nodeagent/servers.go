package nodeagent

import (
	"sort"

	"k8s.io/client-go/rest"
)

// Servers returns copies of the agent's credentials (Options.Credentials),
// one per workload API server, sorted by host: the clusters the simulated
// VMs can join. Faces whose cloud bootstraps its own nodes (EKS) read the
// endpoint and CA they publish, and act on the cluster as the cloud's
// controllers would, with them.
func (a *Agent) Servers() []*rest.Config {
	if a == nil {
		return nil
	}
	out := make([]*rest.Config, 0, len(a.creds))
	for _, c := range a.creds {
		out = append(out, rest.CopyConfig(c))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Host < out[j].Host })
	return out
}
