package bootstrap

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"

	simcloudinit "github.com/mpool-dev/mpool/sim/cloudinit"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// Discovery values the golden cases fill in, as the controller would.
const (
	testToken    = "abcdef.0123456789abcdef"
	testEndpoint = "10.0.0.1:6443"
	testCAHash   = "sha256:0ad7b6b4f5d6b3b2ec5d7c1f1e2f8b7a6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f"
)

func loadConfig(t *testing.T, name string) *bootstrapv1.KubeadmConfig {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	cfg := &bootstrapv1.KubeadmConfig{}
	if err := yaml.UnmarshalStrict(b, cfg); err != nil {
		t.Fatalf("parsing %s: %v", name, err)
	}
	return cfg
}

// withDiscovery returns spec's JoinConfiguration with the bootstrap token
// discovery filled in the way the controller does.
func withDiscovery(spec *bootstrapv1.KubeadmConfigSpec) *bootstrapv1.JoinConfiguration {
	jc := spec.JoinConfiguration.DeepCopy()
	jc.Discovery.BootstrapToken = bootstrapv1.BootstrapTokenDiscovery{
		Token:             testToken,
		APIServerEndpoint: testEndpoint,
		CACertHashes:      []string{testCAHash},
	}
	return jc
}

func richSecrets() map[SecretKey][]byte {
	return map[SecretKey][]byte{
		{Name: "rich-mp-0-azure-json", Key: "worker-node-azure.json"}: []byte("{\n  \"cloud\": \"AzurePublicCloud\",\n  \"aadClientSecret\": \"s3cr3t\"\n}\n"),
		{Name: "rich-mp-0-passwd", Key: "hash"}:                       []byte("$6$rounds=4096$salt$abcdefghijklmnop"),
	}
}

func TestRenderCloudInitGolden(t *testing.T) {
	tests := []struct {
		name    string
		why     string
		config  string
		version string
		secrets map[SecretKey][]byte
		mutate  func(*bootstrapv1.KubeadmConfigSpec)
		// kubeadm API version the output must use.
		wantAPI string
	}{
		{
			name: "seed000-azure", why: "the Azure book page's KubeadmConfig: one inline file, jinja node name",
			config: "seed000-azure.kubeadmconfig.yaml", version: "v1.22.0", wantAPI: KubeadmV1Beta3,
		},
		{
			name: "seed004-aws", why: "the AWS book page's KubeadmConfig: kubeletExtraArgs as a v1beta3 map",
			config: "seed004-aws.kubeadmconfig.yaml", version: "v1.16.8", wantAPI: KubeadmV1Beta3,
		},
		{
			name: "rich-v1beta3", why: "every rendered field, Kubernetes before v1.31",
			config: "rich.kubeadmconfig.yaml", version: "v1.30.4", secrets: richSecrets(), wantAPI: KubeadmV1Beta3,
		},
		{
			name: "rich-v1beta4", why: "the same spec from v1.31: list kubeletExtraArgs, every timeout",
			config: "rich.kubeadmconfig.yaml", version: "v1.31.0", secrets: richSecrets(), wantAPI: KubeadmV1Beta4,
		},
		{
			// v1beta2 has no useExperimentalRetryJoin (Cluster API dropped
			// it): kubeadm join runs once, with the verbosity.
			name: "verbosity-v1beta4", why: "verbosity reaches kubeadm join; no retry loop",
			config: "seed004-aws.kubeadmconfig.yaml", version: "v1.32.1", wantAPI: KubeadmV1Beta4,
			mutate: func(s *bootstrapv1.KubeadmConfigSpec) {
				s.Verbosity = ptr.To[int32](2)
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := loadConfig(t, tt.config)
			if tt.mutate != nil {
				tt.mutate(&cfg.Spec)
			}
			orig := cfg.Spec.DeepCopy()
			out, err := RenderCloudInit(Input{
				Spec:              &cfg.Spec,
				SecretData:        tt.secrets,
				JoinConfiguration: withDiscovery(&cfg.Spec),
				KubernetesVersion: tt.version,
			})
			if err != nil {
				t.Fatalf("RenderCloudInit: %v", err)
			}
			if !reflect.DeepEqual(orig, &cfg.Spec) {
				t.Errorf("RenderCloudInit modified its input spec")
			}
			golden := filepath.Join("testdata", tt.name+".golden")
			if *update {
				if err := os.WriteFile(golden, out, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("reading golden file (run with -update to create it): %v", err)
			}
			if !bytes.Equal(out, want) {
				t.Errorf("output differs from %s (run with -update to accept):\n--- got\n%s\n--- want\n%s", golden, out, want)
			}
			again, err := RenderCloudInit(Input{Spec: &cfg.Spec, SecretData: tt.secrets, JoinConfiguration: withDiscovery(&cfg.Spec), KubernetesVersion: tt.version})
			if err != nil || !bytes.Equal(out, again) {
				t.Errorf("rendering is not deterministic (err %v)", err)
			}
			checkSimulatedCloudReads(t, out, &cfg.Spec, tt.wantAPI)
		})
	}
}

// checkSimulatedCloudReads parses out with the simulated cloud's cloud-init
// reader, the contract the bootstrap data must honour.
func checkSimulatedCloudReads(t *testing.T, out []byte, spec *bootstrapv1.KubeadmConfigSpec, wantAPI string) {
	t.Helper()
	if !strings.HasPrefix(string(out), Header) {
		t.Fatalf("output does not start with %q", Header)
	}
	rendered := simcloudinit.Render(out, simcloudinit.Metadata{LocalHostname: "node-0", InstanceID: "i-0"})
	cc, err := simcloudinit.Parse(rendered)
	if err != nil {
		t.Fatalf("simulated cloud cannot parse the cloud-config: %v", err)
	}
	data, err := cc.JoinConfigFile()
	if err != nil {
		t.Fatalf("simulated cloud finds no join configuration: %v", err)
	}
	jc, err := simcloudinit.ParseJoinConfiguration(data)
	if err != nil {
		t.Fatalf("simulated cloud cannot parse the JoinConfiguration: %v", err)
	}
	if jc.APIVersion != wantAPI {
		t.Errorf("JoinConfiguration apiVersion = %s, want %s", jc.APIVersion, wantAPI)
	}
	if jc.DiscoveryToken != testToken || jc.TLSBootstrapToken != testToken {
		t.Errorf("JoinConfiguration does not carry the bootstrap token")
	}
	if jc.APIServerEndpoint != testEndpoint || !reflect.DeepEqual(jc.CACertHashes, []string{testCAHash}) {
		t.Errorf("JoinConfiguration discovery = %s %v, want %s [%s]", jc.APIServerEndpoint, jc.CACertHashes, testEndpoint, testCAHash)
	}
	if jc.NodeName != "node-0" {
		t.Errorf("node name = %q, want the jinja placeholder rendered to node-0", jc.NodeName)
	}
	wantArgs := bootstrapv1.ConvertFromArgs(spec.JoinConfiguration.NodeRegistration.KubeletExtraArgs)
	wantTaints := ptr.Deref(spec.JoinConfiguration.NodeRegistration.Taints, nil)
	if len(wantArgs)+len(jc.KubeletExtraArgs) > 0 && !reflect.DeepEqual(jc.KubeletExtraArgs, wantArgs) {
		t.Errorf("kubeletExtraArgs = %v, want %v", jc.KubeletExtraArgs, wantArgs)
	}
	if !reflect.DeepEqual(jc.Taints, wantTaints) {
		t.Errorf("taints = %v, want %v", jc.Taints, wantTaints)
	}
	for _, f := range spec.Files {
		wf, ok := cc.File(f.Path)
		if !ok {
			t.Errorf("file %s is not written", f.Path)
			continue
		}
		if _, err := wf.Decode(); err != nil {
			t.Errorf("file %s: %v", f.Path, err)
		}
		if wantAppend := ptr.Deref(f.Append, false); wf.Owner != f.Owner || wf.Permissions != f.Permissions || wf.Append != wantAppend {
			t.Errorf("file %s attributes = %s %s %v, want %s %s %v", f.Path, wf.Owner, wf.Permissions, wf.Append, f.Owner, f.Permissions, wantAppend)
		}
	}
	var sawJoin bool
	for _, c := range cc.RunCmd {
		if strings.Contains(c, "kubeadm join --config "+JoinConfigPath) {
			sawJoin = true
		}
	}
	if !sawJoin {
		t.Errorf("runcmd has no kubeadm join: %q", cc.RunCmd)
	}
}

func TestRenderCloudInitRunCmdOrder(t *testing.T) {
	spec := &bootstrapv1.KubeadmConfigSpec{
		PreKubeadmCommands:  []string{"pre-1", "pre-2"},
		PostKubeadmCommands: []string{"post-1"},
		Verbosity:           ptr.To[int32](4),
	}
	out, err := RenderCloudInit(Input{Spec: spec, JoinConfiguration: withDiscovery(spec)})
	if err != nil {
		t.Fatal(err)
	}
	cc := parseCloudConfig(t, out)
	want := []string{
		"pre-1", "pre-2",
		"kubeadm join --config /run/kubeadm/kubeadm-join-config.yaml --v 4 && echo success > /run/cluster-api/bootstrap-success.complete",
		"post-1",
	}
	if !reflect.DeepEqual(cc.RunCmd, want) {
		t.Errorf("runcmd = %q, want %q", cc.RunCmd, want)
	}
}

func TestRenderCloudInitErrors(t *testing.T) {
	tests := []struct {
		name string
		why  string
		in   Input
		want string
	}{
		{
			name: "ignition", why: "ignition is not supported yet and must say so",
			in:   Input{Spec: &bootstrapv1.KubeadmConfigSpec{Format: bootstrapv1.Ignition}},
			want: "unsupported bootstrap data format",
		},
		{
			name: "missing secret content", why: "the controller must resolve every contentFrom first",
			in: Input{Spec: &bootstrapv1.KubeadmConfigSpec{Files: []bootstrapv1.File{{
				Path:        "/etc/x",
				ContentFrom: bootstrapv1.FileSource{Secret: bootstrapv1.SecretFileSource{Name: "s", Key: "k"}},
			}}}},
			want: "content of Secret s key k was not provided",
		},
		{
			name: "missing password", why: "the controller must resolve every passwdFrom first",
			in: Input{Spec: &bootstrapv1.KubeadmConfigSpec{Users: []bootstrapv1.User{{
				Name:       "u",
				PasswdFrom: bootstrapv1.PasswdSource{Secret: bootstrapv1.SecretPasswdSource{Name: "s", Key: "k"}},
			}}}},
			want: "password of Secret s key k was not provided",
		},
		{
			name: "control plane join", why: "pools are workers only",
			in: Input{Spec: &bootstrapv1.KubeadmConfigSpec{JoinConfiguration: bootstrapv1.JoinConfiguration{
				ControlPlane: &bootstrapv1.JoinControlPlane{},
			}}},
			want: "workers only",
		},
		{
			name: "bad version", why: "an unparsable version cannot pick the kubeadm API",
			in:   Input{Spec: &bootstrapv1.KubeadmConfigSpec{}, KubernetesVersion: "latest"},
			want: `parsing Kubernetes version "latest"`,
		},
		{
			name: "binary content declared base64", why: "bytes that are not text cannot be base64 text",
			in:   Input{Spec: &bootstrapv1.KubeadmConfigSpec{Files: []bootstrapv1.File{{Path: "/x", Encoding: bootstrapv1.Base64, Content: "\xff\xfe"}}}},
			want: "encoding is base64 but the content is not text",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := RenderCloudInit(tt.in)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestRenderCloudInitBinaryContent(t *testing.T) {
	raw := []byte{0x1f, 0x8b, 0x00, 0xff, 'a'}
	spec := &bootstrapv1.KubeadmConfigSpec{Files: []bootstrapv1.File{
		{Path: "/plain", ContentFrom: bootstrapv1.FileSource{Secret: bootstrapv1.SecretFileSource{Name: "s", Key: "plain"}}},
		{Path: "/gz", Encoding: bootstrapv1.Gzip, ContentFrom: bootstrapv1.FileSource{Secret: bootstrapv1.SecretFileSource{Name: "s", Key: "gz"}}},
	}}
	out, err := RenderCloudInit(Input{Spec: spec, JoinConfiguration: withDiscovery(spec), SecretData: map[SecretKey][]byte{
		{Name: "s", Key: "plain"}: raw,
		{Name: "s", Key: "gz"}:    raw,
	}})
	if err != nil {
		t.Fatal(err)
	}
	cc := parseCloudConfig(t, out)
	for path, enc := range map[string]string{"/plain": "base64", "/gz": "gzip+base64"} {
		f, ok := cc.File(path)
		if !ok {
			t.Fatalf("%s not written", path)
		}
		if f.Encoding != enc {
			t.Errorf("%s encoding = %q, want %q", path, f.Encoding, enc)
		}
	}
	f, _ := cc.File("/plain")
	got, err := f.Decode()
	if err != nil || !bytes.Equal(got, raw) {
		t.Errorf("/plain decodes to %v (%v), want %v", got, err, raw)
	}
}

func parseCloudConfig(t testing.TB, out []byte) *simcloudinit.CloudConfig {
	t.Helper()
	cc, err := simcloudinit.Parse(out)
	if err != nil {
		t.Fatalf("parsing output: %v\n%s", err, out)
	}
	return cc
}

func TestSecretKeys(t *testing.T) {
	spec := &bootstrapv1.KubeadmConfigSpec{
		Files: []bootstrapv1.File{
			{Path: "/a", ContentFrom: bootstrapv1.FileSource{Secret: bootstrapv1.SecretFileSource{Name: "s1", Key: "a"}}},
			{Path: "/b", Content: "inline"},
			{Path: "/c", ContentFrom: bootstrapv1.FileSource{Secret: bootstrapv1.SecretFileSource{Name: "s1", Key: "a"}}},
		},
		Users: []bootstrapv1.User{{Name: "u", PasswdFrom: bootstrapv1.PasswdSource{Secret: bootstrapv1.SecretPasswdSource{Name: "s2", Key: "p"}}}},
	}
	want := []SecretKey{{Name: "s1", Key: "a"}, {Name: "s2", Key: "p"}}
	if got := SecretKeys(spec); !reflect.DeepEqual(got, want) {
		t.Errorf("SecretKeys = %v, want %v", got, want)
	}
}

// TestRenderCloudInitAwkwardText renders text that a YAML 1.1 parser (as in
// cloud-init) rejects in a literal block: a tab before the first non-blank
// character. Every free-text field must come back unchanged.
func TestRenderCloudInitAwkwardText(t *testing.T) {
	tests := []struct {
		name string
		text string
	}{
		{name: "leading tab", text: "\tfoo\nbar"},
		{name: "tab on a leading blank line", text: "\n\tfoo\n"},
		{name: "space then tab", text: " \tx\ny"},
		{name: "YAML 1.1 boolean", text: "on"},
		{name: "octal-looking", text: "0644"},
		{name: "document marker", text: "---\n...\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tt.text
			spec := &bootstrapv1.KubeadmConfigSpec{
				PreKubeadmCommands: []string{s},
				Files:              []bootstrapv1.File{{Path: "/f", Content: s, Owner: s}},
				Users:              []bootstrapv1.User{{Name: s}},
				NTP:                bootstrapv1.NTP{Servers: []string{s}},
				DiskSetup:          bootstrapv1.DiskSetup{Partitions: []bootstrapv1.Partition{{Device: s}}},
				Mounts:             []bootstrapv1.MountPoints{{s}},
			}
			out, err := RenderCloudInit(Input{Spec: spec, JoinConfiguration: withDiscovery(spec)})
			if err != nil {
				t.Fatal(err)
			}
			var got struct {
				RunCmd     []string                          `json:"runcmd"`
				WriteFiles []struct{ Content, Owner string } `json:"write_files"`
				Users      []struct{ Name string }           `json:"users"`
				NTP        struct{ Servers []string }        `json:"ntp"`
				DiskSetup  map[string]any                    `json:"disk_setup"`
				Mounts     [][]string                        `json:"mounts"`
			}
			if err := yaml.Unmarshal(out, &got); err != nil {
				t.Fatalf("output is not YAML 1.1: %v\n%s", err, out)
			}
			if got.RunCmd[0] != s || got.WriteFiles[0].Content != s || got.WriteFiles[0].Owner != s || got.Users[0].Name != s ||
				got.NTP.Servers[0] != s || got.DiskSetup[s] == nil || got.Mounts[0][0] != s {
				t.Errorf("text did not round-trip:\n%s", out)
			}
		})
	}
}

// TestRenderCloudInitTemplate renders files whose contentFormat is Template
// the way Cluster API does: Go text/template over the resolved content
// (inline or from a Secret), .controlPlane only when its version is known.
func TestRenderCloudInitTemplate(t *testing.T) {
	const guarded = "{{ if .controlPlane }}{{ .controlPlane.version }}{{ else }}unknown{{ end }}"
	tests := []struct {
		name      string
		why       string
		file      bootstrapv1.File
		cpVersion string
		want      string
		wantErr   string
	}{
		{name: "version known", why: "the template sees the control plane's version",
			file: bootstrapv1.File{Content: guarded, ContentFormat: bootstrapv1.FileContentFormatTemplate}, cpVersion: "v1.31.2", want: "v1.31.2"},
		{name: "version unknown", why: "without a version .controlPlane is absent and a template can test for it",
			file: bootstrapv1.File{Content: guarded, ContentFormat: bootstrapv1.FileContentFormatTemplate}, want: "unknown"},
		{name: "from a Secret", why: "content from a Secret is a template too",
			file:      bootstrapv1.File{ContentFrom: bootstrapv1.FileSource{Secret: bootstrapv1.SecretFileSource{Name: "s", Key: "k"}}, ContentFormat: bootstrapv1.FileContentFormatTemplate},
			cpVersion: "v1.30.0", want: "v1.30.0"},
		{name: "raw", why: "Raw content is written verbatim, braces and all",
			file: bootstrapv1.File{Content: guarded, ContentFormat: bootstrapv1.FileContentFormatRaw}, cpVersion: "v1.31.2", want: guarded},
		{name: "unset format", why: "no contentFormat means Raw",
			file: bootstrapv1.File{Content: guarded}, cpVersion: "v1.31.2", want: guarded},
		{name: "unguarded without version", why: "as in Cluster API, a missing key renders as <no value>; templates must test for .controlPlane",
			file: bootstrapv1.File{Content: "{{ .controlPlane.version }}", ContentFormat: bootstrapv1.FileContentFormatTemplate}, want: "<no value>"},
		{name: "execution error", why: "a template that fails to execute is an error",
			file: bootstrapv1.File{Content: `{{ index .controlPlane "version" 100 }}`, ContentFormat: bootstrapv1.FileContentFormatTemplate}, cpVersion: "v1.31.2", wantErr: "executing the content template"},
		{name: "does not parse", why: "a broken template is an error",
			file: bootstrapv1.File{Content: "{{ .controlPlane", ContentFormat: bootstrapv1.FileContentFormatTemplate}, wantErr: "parsing the content template"},
		{name: "too large", why: "rendering is bounded as in Cluster API",
			file: bootstrapv1.File{Content: `{{ printf "%1048577s" "" }}`, ContentFormat: bootstrapv1.FileContentFormatTemplate}, wantErr: "byte limit"},
		{name: "unknown format", why: "a contentFormat mpool does not know is not written verbatim",
			file: bootstrapv1.File{Content: "x", ContentFormat: "Jinja"}, wantErr: "unsupported contentFormat Jinja"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := tt.file
			f.Path = "/etc/t"
			spec := &bootstrapv1.KubeadmConfigSpec{Files: []bootstrapv1.File{f}}
			out, err := RenderCloudInit(Input{
				Spec:                spec,
				SecretData:          map[SecretKey][]byte{{Name: "s", Key: "k"}: []byte(guarded)},
				JoinConfiguration:   withDiscovery(spec),
				ControlPlaneVersion: tt.cpVersion,
			})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, ok := parseCloudConfig(t, out).File("/etc/t")
			if !ok {
				t.Fatal("/etc/t not written")
			}
			if got.Content != tt.want {
				t.Errorf("content = %q, want %q (%s)", got.Content, tt.want, tt.why)
			}
		})
	}
}

// TestRenderCloudInitDiskLayout renders v1beta2's partition layouts: the
// layout flag (unset is false) or diskLayout's percentages with Cluster API's
// partition type names mapped to cloud-init's codes.
func TestRenderCloudInitDiskLayout(t *testing.T) {
	spec := &bootstrapv1.KubeadmConfigSpec{DiskSetup: bootstrapv1.DiskSetup{Partitions: []bootstrapv1.Partition{
		{Device: "/dev/a", Layout: ptr.To(true)},
		{Device: "/dev/b"},
		{Device: "/dev/c", DiskLayout: []bootstrapv1.PartitionSpec{
			{Percentage: 10, PartitionType: bootstrapv1.PartitionTypeLinux},
			{Percentage: 10, PartitionType: bootstrapv1.PartitionTypeLinuxSwap},
			{Percentage: 10, PartitionType: bootstrapv1.PartitionTypeLinuxRAID},
			{Percentage: 10, PartitionType: bootstrapv1.PartitionTypeLVM},
			{Percentage: 10, PartitionType: bootstrapv1.PartitionTypeFat32},
			{Percentage: 10, PartitionType: bootstrapv1.PartitionTypeNTFS},
			{Percentage: 10, PartitionType: bootstrapv1.PartitionTypeLinuxExtended},
			{Percentage: 10, PartitionType: "ef"},
			{Percentage: 20},
		}},
	}}}
	out, err := RenderCloudInit(Input{Spec: spec, JoinConfiguration: withDiscovery(spec)})
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		DiskSetup map[string]struct {
			Layout any `json:"layout"`
		} `json:"disk_setup"`
	}
	if err := yaml.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"/dev/a": true,
		"/dev/b": false,
		"/dev/c": []any{
			[]any{10.0, "83"}, []any{10.0, "82"}, []any{10.0, "fd"}, []any{10.0, "8e"},
			[]any{10.0, "0c"}, []any{10.0, "07"}, []any{10.0, "85"}, []any{10.0, "ef"}, 20.0,
		},
	}
	for dev, w := range want {
		if !reflect.DeepEqual(got.DiskSetup[dev].Layout, w) {
			t.Errorf("%s layout = %#v, want %#v", dev, got.DiskSetup[dev].Layout, w)
		}
	}
}
