package cli

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// newDescribeCommand returns `mpool describe`.
func newDescribeCommand() *cobra.Command { return newDescribeCommandWith(clock.RealClock{}) }

// newDescribeCommandWith returns `mpool describe` measuring ages against clk.
func newDescribeCommandWith(clk clock.PassiveClock) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "describe",
		Short: "Show a MachinePool or a Cluster as a tree, with what needs attention",
		Args:  cobra.NoArgs,
	}
	pf := cmd.PersistentFlags()
	cf := addClientFlags(pf)
	out := addOutputFlag(pf)
	color := addColorFlag(pf)

	mp := &cobra.Command{
		Use:     "machinepool NAME",
		Aliases: []string{"mp", "machinepools"},
		Short:   "Show a MachinePool: bootstrap config, infrastructure pool, instances and Nodes",
		Long: `Show a MachinePool as a tree: its bootstrap config, its infrastructure pool and
each instance with its state, zone, model (up to date or stale), Node, how long the
Node has been Ready and its age, followed by every condition that needs attention
with its reason and message. Nodes are read from the workload cluster through the
"<cluster>-kubeconfig" Secret.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			mc, err := cf.connect()
			if err != nil {
				return err
			}
			s, err := collectPool(cmd.Context(), mc, mc.namespace, args[0], collectOptions{nodes: true})
			if err != nil {
				return err
			}
			v := machinePoolView(s)
			w := cmd.OutOrStdout()
			if *out != "" {
				return writeStructured(w, *out, v)
			}
			return writeMachinePool(w, v, clk.Now(), color.palette(w))
		},
	}
	cl := &cobra.Command{
		Use:     "cluster NAME",
		Aliases: []string{"clusters"},
		Short:   "Show a Cluster and its MachinePools, one line each",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			mc, err := cf.connect()
			if err != nil {
				return err
			}
			v, err := collectCluster(cmd.Context(), mc, mc.namespace, args[0])
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if *out != "" {
				return writeStructured(w, *out, v)
			}
			return writeCluster(w, v, clk.Now(), color.palette(w))
		},
	}
	cmd.AddCommand(mp, cl)
	return cmd
}

// machinePoolView builds the describe view of a collected pool.
func machinePoolView(s *poolState) MachinePoolView {
	mp := s.pool
	v := MachinePoolView{
		Namespace:      mp.Namespace,
		Name:           mp.Name,
		Cluster:        mp.Spec.ClusterName,
		Phase:          mp.Status.Phase,
		Version:        poolVersion(s),
		RolloutPaused:  rolloutPaused(mp),
		Replicas:       replicaCounts(s),
		Created:        mp.CreationTimestamp,
		Conditions:     attention(mp.Status.Conditions),
		Bootstrap:      s.bootstrap,
		Infrastructure: &s.infra.view,
		Notes:          s.notes,
	}
	return v
}

// poolVersion is the Kubernetes version of a collected pool: its
// MachinePool's spec.template.spec.version, else — for a pool whose cloud
// picks the version (an EKS node group runs its cluster's) — the kubelet
// versions its live instances' Nodes report, the most common first
// ("v1.31.2, v1.30.4" while they differ), "" when nothing says.
func poolVersion(s *poolState) string {
	if v := s.pool.Spec.Template.Spec.Version; v != "" {
		return v
	}
	count := map[string]int{}
	var versions []string
	for _, in := range s.instances {
		if in.Version == "" || !live(in) {
			continue
		}
		if count[in.Version] == 0 {
			versions = append(versions, in.Version)
		}
		count[in.Version]++
	}
	slices.SortStableFunc(versions, func(a, b string) int { return cmp.Or(count[b]-count[a], strings.Compare(a, b)) })
	return strings.Join(versions, ", ")
}

// replicaCounts are a collected pool's replica counts, as the MachinePool
// reports them in its v1beta2 status (see ReplicaCounts); up to date is
// counted from the instances until the MachinePool reports it.
func replicaCounts(s *poolState) ReplicaCounts {
	st := s.pool.Status
	r := ReplicaCounts{
		Desired:   desiredReplicas(s.pool),
		Current:   ptr.Deref(st.Replicas, 0),
		Ready:     ptr.Deref(st.ReadyReplicas, 0),
		Available: ptr.Deref(st.AvailableReplicas, 0),
	}
	if st.UpToDateReplicas != nil {
		r.UpToDate = *st.UpToDateReplicas
		return r
	}
	for _, in := range s.instances {
		if live(in) && ptr.Deref(in.UpToDate, false) {
			r.UpToDate++
		}
	}
	return r
}

// collectCluster reads the Cluster ns/name and a summary of each of its
// MachinePools.
func collectCluster(ctx context.Context, c client.Client, ns, name string) (*ClusterView, error) {
	cl := &clusterv1.Cluster{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, cl); err != nil {
		return nil, notFound(err, "cluster", ns, name)
	}
	v := &ClusterView{
		Namespace:    ns,
		Name:         name,
		Phase:        cl.Status.Phase,
		Paused:       ptr.Deref(cl.Spec.Paused, false),
		Created:      cl.CreationTimestamp,
		Conditions:   attention(cl.Status.Conditions),
		MachinePools: []PoolSummaryView{},
	}
	if ep := cl.Spec.ControlPlaneEndpoint; !ep.IsZero() {
		v.ControlPlaneEndpoint = fmt.Sprintf("%s:%d", ep.Host, ep.Port)
	}
	pools := &clusterv1.MachinePoolList{}
	if err := c.List(ctx, pools, client.InNamespace(ns)); err != nil {
		return nil, fmt.Errorf("listing the MachinePools of cluster %s/%s: %w", ns, name, err)
	}
	for i := range pools.Items {
		mp := &pools.Items[i]
		if mp.Spec.ClusterName != name {
			continue
		}
		s, err := collectPoolFrom(ctx, c, mp, collectOptions{})
		if err != nil {
			return nil, err
		}
		ref := mp.Spec.Template.Spec.InfrastructureRef
		sum := PoolSummaryView{
			Name:           mp.Name,
			Phase:          mp.Status.Phase,
			Version:        poolVersion(s),
			Infrastructure: ref.Kind + "/" + ref.Name,
			RolloutPaused:  rolloutPaused(mp),
			Replicas:       replicaCounts(s),
			Created:        mp.CreationTimestamp,
		}
		for _, cond := range mp.Status.Conditions {
			if cond.Type == clusterv1.ReadyCondition {
				sum.Ready = string(cond.Status)
			}
		}
		v.MachinePools = append(v.MachinePools, sum)
	}
	slices.SortFunc(v.MachinePools, func(a, b PoolSummaryView) int { return cmp.Compare(a.Name, b.Name) })
	return v, nil
}
