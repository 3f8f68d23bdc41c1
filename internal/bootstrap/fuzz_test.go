package bootstrap

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
)

var fuzzEncodings = []bootstrapv1.Encoding{"", bootstrapv1.Base64, bootstrapv1.Gzip, bootstrapv1.GzipBase64}

// parsedCloudConfig is what the fuzz test reads back, with a YAML 1.1 parser
// (go-yaml v2 through sigs.k8s.io/yaml, close to cloud-init's PyYAML).
type parsedCloudConfig struct {
	WriteFiles []struct {
		Path        string `json:"path"`
		Owner       string `json:"owner"`
		Permissions string `json:"permissions"`
		Encoding    string `json:"encoding"`
		Content     string `json:"content"`
	} `json:"write_files"`
	RunCmd []string `json:"runcmd"`
	Users  []struct {
		Name   string `json:"name"`
		Passwd string `json:"passwd"`
	} `json:"users"`
}

// FuzzRenderCloudInit renders arbitrary user input: it must never panic, and
// whenever it succeeds the document after the jinja line must parse as YAML
// and give back every value it was given.
func FuzzRenderCloudInit(f *testing.F) {
	f.Add("/etc/kubernetes/azure.json", "{\n  \"cloud\": \"AzurePublicCloud\"\n}\n", []byte("secret"), uint8(0), "root:root", "0644",
		"swapoff -a", "echo done", `{{ ds.meta_data["local_hostname"] }}`, "cloud-provider", "aws", "ops", false)
	f.Add("/x", "  leading spaces\n\ttab\r\n", []byte{0xff, 0x00}, uint8(2), "", "", "- dash", "key: value", "on", "node-labels", "a=b,c=d", "yes", true)
	f.Add("", "null", []byte(""), uint8(1), "~", "0o777", "#comment", "'quoted'", "{{ v1.local_hostname }}", "v", "2", "", true)
	f.Add("\t/tab\npath", "\n\tx", []byte("\t\n"), uint8(0), "\tr", " \t", "\tfoo\nbar", "\n\tbaz\n", "\tn", "\tk", "\tv\n", "\tu", true)
	f.Add("/y", "a: |\n  b\n", []byte("---\n...\n"), uint8(3), ": x", "!tag", "%percent", "&anchor *alias", "\u2028line", "k", "\x7f", "\xc3\x28", false)

	f.Fuzz(func(t *testing.T, path, content string, secret []byte, encIdx uint8, owner, perms, pre, post, nodeName, argKey, argVal, userName string, v4 bool) {
		enc := fuzzEncodings[int(encIdx)%len(fuzzEncodings)]
		spec := &bootstrapv1.KubeadmConfigSpec{
			Files: []bootstrapv1.File{
				{Path: path, Owner: owner, Permissions: perms, Encoding: enc, Content: content},
				{Path: path + ".from", ContentFrom: bootstrapv1.FileSource{Secret: bootstrapv1.SecretFileSource{Name: "s", Key: "k"}}},
			},
			PreKubeadmCommands:  []string{pre},
			PostKubeadmCommands: []string{post},
			Users:               []bootstrapv1.User{{Name: userName, PasswdFrom: bootstrapv1.PasswdSource{Secret: bootstrapv1.SecretPasswdSource{Name: "s", Key: "p"}}}},
			JoinConfiguration: bootstrapv1.JoinConfiguration{NodeRegistration: bootstrapv1.NodeRegistrationOptions{
				Name:             nodeName,
				KubeletExtraArgs: []bootstrapv1.Arg{{Name: argKey, Value: &argVal}},
			}},
		}
		version := "v1.30.0"
		if v4 {
			version = "v1.31.0"
		}
		in := Input{
			Spec:              spec,
			SecretData:        map[SecretKey][]byte{{Name: "s", Key: "k"}: secret, {Name: "s", Key: "p"}: []byte(argVal)},
			JoinConfiguration: withDiscovery(spec),
			KubernetesVersion: version,
		}
		out, err := RenderCloudInit(in)
		if err != nil {
			return
		}
		if !bytes.HasPrefix(out, []byte(Header)) {
			t.Fatalf("output does not start with %q", Header)
		}
		_, doc, _ := bytes.Cut(out, []byte("\n"))
		var cc parsedCloudConfig
		if err := yaml.Unmarshal(doc, &cc); err != nil {
			t.Fatalf("output is not YAML: %v\n%s", err, out)
		}
		if len(cc.WriteFiles) != 4 {
			t.Fatalf("write_files has %d entries, want 4", len(cc.WriteFiles))
		}
		user, from, join := cc.WriteFiles[0], cc.WriteFiles[1], cc.WriteFiles[2]
		if user.Path != txt(path) || user.Owner != txt(owner) || user.Permissions != txt(perms) {
			t.Errorf("file attributes %q %q %q, want %q %q %q", user.Path, user.Owner, user.Permissions, path, owner, perms)
		}
		checkContent(t, "inline", user.Content, user.Encoding, []byte(content), enc)
		checkContent(t, "contentFrom", from.Content, from.Encoding, secret, "")
		if len(cc.RunCmd) != 3 || cc.RunCmd[0] != txt(pre) || cc.RunCmd[2] != txt(post) || !strings.HasPrefix(cc.RunCmd[1], "kubeadm join --config "+JoinConfigPath) {
			t.Errorf("runcmd = %q", cc.RunCmd)
		}
		if len(cc.Users) != 1 || cc.Users[0].Name != txt(userName) || cc.Users[0].Passwd != txt(argVal) {
			t.Errorf("users = %+v", cc.Users)
		}
		if join.Path != JoinConfigPath {
			t.Fatalf("third file is %q, want the join configuration", join.Path)
		}
		var jc struct {
			APIVersion       string `json:"apiVersion"`
			NodeRegistration struct {
				Name string `json:"name"`
			} `json:"nodeRegistration"`
			Discovery struct {
				BootstrapToken struct {
					Token string `json:"token"`
				} `json:"bootstrapToken"`
			} `json:"discovery"`
		}
		if err := yaml.Unmarshal([]byte(join.Content), &jc); err != nil {
			t.Fatalf("join configuration is not YAML: %v\n%s", err, join.Content)
		}
		if jc.NodeRegistration.Name != txt(nodeName) || jc.Discovery.BootstrapToken.Token != testToken {
			t.Errorf("join configuration name %q token %q, want %q %q", jc.NodeRegistration.Name, jc.Discovery.BootstrapToken.Token, nodeName, testToken)
		}
	})
}

// txt is the string RenderCloudInit writes for s.
func txt(s string) string { return string(text(s)) }

// checkContent asserts that a write_files entry gives back raw: verbatim when
// raw is text, base64-encoded (with the encoding adjusted) when it is not.
func checkContent(t *testing.T, what, got, gotEnc string, raw []byte, enc bootstrapv1.Encoding) {
	t.Helper()
	if string(raw) == got && gotEnc == string(enc) {
		return
	}
	dec, err := base64.StdEncoding.DecodeString(got)
	if err != nil || !bytes.Equal(dec, raw) {
		t.Errorf("%s content %q (encoding %q) does not give back %q (encoding %q)", what, got, gotEnc, raw, enc)
	}
}
