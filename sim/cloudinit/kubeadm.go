package cloudinit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// Supported kubeadm API versions.
const (
	KubeadmV1Beta3 = "kubeadm.k8s.io/v1beta3"
	KubeadmV1Beta4 = "kubeadm.k8s.io/v1beta4"
)

// JoinConfig is what a simulated node takes from a kubeadm JoinConfiguration.
type JoinConfig struct {
	// APIVersion is the configuration's kubeadm API version.
	APIVersion string
	// APIServerEndpoint is discovery.bootstrapToken.apiServerEndpoint
	// (host:port).
	APIServerEndpoint string
	// DiscoveryToken is discovery.bootstrapToken.token.
	DiscoveryToken string
	// TLSBootstrapToken is the token the kubelet authenticates with:
	// discovery.tlsBootstrapToken, defaulting to DiscoveryToken as in kubeadm.
	TLSBootstrapToken string
	// CACertHashes are the "sha256:<hex>" pins of the cluster CA's public key.
	CACertHashes []string
	// UnsafeSkipCAVerification allows joining without CACertHashes.
	UnsafeSkipCAVerification bool
	// NodeName is nodeRegistration.name; empty means the host name.
	NodeName string
	// Taints are nodeRegistration.taints; nil means none.
	Taints []corev1.Taint
	// KubeletExtraArgs are nodeRegistration.kubeletExtraArgs by name. For
	// v1beta4, where an argument may repeat, the last value wins.
	KubeletExtraArgs map[string]string
	// NodeLabels are parsed from the kubelet's --node-labels argument.
	NodeLabels map[string]string
}

type rawJoinConfiguration struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Discovery  struct {
		BootstrapToken *struct {
			Token                    string   `json:"token"`
			APIServerEndpoint        string   `json:"apiServerEndpoint"`
			CACertHashes             []string `json:"caCertHashes"`
			UnsafeSkipCAVerification bool     `json:"unsafeSkipCAVerification"`
		} `json:"bootstrapToken"`
		File              *json.RawMessage `json:"file"`
		TLSBootstrapToken string           `json:"tlsBootstrapToken"`
	} `json:"discovery"`
	NodeRegistration struct {
		Name             string          `json:"name"`
		Taints           []corev1.Taint  `json:"taints"`
		KubeletExtraArgs json.RawMessage `json:"kubeletExtraArgs"`
	} `json:"nodeRegistration"`
}

// ParseJoinConfiguration parses the kubeadm configuration file a join uses:
// one or more YAML documents, one of which is a JoinConfiguration.
func ParseJoinConfiguration(data []byte) (*JoinConfig, error) {
	var found *rawJoinConfiguration
	for _, doc := range splitYAML(data) {
		var meta struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			return nil, fmt.Errorf("parsing kubeadm configuration: %w", err)
		}
		if meta.Kind != "JoinConfiguration" {
			continue
		}
		if meta.APIVersion != KubeadmV1Beta3 && meta.APIVersion != KubeadmV1Beta4 {
			return nil, fmt.Errorf("unsupported JoinConfiguration apiVersion %q (want %s or %s)", meta.APIVersion, KubeadmV1Beta3, KubeadmV1Beta4)
		}
		raw := &rawJoinConfiguration{}
		if err := yaml.Unmarshal(doc, raw); err != nil {
			return nil, fmt.Errorf("parsing JoinConfiguration: %w", err)
		}
		found = raw
	}
	if found == nil {
		return nil, errors.New("kubeadm configuration has no JoinConfiguration")
	}
	raw := found
	jc := &JoinConfig{APIVersion: raw.APIVersion, NodeName: raw.NodeRegistration.Name, Taints: raw.NodeRegistration.Taints}
	switch {
	case raw.Discovery.BootstrapToken != nil:
		bt := raw.Discovery.BootstrapToken
		jc.APIServerEndpoint = bt.APIServerEndpoint
		jc.DiscoveryToken = bt.Token
		jc.CACertHashes = bt.CACertHashes
		jc.UnsafeSkipCAVerification = bt.UnsafeSkipCAVerification
	case raw.Discovery.File != nil:
		return nil, errors.New("file-based discovery is not supported by the simulated node; use discovery.bootstrapToken")
	default:
		return nil, errors.New("JoinConfiguration has no discovery.bootstrapToken")
	}
	jc.TLSBootstrapToken = raw.Discovery.TLSBootstrapToken
	if jc.TLSBootstrapToken == "" {
		jc.TLSBootstrapToken = jc.DiscoveryToken
	}
	if jc.APIServerEndpoint == "" {
		return nil, errors.New("JoinConfiguration has no discovery.bootstrapToken.apiServerEndpoint")
	}
	if jc.TLSBootstrapToken == "" {
		return nil, errors.New("JoinConfiguration has no bootstrap token")
	}
	args, err := parseKubeletExtraArgs(raw.NodeRegistration.KubeletExtraArgs)
	if err != nil {
		return nil, err
	}
	jc.KubeletExtraArgs = args
	labels, err := ParseNodeLabels(args["node-labels"])
	if err != nil {
		return nil, err
	}
	jc.NodeLabels = labels
	return jc, nil
}

// parseKubeletExtraArgs accepts both shapes: the v1beta3 map and the v1beta4
// list of {name, value}. Accepting either regardless of apiVersion is lenient
// on purpose; kubeadm's own conversion does not care how a file was typed.
func parseKubeletExtraArgs(raw json.RawMessage) (map[string]string, error) {
	out := map[string]string{}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return out, nil
	}
	switch raw[0] {
	case '{':
		var m map[string]string
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, fmt.Errorf("parsing nodeRegistration.kubeletExtraArgs: %w", err)
		}
		for k, v := range m {
			out[k] = v
		}
	case '[':
		var l []struct {
			Name  string `json:"name"`
			Value string `json:"value"`
		}
		if err := json.Unmarshal(raw, &l); err != nil {
			return nil, fmt.Errorf("parsing nodeRegistration.kubeletExtraArgs: %w", err)
		}
		for _, a := range l {
			out[a.Name] = a.Value
		}
	default:
		return nil, fmt.Errorf("parsing nodeRegistration.kubeletExtraArgs: want a map or a list, got %s", truncate(string(raw), 40))
	}
	return out, nil
}

// ParseNodeLabels parses the kubelet's --node-labels value: comma-separated
// key=value pairs.
func ParseNodeLabels(s string) (map[string]string, error) {
	out := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		kv = strings.TrimSpace(kv)
		if kv == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("invalid node label %q: want key=value", kv)
		}
		out[k] = v
	}
	return out, nil
}

// splitYAML splits a multi-document YAML stream on "---" separator lines.
func splitYAML(data []byte) [][]byte {
	var docs [][]byte
	var cur bytes.Buffer
	flush := func() {
		if len(bytes.TrimSpace(cur.Bytes())) > 0 {
			docs = append(docs, bytes.Clone(cur.Bytes()))
		}
		cur.Reset()
	}
	for _, line := range bytes.SplitAfter(data, []byte("\n")) {
		t := bytes.TrimRight(line, " \t\r\n")
		if bytes.Equal(t, []byte("---")) || bytes.HasPrefix(t, []byte("--- ")) {
			flush()
			continue
		}
		cur.Write(line)
	}
	flush()
	return docs
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
