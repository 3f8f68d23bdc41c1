package bootstrap

import (
	"bytes"
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
)

func TestMaskBootstrapTokens(t *testing.T) {
	const (
		tok   = "abcdef.0123456789abcdef"
		other = "zyxwvu.0123456789abcdef"
		num   = "123456.1234567890123456" // YAML reads it as a number, so it is quoted
		m     = TokenMask
	)
	tests := []struct {
		name string
		why  string
		in   string
		want string
	}{
		{name: "plain value", why: "the token as the JoinConfiguration carries it", in: "    bootstrapToken:\n      token: " + tok + "\n", want: "    bootstrapToken:\n      token: " + m + "\n"},
		{name: "tlsBootstrapToken", why: "the other key a kubeadm token is written under", in: "  tlsBootstrapToken: " + tok + "\n", want: "  tlsBootstrapToken: " + m + "\n"},
		{name: "double-quoted", why: "YAML quotes a token that reads as a number; the mask drops the quotes so quoting cannot change the masked data", in: "token: \"" + num + "\"\n", want: "token: " + m + "\n"},
		{name: "single-quoted", why: "the other YAML quoting style", in: "token: '" + tok + "'\n", want: "token: " + m + "\n"},
		{name: "escaped in a double-quoted document", why: "a JoinConfiguration written as a double-quoted string escapes its quotes", in: `content: "---\n  token: \"` + num + `\"\n"`, want: `content: "---\n  token: ` + m + `\n"`},
		{name: "folded", why: "a double-quoted string may fold the line after the key", in: "token:\n      " + tok + "\n", want: "token:\n      " + m + "\n"},
		{name: "end of data", why: "a value that ends the data is complete", in: "token: " + tok, want: "token: " + m},
		{name: "flow mapping", why: "a flow indicator ends a plain value", in: "{token: " + tok + ", x: y}", want: "{token: " + m + ", x: y}"},
		{name: "every occurrence", why: "the token a user also wrote into a command or the middle of a word is the token", in: "token: " + tok + "\nruncmd: [echo " + tok + ", x" + tok + "y]\n", want: "token: " + m + "\nruncmd: [echo " + m + ", x" + m + "y]\n"},
		{name: "two tokens", why: "each token field is masked", in: "token: " + tok + "\ntlsBootstrapToken: " + other + "\n", want: "token: " + m + "\ntlsBootstrapToken: " + m + "\n"},
		{name: "token-shaped text without a token", why: "a host name is not a token unless it is a token key's value", in: "server: " + tok + "\n", want: "server: " + tok + "\n"},
		{name: "other token-shaped text", why: "only the data's tokens are masked, not everything shaped like one", in: "token: " + tok + "\nserver: " + other + "\n", want: "token: " + m + "\nserver: " + other + "\n"},
		{name: "longer value", why: "a token key whose value only begins with a token holds no token", in: "token: " + tok + ".example.com\n", want: "token: " + tok + ".example.com\n"},
		{name: "hyphenated value", why: "likewise", in: "token: " + tok + "-x\n", want: "token: " + tok + "-x\n"},
		{name: "other key", why: "a key that merely ends in token is not kubeadm's", in: "mytoken: " + tok + "\n", want: "mytoken: " + tok + "\n"},
		{name: "upper case", why: "tokens are lower case", in: "token: ABCDEF.0123456789ABCDEF\n", want: "token: ABCDEF.0123456789ABCDEF\n"},
		{name: "unbalanced quotes", why: "a quote that does not close the value is not YAML quoting", in: "token: \"" + tok + "\n", want: "token: \"" + tok + "\n"},
		{name: "none", why: "data without tokens is unchanged", in: "hello", want: "hello"},
		{name: "empty", why: "nothing to mask", in: "", want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := []byte(tt.in)
			got := MaskBootstrapTokens(in)
			if string(got) != tt.want {
				t.Errorf("MaskBootstrapTokens(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if string(in) != tt.in {
				t.Errorf("MaskBootstrapTokens modified its input")
			}
			if again := MaskBootstrapTokens(got); !bytes.Equal(again, got) {
				t.Errorf("masking is not idempotent: %q", again)
			}
		})
	}
}

// TestMaskBootstrapTokensRendered masks real renderings: tokens in every form
// the renderer writes mask alike, and any other change shows.
func TestMaskBootstrapTokensRendered(t *testing.T) {
	render := func(t *testing.T, token, version string, mutate func(*bootstrapv1.KubeadmConfigSpec)) []byte {
		t.Helper()
		cfg := loadConfig(t, "rich.kubeadmconfig.yaml")
		if mutate != nil {
			mutate(&cfg.Spec)
		}
		jc := withDiscovery(&cfg.Spec)
		jc.Discovery.BootstrapToken.Token = token
		out, err := RenderCloudInit(Input{Spec: &cfg.Spec, SecretData: richSecrets(), JoinConfiguration: jc, KubernetesVersion: version})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	tokens := []struct {
		token string
		why   string
	}{
		{token: testToken, why: "written plain"},
		{token: "123456.1234567890123456", why: "read as a number by YAML, written quoted"},
		{token: "123456.1234567890123e12", why: "an exponent: quoted too"},
		{token: "0x1234.567890abcdeffp12", why: "a hexadecimal float Go reads but YAML does not"},
	}
	for _, version := range []string{"v1.30.4", "v1.31.0"} {
		t.Run(version, func(t *testing.T) {
			want := MaskBootstrapTokens(render(t, testToken, version, nil))
			for _, tt := range tokens {
				out := render(t, tt.token, version, nil)
				got := MaskBootstrapTokens(out)
				if !bytes.Equal(got, want) {
					t.Errorf("token %s (%s) masks differently:\n%s", tt.token, tt.why, got)
				}
				if bytes.Contains(got, []byte(tt.token)) {
					t.Errorf("token %s (%s) is still in the masked data", tt.token, tt.why)
				}
				if bytes.Equal(got, out) {
					t.Errorf("token %s (%s): nothing was masked", tt.token, tt.why)
				}
			}
			changes := []struct {
				name   string
				mutate func(*bootstrapv1.KubeadmConfigSpec)
			}{
				{name: "kubelet argument", mutate: func(s *bootstrapv1.KubeadmConfigSpec) {
					args := s.JoinConfiguration.NodeRegistration.KubeletExtraArgs
					for i := range args {
						if args[i].Name == "max-pods" {
							args[i].Value = ptr.To("42")
						}
					}
				}},
				{name: "file", mutate: func(s *bootstrapv1.KubeadmConfigSpec) { s.Files[1].Content += "more\n" }},
				{name: "pre-kubeadm command", mutate: func(s *bootstrapv1.KubeadmConfigSpec) {
					s.PreKubeadmCommands = append(s.PreKubeadmCommands, "echo "+testToken[:6]+".fedcba9876543210")
				}},
			}
			for _, c := range changes {
				if got := MaskBootstrapTokens(render(t, testToken, version, c.mutate)); bytes.Equal(got, want) {
					t.Errorf("changing the %s does not change the masked data", c.name)
				}
			}
		})
	}
}

// FuzzMaskBootstrapTokens: whatever the bytes, masking never panics, is
// idempotent, leaves no token of a token key behind and changes nothing when
// there is no such token.
func FuzzMaskBootstrapTokens(f *testing.F) {
	f.Add([]byte("token: abcdef.0123456789abcdef\n"))
	f.Add([]byte("token: \"123456.1234567890123456\" abcdef.0123456789abcdef"))
	f.Add([]byte("tlsBootstrapToken:\n abcdef.0123456789abcdefabcdef.0123456789abcdef"))
	f.Add([]byte(`"token: \"abcdef.0123456789abcdef\"\n"`))
	f.Add([]byte("abcdef.0123456789abcdef.example"))
	f.Fuzz(func(t *testing.T, data []byte) {
		in := bytes.Clone(data)
		got := MaskBootstrapTokens(data)
		if !bytes.Equal(data, in) {
			t.Fatalf("input modified")
		}
		if again := MaskBootstrapTokens(got); !bytes.Equal(again, got) {
			t.Errorf("not idempotent: %q -> %q -> %q", data, got, again)
		}
		fields := tokenFieldRE.FindAllSubmatchIndex(data, -1)
		if len(fields) == 0 && !bytes.Equal(got, data) {
			t.Errorf("data without a token key changed: %q -> %q", data, got)
		}
		for _, m := range fields {
			for g := 4; g < len(m); g += 2 {
				if m[g] >= 0 && (g != 10 || endsValue(data, m[11])) && bytes.Contains(got, data[m[g]:m[g+1]]) {
					t.Errorf("token %q is left in %q", data[m[g]:m[g+1]], got)
				}
			}
		}
	})
}

// fuzzToken makes a valid bootstrap token out of arbitrary bytes.
func fuzzToken(seed []byte) string {
	const alphabet = "0123456789abcdefghijklmnopqrstuvwxyz"
	var b strings.Builder
	for i := range 23 {
		if i == 6 {
			b.WriteByte('.')
			continue
		}
		var c byte
		if len(seed) > 0 {
			c = seed[i%len(seed)] + byte(i/len(seed))
		}
		b.WriteByte(alphabet[int(c)%len(alphabet)])
	}
	return b.String()
}

// FuzzMaskRenderedTokens renders arbitrary user input with an arbitrary token:
// the masked data equals that of the same input rendered with any other
// token, holds no token, and (when the user wrote nothing token-like) differs
// from the unmasked data in the tokens only.
func FuzzMaskRenderedTokens(f *testing.F) {
	f.Add([]byte("seed"), "/etc/x", "content", "echo hi", "node-0", "max-pods", "110", false)
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, "/y", "abcdef.0123456789abcdef", "token: x", "{{ ds.meta_data[\"local_hostname\"] }}", "k", "v", true)
	f.Add([]byte("1"), "\t/tab", "a: |\n  b\n", "server: abcdef.0123456789abcdef", "\u2028", "", "\x7f", true)
	f.Fuzz(func(t *testing.T, seed []byte, path, content, pre, nodeName, argKey, argVal string, v4 bool) {
		const placeholder = "pppppp.pppppppppppppppp" // letters only: never quoted
		token := fuzzToken(seed)
		version := "v1.30.0"
		if v4 {
			version = "v1.31.0"
		}
		render := func(token, argVal string) []byte {
			spec := &bootstrapv1.KubeadmConfigSpec{
				Files:              []bootstrapv1.File{{Path: path, Content: content}},
				PreKubeadmCommands: []string{pre},
				JoinConfiguration: bootstrapv1.JoinConfiguration{NodeRegistration: bootstrapv1.NodeRegistrationOptions{
					Name: nodeName, KubeletExtraArgs: []bootstrapv1.Arg{{Name: argKey, Value: &argVal}},
				}},
			}
			jc := withDiscovery(spec)
			jc.Discovery.BootstrapToken.Token = token
			out, err := RenderCloudInit(Input{Spec: spec, JoinConfiguration: jc, KubernetesVersion: version})
			if err != nil {
				return nil
			}
			return out
		}
		out := render(token, argVal)
		if out == nil {
			return
		}
		got := MaskBootstrapTokens(out)
		if bytes.Contains(got, []byte(token)) {
			t.Errorf("token %s is left in the masked data", token)
		}
		if bytes.Equal(got, MaskBootstrapTokens(render(token, argVal+"x"))) {
			t.Errorf("changing a kubelet argument does not change the masked data")
		}
		// A user who writes a token into the spec gets it masked there too,
		// so the comparisons below need input free of tokens.
		user := strings.Join([]string{path, content, pre, nodeName, argKey, argVal}, "\n")
		if strings.Contains(strings.ToLower(user), "token") || strings.Contains(user, TokenMask) {
			return
		}
		for _, other := range []string{testToken, "123456.1234567890123456"} {
			if strings.Contains(user, token) || strings.Contains(user, other) {
				continue
			}
			if want := MaskBootstrapTokens(render(other, argVal)); !bytes.Equal(got, want) {
				t.Fatalf("token %s masks differently from %s:\n%s\n---\n%s", token, other, got, want)
			}
		}
		if strings.Contains(user, token) || strings.Contains(user, placeholder) {
			return
		}
		if want := bytes.ReplaceAll(render(placeholder, argVal), []byte(placeholder), []byte(TokenMask)); !bytes.Equal(got, want) {
			t.Errorf("masking changed more than the token:\n%s\n---\n%s", got, want)
		}
	})
}

// TestSameContent: renderings that differ only in their tokens have the
// same content; any other difference does not.
func TestSameContent(t *testing.T) {
	a := []byte("discovery:\n  bootstrapToken:\n    token: abcdef.0123456789abcdef\n# v1\n")
	rotated := []byte("discovery:\n  bootstrapToken:\n    token: ghijkl.0123456789ghijkl\n# v1\n")
	changed := []byte("discovery:\n  bootstrapToken:\n    token: abcdef.0123456789abcdef\n# v2\n")
	for _, c := range []struct {
		name string
		b    []byte
		want bool
	}{{"equal", a, true}, {"token rotated", rotated, true}, {"content changed", changed, false}, {"empty", nil, false}} {
		if got := SameContent(a, c.b); got != c.want {
			t.Errorf("%s: same %v, want %v", c.name, got, c.want)
		}
	}
}
