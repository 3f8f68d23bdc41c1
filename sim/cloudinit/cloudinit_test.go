package cloudinit

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// capiV1Beta3 is shaped like Cluster API's kubeadm bootstrap output for a
// pool (see the seeds' KubeadmConfig example).
const capiV1Beta3 = `## template: jinja
#cloud-config

write_files:
-   path: /etc/kubernetes/azure.json
    owner: root:root
    permissions: '0644'
    content: |
      {"cloud": "AzurePublicCloud"}
-   path: /run/kubeadm/kubeadm-join-config.yaml
    owner: root:root
    permissions: '0640'
    content: |
      ---
      apiVersion: kubeadm.k8s.io/v1beta3
      discovery:
        bootstrapToken:
          apiServerEndpoint: 10.0.0.1:6443
          caCertHashes:
          - sha256:abcd
          token: abcdef.0123456789abcdef
      kind: JoinConfiguration
      nodeRegistration:
        kubeletExtraArgs:
          cloud-provider: external
          node-labels: pool=blue,tier=web
        name: '{{ ds.meta_data["local_hostname"] }}'
        taints:
        - key: dedicated
          value: gpu
          effect: NoSchedule
-   path: /run/cluster-api/placeholder
    owner: root:root
    permissions: '0640'
    content: "This placeholder file is used to create the /run/cluster-api sub directory in a way that is compatible with both Linux and Windows (mkdir -p /run/cluster-api does not work with Windows)"
runcmd:
  - kubeadm join --config /run/kubeadm/kubeadm-join-config.yaml  && echo success > /run/cluster-api/bootstrap-success.complete
`

const v1beta4Join = `apiVersion: kubeadm.k8s.io/v1beta4
kind: JoinConfiguration
discovery:
  bootstrapToken:
    apiServerEndpoint: api.example:443
    token: zyxwvu.0123456789abcdef
    unsafeSkipCAVerification: true
  tlsBootstrapToken: tlstok.0123456789abcdef
nodeRegistration:
  name: '{{ ds.meta_data.local_hostname }}'
  kubeletExtraArgs:
  - name: node-labels
    value: a=1
  - name: node-labels
    value: a=2,b=3
  - name: v
    value: "2"
`

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func gz(t testing.TB, s string) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	if _, err := w.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func indent(s, pad string) string {
	return pad + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n"+pad)
}

func TestReadJoin(t *testing.T) {
	meta := Metadata{LocalHostname: "pool-i-00000001", InstanceID: "i-00000001"}
	v1beta4Plain := "#cloud-config\nwrite_files:\n- path: /run/kubeadm/kubeadm-join-config.yaml\n  content: |\n" + indent(v1beta4Join, "    ") + "\n"
	tests := []struct {
		name string
		data string
		want *JoinConfig
	}{
		{
			name: "Cluster API v1beta3 output with the jinja header, map kubeletExtraArgs and taints",
			data: capiV1Beta3,
			want: &JoinConfig{
				APIVersion: KubeadmV1Beta3, APIServerEndpoint: "10.0.0.1:6443",
				DiscoveryToken: "abcdef.0123456789abcdef", TLSBootstrapToken: "abcdef.0123456789abcdef",
				CACertHashes: []string{"sha256:abcd"}, NodeName: "pool-i-00000001",
				Taints:           []corev1.Taint{{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule}},
				KubeletExtraArgs: map[string]string{"cloud-provider": "external", "node-labels": "pool=blue,tier=web"},
				NodeLabels:       map[string]string{"pool": "blue", "tier": "web"},
			},
		},
		{
			name: "v1beta4 list kubeletExtraArgs (last wins), dotted jinja form, tlsBootstrapToken",
			data: v1beta4Plain,
			want: &JoinConfig{
				APIVersion: KubeadmV1Beta4, APIServerEndpoint: "api.example:443",
				DiscoveryToken: "zyxwvu.0123456789abcdef", TLSBootstrapToken: "tlstok.0123456789abcdef",
				UnsafeSkipCAVerification: true, NodeName: "pool-i-00000001",
				KubeletExtraArgs: map[string]string{"node-labels": "a=2,b=3", "v": "2"},
				NodeLabels:       map[string]string{"a": "2", "b": "3"},
			},
		},
		{
			name: "base64-encoded join file",
			data: "#cloud-config\nwrite_files:\n- path: /run/kubeadm/kubeadm-join-config.yaml\n  encoding: b64\n  content: " +
				b64(strings.ReplaceAll(v1beta4Join, "'{{ ds.meta_data.local_hostname }}'", "node-a")) + "\n",
			want: &JoinConfig{
				APIVersion: KubeadmV1Beta4, APIServerEndpoint: "api.example:443",
				DiscoveryToken: "zyxwvu.0123456789abcdef", TLSBootstrapToken: "tlstok.0123456789abcdef",
				UnsafeSkipCAVerification: true, NodeName: "node-a",
				KubeletExtraArgs: map[string]string{"node-labels": "a=2,b=3", "v": "2"},
				NodeLabels:       map[string]string{"a": "2", "b": "3"},
			},
		},
		{
			name: "gzip+base64 join file at the path runcmd names, empty name defaults to the host name",
			data: "#cloud-config\nwrite_files:\n- path: /etc/kubeadm/join.yaml\n  encoding: gzip+base64\n  content: " +
				base64.StdEncoding.EncodeToString(gz(t, "apiVersion: kubeadm.k8s.io/v1beta3\nkind: JoinConfiguration\ndiscovery:\n  bootstrapToken:\n    apiServerEndpoint: h:1\n    token: abcdef.0123456789abcdef\n    caCertHashes: [sha256:ff]\n")) +
				"\nruncmd:\n- [kubeadm, join, --config, /etc/kubeadm/join.yaml]\n",
			want: &JoinConfig{
				APIVersion: KubeadmV1Beta3, APIServerEndpoint: "h:1",
				DiscoveryToken: "abcdef.0123456789abcdef", TLSBootstrapToken: "abcdef.0123456789abcdef",
				CACertHashes: []string{"sha256:ff"}, NodeName: "pool-i-00000001",
				KubeletExtraArgs: map[string]string{}, NodeLabels: map[string]string{},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadJoin([]byte(tt.data), meta)
			if err != nil {
				t.Fatalf("ReadJoin: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ReadJoin:\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestReadJoinErrors(t *testing.T) {
	tests := []struct {
		name    string
		data    string
		wantErr string
	}{
		{name: "a shell script is not cloud-config", data: "#!/bin/sh\nkubeadm join\n", wantErr: "not a #cloud-config"},
		{name: "empty data", data: "", wantErr: "not a #cloud-config"},
		{name: "no join file", data: "#cloud-config\nruncmd: [echo]\n", wantErr: "no kubeadm join configuration"},
		{name: "unsupported kubeadm version", data: "#cloud-config\nwrite_files:\n- path: /run/kubeadm/kubeadm-join-config.yaml\n  content: |\n    apiVersion: kubeadm.k8s.io/v1beta2\n    kind: JoinConfiguration\n", wantErr: "unsupported JoinConfiguration apiVersion"},
		{name: "file discovery", data: "#cloud-config\nwrite_files:\n- path: /run/kubeadm/kubeadm-join-config.yaml\n  content: |\n    apiVersion: kubeadm.k8s.io/v1beta3\n    kind: JoinConfiguration\n    discovery:\n      file:\n        kubeConfigPath: /x\n", wantErr: "file-based discovery"},
		{name: "no endpoint", data: "#cloud-config\nwrite_files:\n- path: /run/kubeadm/kubeadm-join-config.yaml\n  content: |\n    apiVersion: kubeadm.k8s.io/v1beta3\n    kind: JoinConfiguration\n    discovery:\n      bootstrapToken:\n        token: abcdef.0123456789abcdef\n", wantErr: "no discovery.bootstrapToken.apiServerEndpoint"},
		{name: "bad encoding", data: "#cloud-config\nwrite_files:\n- path: /run/kubeadm/kubeadm-join-config.yaml\n  encoding: rot13\n  content: x\n", wantErr: "unknown encoding"},
		{name: "bad base64", data: "#cloud-config\nwrite_files:\n- path: /run/kubeadm/kubeadm-join-config.yaml\n  encoding: base64\n  content: '!!!'\n", wantErr: "decoding base64"},
		{name: "bad node label", data: "#cloud-config\nwrite_files:\n- path: /run/kubeadm/kubeadm-join-config.yaml\n  content: |\n    apiVersion: kubeadm.k8s.io/v1beta3\n    kind: JoinConfiguration\n    discovery:\n      bootstrapToken: {apiServerEndpoint: 'h:1', token: abcdef.0123456789abcdef}\n    nodeRegistration:\n      kubeletExtraArgs: {node-labels: novalue}\n", wantErr: "invalid node label"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadJoin([]byte(tt.data), Metadata{LocalHostname: "h"})
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("ReadJoin error = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}

func TestRender(t *testing.T) {
	meta := Metadata{LocalHostname: "host-1", InstanceID: "i-1", LocalIPv4: "10.0.0.9", AvailabilityZone: "z1"}
	tests := []struct {
		name, in, want string
	}{
		{name: "bracket form, double quotes", in: `n: '{{ ds.meta_data["local_hostname"] }}'`, want: `n: 'host-1'`},
		{name: "bracket form, single quotes, no spaces", in: `n: "{{ds.meta_data['local_hostname']}}"`, want: `n: "host-1"`},
		{name: "dotted form", in: `{{ ds.meta_data.local_hostname }}`, want: `host-1`},
		{name: "v1 form", in: `{{ v1.local_hostname }}/{{ v1.availability_zone }}`, want: `host-1/z1`},
		{name: "other keys", in: `{{ ds.meta_data.instance_id }} {{ ds.meta_data["local_ipv4"] }}`, want: `i-1 10.0.0.9`},
		{name: "unknown keys stay", in: `{{ ds.meta_data.nope }} {{ v1.region }}`, want: `{{ ds.meta_data.nope }} {{ v1.region }}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(Render([]byte(tt.in), meta)); got != tt.want {
				t.Errorf("Render(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestRenderFaceMetadata renders a face's ds.meta_data map (MetadataOf):
// its own keys as well as the well-known ones.
func TestRenderFaceMetadata(t *testing.T) {
	meta := MetadataOf(map[string]string{
		"local_hostname": "ip-10-0-0-9.ec2.internal", "instance_id": "i-0abc", "region": "us-east-1",
		"availability_zone": "us-east-1a", "account_id": "123456789012", "instance-type": "m5.large",
	})
	tests := []struct {
		name, in, want string
	}{
		{name: "the node name of Cluster API's seeds", in: `name: '{{ ds.meta_data["local_hostname"] }}'`, want: `name: 'ip-10-0-0-9.ec2.internal'`},
		{name: "region and zone", in: `{{ v1.region }}/{{ ds.meta_data.availability_zone }}`, want: `us-east-1/us-east-1a`},
		{name: "a face's own key", in: `{{ ds.meta_data.account_id }}`, want: `123456789012`},
		{name: "dashes and underscores are one key", in: `{{ ds.meta_data["instance_type"] }} {{ ds.meta_data["availability-zone"] }}`, want: `m5.large us-east-1a`},
		{name: "unknown keys stay", in: `{{ ds.meta_data.nope }}`, want: `{{ ds.meta_data.nope }}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(Render([]byte(tt.in), meta)); got != tt.want {
				t.Errorf("Render(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestDecode(t *testing.T) {
	const text = "hello\nworld\n"
	gzipped := gz(t, text)
	tests := []struct {
		name string
		file WriteFile
	}{
		{name: "no encoding", file: WriteFile{Content: text}},
		{name: "text/plain", file: WriteFile{Content: text, Encoding: "text/plain"}},
		{name: "b64", file: WriteFile{Content: b64(text), Encoding: "b64"}},
		{name: "base64 with line breaks", file: WriteFile{Content: b64(text)[:4] + "\n" + b64(text)[4:], Encoding: "base64"}},
		{name: "gzip (raw bytes)", file: WriteFile{Content: string(gzipped), Encoding: "gzip"}},
		{name: "gzip+base64", file: WriteFile{Content: base64.StdEncoding.EncodeToString(gzipped), Encoding: "gzip+base64"}},
		{name: "gz+b64", file: WriteFile{Content: base64.StdEncoding.EncodeToString(gzipped), Encoding: "gz+b64"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.file.Decode()
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if string(got) != text {
				t.Errorf("Decode = %q, want %q", got, text)
			}
		})
	}
}

func TestIsCloudConfig(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want bool
	}{
		{name: "plain", in: "#cloud-config\n", want: true},
		{name: "jinja header", in: "## template: jinja\n#cloud-config\n", want: true},
		{name: "leading blank lines", in: "\n\n#cloud-config", want: true},
		{name: "shell script", in: "#!/bin/bash\n", want: false},
		{name: "ignition json", in: `{"ignition":{}}`, want: false},
		{name: "empty", in: "", want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := IsCloudConfig([]byte(tt.in)); got != tt.want {
				t.Errorf("IsCloudConfig(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

func FuzzReadJoin(f *testing.F) {
	f.Add([]byte(capiV1Beta3))
	f.Add([]byte("#cloud-config\nwrite_files:\n- path: /run/kubeadm/kubeadm-join-config.yaml\n  content: |\n" + indent(v1beta4Join, "    ") + "\n"))
	f.Add([]byte("#cloud-config\nwrite_files:\n- path: /run/kubeadm/kubeadm-join-config.yaml\n  encoding: gzip+base64\n  content: H4sIAAAAAAAA/wEAAP//AAAAAAAAAAA=\n"))
	f.Add([]byte("## template: jinja\n#cloud-config\nruncmd: [[a, b], c, null]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		jc, err := ReadJoin(data, Metadata{LocalHostname: "h"})
		if err == nil && (jc.APIServerEndpoint == "" || jc.TLSBootstrapToken == "" || jc.NodeName == "") {
			t.Fatalf("ReadJoin succeeded with an incomplete configuration: %+v", jc)
		}
		_, _ = ParseJoinConfiguration(data)
	})
}
