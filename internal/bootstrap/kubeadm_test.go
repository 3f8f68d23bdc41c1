package bootstrap

import (
	"strings"
	"testing"

	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
)

func TestKubeadmAPIVersion(t *testing.T) {
	tests := []struct {
		name    string
		version string
		want    string
		wantErr bool
	}{
		{name: "empty defaults to v1beta3", version: "", want: KubeadmV1Beta3},
		{name: "seed 004", version: "v1.16.8", want: KubeadmV1Beta3},
		{name: "last v1beta3 minor", version: "v1.30.14", want: KubeadmV1Beta3},
		{name: "first v1beta4 minor", version: "v1.31.0", want: KubeadmV1Beta4},
		{name: "pre-release of v1.31", version: "v1.31.0-rc.1", want: KubeadmV1Beta4},
		{name: "no v prefix", version: "1.32.1", want: KubeadmV1Beta4},
		{name: "garbage", version: "stable", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := KubeadmAPIVersion(tt.version)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("KubeadmAPIVersion(%q) = %q, want %q", tt.version, got, tt.want)
			}
		})
	}
}

func TestMarshalJoinConfigurationVersionedFields(t *testing.T) {
	// kubeletExtraArgs name b twice: v1beta3's map keeps the later value,
	// v1beta4's list keeps both, in spec order.
	jc := &bootstrapv1.JoinConfiguration{
		NodeRegistration: bootstrapv1.NodeRegistrationOptions{
			KubeletExtraArgs: []bootstrapv1.Arg{{Name: "b", Value: ptr.To("1")}, {Name: "a", Value: ptr.To("1")}, {Name: "b", Value: ptr.To("2")}},
			ImagePullSerial:  new(bool),
		},
		Discovery: bootstrapv1.Discovery{
			BootstrapToken: bootstrapv1.BootstrapTokenDiscovery{Token: testToken, APIServerEndpoint: testEndpoint},
		},
		Timeouts: bootstrapv1.Timeouts{
			TLSBootstrapSeconds:       ptr.To[int32](120),
			DiscoverySeconds:          ptr.To[int32](60),
			KubeletHealthCheckSeconds: ptr.To[int32](30),
		},
	}
	tests := []struct {
		name    string
		version string
		want    map[string]any
	}{
		{
			name: "v1beta3 map, discovery.timeout from tlsBootstrapSeconds, no imagePullSerial", version: "v1.30.0",
			want: map[string]any{
				"apiVersion": KubeadmV1Beta3,
				"kind":       "JoinConfiguration",
				"nodeRegistration": map[string]any{
					"kubeletExtraArgs": map[string]any{"a": "1", "b": "2"},
				},
				"discovery": map[string]any{
					"bootstrapToken": map[string]any{"token": testToken, "apiServerEndpoint": testEndpoint},
					"timeout":        "2m0s",
				},
			},
		},
		{
			name: "v1beta4 list in spec order, every timeout, imagePullSerial", version: "v1.31.0",
			want: map[string]any{
				"apiVersion": KubeadmV1Beta4,
				"kind":       "JoinConfiguration",
				"nodeRegistration": map[string]any{
					"kubeletExtraArgs": []any{
						map[string]any{"name": "b", "value": "1"},
						map[string]any{"name": "a", "value": "1"},
						map[string]any{"name": "b", "value": "2"},
					},
					"imagePullSerial": false,
				},
				"discovery": map[string]any{
					"bootstrapToken": map[string]any{"token": testToken, "apiServerEndpoint": testEndpoint},
				},
				"timeouts": map[string]any{"tlsBootstrap": "2m0s", "discovery": "1m0s", "kubeletHealthCheck": "30s"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := MarshalJoinConfiguration(jc, tt.version)
			if err != nil {
				t.Fatal(err)
			}
			var got map[string]any
			if err := yaml.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			gotY, _ := yaml.Marshal(got)
			wantY, _ := yaml.Marshal(tt.want)
			if string(gotY) != string(wantY) {
				t.Errorf("got\n%s\nwant\n%s", gotY, wantY)
			}
		})
	}
}

func TestMarshalJoinConfigurationFileDiscovery(t *testing.T) {
	jc := &bootstrapv1.JoinConfiguration{Discovery: bootstrapv1.Discovery{File: bootstrapv1.FileDiscovery{KubeConfigPath: "/etc/kubernetes/discovery.conf"}}}
	b, err := MarshalJoinConfiguration(jc, "v1.31.0")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "kubeConfigPath: /etc/kubernetes/discovery.conf") || strings.Contains(string(b), "bootstrapToken") {
		t.Errorf("file discovery rendered as\n%s", b)
	}
}
