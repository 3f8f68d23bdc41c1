package cloudinit

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"
)

// JoinConfigPath is where Cluster API's kubeadm bootstrap provider writes
// the JoinConfiguration, and WriteJoin too.
const JoinConfigPath = "/run/kubeadm/kubeadm-join-config.yaml"

// localHostnameTemplate names the node after the instance's host name, as
// Cluster API's kubeadm bootstrap provider does (rendered by Render).
const localHostnameTemplate = `{{ ds.meta_data["local_hostname"] }}`

// WriteJoin writes bootstrap data shaped like Cluster API's kubeadm
// bootstrap output for j: a jinja-templated #cloud-config whose write_files
// holds j's JoinConfiguration (at j.APIVersion, default v1beta3; the node
// named after the instance's local_hostname when j.NodeName is empty; the
// kubelet's --node-labels from j.NodeLabels besides j.KubeletExtraArgs) and
// whose runcmd runs kubeadm join, then marks bootstrap success when
// sentinel is true. It is what the simulated clouds that bootstrap their
// instances themselves (EKS) give them, and what the simulator's tests
// boot; ReadJoin reads it back.
func WriteJoin(j JoinConfig, sentinel bool) []byte {
	if j.APIVersion == "" {
		j.APIVersion = KubeadmV1Beta3
	}
	if j.NodeName == "" {
		j.NodeName = localHostnameTemplate
	}
	args := maps.Clone(j.KubeletExtraArgs)
	if len(j.NodeLabels) > 0 {
		if args == nil {
			args = map[string]string{}
		}
		var pairs []string
		for _, k := range slices.Sorted(maps.Keys(j.NodeLabels)) {
			pairs = append(pairs, k+"="+j.NodeLabels[k])
		}
		args["node-labels"] = strings.Join(pairs, ",")
	}
	bt := map[string]any{"apiServerEndpoint": j.APIServerEndpoint, "token": j.DiscoveryToken}
	if len(j.CACertHashes) > 0 {
		bt["caCertHashes"] = j.CACertHashes
	}
	if j.UnsafeSkipCAVerification {
		bt["unsafeSkipCAVerification"] = true
	}
	discovery := map[string]any{"bootstrapToken": bt}
	if j.TLSBootstrapToken != "" && j.TLSBootstrapToken != j.DiscoveryToken {
		discovery["tlsBootstrapToken"] = j.TLSBootstrapToken
	}
	reg := map[string]any{"name": j.NodeName}
	if len(j.Taints) > 0 {
		reg["taints"] = j.Taints
	}
	if len(args) > 0 {
		if j.APIVersion == KubeadmV1Beta4 {
			var list []map[string]string
			for _, k := range slices.Sorted(maps.Keys(args)) {
				list = append(list, map[string]string{"name": k, "value": args[k]})
			}
			reg["kubeletExtraArgs"] = list
		} else {
			reg["kubeletExtraArgs"] = args
		}
	}
	conf, err := yaml.Marshal(map[string]any{
		"apiVersion":       j.APIVersion,
		"kind":             "JoinConfiguration",
		"discovery":        discovery,
		"nodeRegistration": reg,
	})
	if err != nil { // maps of strings and taints always marshal
		panic(fmt.Sprintf("cloudinit: writing a JoinConfiguration: %v", err))
	}
	run := "kubeadm join --config " + JoinConfigPath
	if sentinel {
		run += " && echo success > /run/cluster-api/bootstrap-success.complete"
	}
	var b strings.Builder
	b.WriteString("## template: jinja\n#cloud-config\nwrite_files:\n")
	fmt.Fprintf(&b, "- path: %s\n  owner: root:root\n  permissions: '0640'\n  content: |\n", JoinConfigPath)
	for line := range strings.Lines(string(conf)) {
		b.WriteString("    " + line)
	}
	fmt.Fprintf(&b, "runcmd:\n- %s\n", run)
	return []byte(b.String())
}
