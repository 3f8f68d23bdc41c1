package cli

import (
	"fmt"
	"io"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/mpool-dev/mpool/internal/provider/contract"
)

// writeMachinePool writes the describe tree of a MachinePool, ages measured
// at now.
func writeMachinePool(w io.Writer, v MachinePoolView, now time.Time, p palette) error {
	root := &treeNode{cells: []cell{
		c("MachinePool "+v.Namespace+"/"+v.Name, bold),
		c(v.Phase, phaseStyle(v.Phase)),
		c("cluster "+v.Cluster, plain),
		c(prefixed("version ", v.Version), plain),
		c("age "+age(&v.Created, now), plain),
		c(when(v.RolloutPaused, "rollout paused"), warn),
	}}
	r := v.Replicas
	root.details = append(root.details, []cell{c(fmt.Sprintf("replicas: %d desired, %d current, %d ready, %d available, %d up to date",
		r.Desired, r.Current, r.Ready, r.Available, r.UpToDate), replicasStyle(r))})
	root.add(conditionNodes(v.Conditions)...)
	if b := v.Bootstrap; b != nil {
		n := &treeNode{group: "ref"}
		switch {
		case b.Kind == "":
			n.cells = []cell{c("Bootstrap", plain), c("data secret "+b.DataSecretName, plain)}
		case !b.Found:
			n.cells = []cell{c("Bootstrap", plain), c(b.Kind+"/"+b.Name, bold), c("not found", bad)}
		default:
			n.cells = []cell{c("Bootstrap", plain), c(b.Kind+"/"+b.Name, bold), readyCell(b.Ready), c(prefixed("data secret ", b.DataSecretName), plain)}
		}
		n.add(conditionNodes(b.Conditions)...)
		root.add(n)
	}
	if in := v.Infrastructure; in != nil {
		root.add(infraNode(in, now))
	}
	if err := renderTree(w, root, p); err != nil {
		return err
	}
	for _, note := range v.Notes {
		if _, err := fmt.Fprintln(w, p.paint("note: "+note, warn)); err != nil {
			return err
		}
	}
	return nil
}

func infraNode(in *InfraPoolView, now time.Time) *treeNode {
	n := &treeNode{group: "ref"}
	if !in.Found {
		n.cells = []cell{c("Infrastructure", plain), c(in.Kind+"/"+in.Name, bold), c("not found", bad)}
		return n
	}
	n.cells = []cell{
		c("Infrastructure", plain),
		c(in.Kind+"/"+in.Name, bold),
		readyCell(in.Ready),
		c(fmt.Sprintf("%d replicas", in.Replicas), plain),
	}
	if in.FailureReason != "" || in.FailureMessage != "" {
		n.details = append(n.details, []cell{c("failed: "+joinNonEmpty(": ", in.FailureReason, in.FailureMessage), bad)})
	}
	if in.Rollout != "" {
		n.details = append(n.details, []cell{c("rolls by "+in.Rollout, faint)})
	}
	n.add(conditionNodes(in.Conditions)...)
	if len(in.Instances) == 0 {
		n.details = append(n.details, []cell{c("no instances", faint)})
	}
	for i := range in.Instances {
		n.add(instanceNode(&in.Instances[i], now))
	}
	return n
}

func instanceNode(in *InstanceView, now time.Time) *treeNode {
	model := c("model ?", faint)
	if in.UpToDate != nil {
		model = c("up to date", good)
		if !*in.UpToDate {
			model = c("stale", warn)
		}
	}
	node, nodeStatus := c("no node", faint), c("", plain)
	if nv := in.Node; nv != nil {
		node = c("node "+nv.Name, plain)
		switch nv.Status {
		case "":
		case "Ready":
			nodeStatus = c("Ready for "+age(nv.Since, now), good)
		case "NotFound":
			nodeStatus = c("not found", bad)
		default:
			nodeStatus = c(nv.Status+" for "+age(nv.Since, now), bad)
		}
	}
	zone := in.Zone
	if zone == "" {
		zone = "-"
	}
	extra := ""
	switch {
	case in.Remediation == "Remediating":
		extra = "remediating"
	case in.Remediation == "Deferred":
		extra = "remediation deferred"
	case in.Remediation == "Waiting":
		extra = "waiting for remediation"
	case in.Deleting:
		extra = "deleting"
	case in.MarkedForDeletion:
		extra = "marked for deletion"
	case in.Quarantined:
		extra = "quarantined: Node not drained, left cordoned"
	}
	n := &treeNode{group: "instance", cells: []cell{
		c(in.Name, bold),
		c(stateText(*in), stateStyle(in.State)),
		c(zone, plain),
		model,
		node,
		nodeStatus,
		healthCell(in.Health),
		c("age "+age(in.Created, now), plain),
		c(extra, warn),
	}}
	n.add(conditionNodes(in.Conditions)...)
	return n
}

// writeCluster writes the describe tree of a Cluster, ages measured at now.
func writeCluster(w io.Writer, v *ClusterView, now time.Time, p palette) error {
	root := &treeNode{cells: []cell{
		c("Cluster "+v.Namespace+"/"+v.Name, bold),
		c(v.Phase, phaseStyle(v.Phase)),
		c(prefixed("endpoint ", v.ControlPlaneEndpoint), plain),
		c("age "+age(&v.Created, now), plain),
		c(when(v.Paused, "paused"), warn),
	}}
	root.add(conditionNodes(v.Conditions)...)
	if len(v.MachinePools) == 0 {
		root.details = append(root.details, []cell{c("no MachinePools", faint)})
	}
	for _, mp := range v.MachinePools {
		r := mp.Replicas
		root.add(&treeNode{group: "pool", cells: []cell{
			c("MachinePool/"+mp.Name, bold),
			c(orDash(mp.Phase), phaseStyle(mp.Phase)),
			c(fmt.Sprintf("%d/%d ready", r.Ready, r.Desired), countStyle(r.Ready, r.Desired)),
			c(fmt.Sprintf("%d/%d up to date", r.UpToDate, r.Desired), countStyle(r.UpToDate, r.Desired)),
			c(fmt.Sprintf("%d/%d available", r.Available, r.Desired), countStyle(r.Available, r.Desired)),
			c(mp.Infrastructure, plain),
			c(orDash(mp.Version), plain),
			c("age "+age(&mp.Created, now), plain),
			c(when(mp.RolloutPaused, "rollout paused"), warn),
		}})
	}
	return renderTree(w, root, p)
}

// conditionNodes makes one aligned line per condition.
func conditionNodes(conds []ConditionView) []*treeNode {
	out := make([]*treeNode, 0, len(conds))
	for _, cv := range conds {
		st := warn
		if cv.Status == string(metav1.ConditionFalse) && !negativePolarity[cv.Type] && cv.Type != rolloutProgressingCondition {
			st = bad
		}
		out = append(out, &treeNode{group: "condition", cells: []cell{
			c(cv.Type+"="+cv.Status, st),
			c(cv.Reason, plain),
			c(cv.Message, plain),
		}})
	}
	return out
}

func readyCell(ready bool) cell {
	if ready {
		return c("ready", good)
	}
	return c("not ready", warn)
}

func phaseStyle(phase string) style {
	switch phase {
	case "Running":
		return good
	case "Failed":
		return bad
	default:
		return warn
	}
}

// stateText is an instance's state in mpool's vocabulary, the provider's
// own word in brackets when it differs: "Running (Succeeded)".
func stateText(in InstanceView) string {
	if in.CloudState != "" && in.CloudState != in.State {
		return orDash(in.State) + " (" + in.CloudState + ")"
	}
	return orDash(in.State)
}

func stateStyle(state string) style {
	switch contract.InstanceState(state) {
	case contract.InstanceRunning:
		return good
	case contract.InstanceFailed:
		return bad
	default:
		return warn
	}
}

func replicasStyle(r ReplicaCounts) style {
	if r.Available == r.Desired && r.UpToDate == r.Desired && r.Current == r.Desired {
		return plain
	}
	return warn
}

func countStyle(n, desired int32) style {
	if n >= desired {
		return good
	}
	return warn
}

// age formats how long ago t was, at now; "-" when t is unknown.
func age(t *metav1.Time, now time.Time) string {
	if t == nil || t.IsZero() {
		return "-"
	}
	return duration.HumanDuration(now.Sub(t.Time))
}

func prefixed(prefix, s string) string {
	if s == "" {
		return ""
	}
	return prefix + s
}

func when(on bool, s string) string {
	if on {
		return s
	}
	return ""
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func joinNonEmpty(sep string, parts ...string) string {
	out := ""
	for _, s := range parts {
		if s == "" {
			continue
		}
		if out != "" {
			out += sep
		}
		out += s
	}
	return out
}

// healthCell shows what a MachineHealthCheck found, nothing when no check
// covers the instance.
func healthCell(health string) cell {
	switch health {
	case "":
		return c("", plain)
	case "Healthy":
		return c("healthy", good)
	case "Unhealthy":
		return c("unhealthy", bad)
	default:
		return c("health "+strings.ToLower(health), warn)
	}
}
