package bootstrap

import "testing"

func TestMaskBootstrapTokens(t *testing.T) {
	tests := []struct {
		name string
		why  string
		in   string
		want string
	}{
		{name: "yaml value", why: "the token in the JoinConfiguration", in: "token: abcdef.0123456789abcdef\n", want: "token: " + TokenMask + "\n"},
		{name: "two tokens", why: "every token is masked", in: "abcdef.0123456789abcdef zyxwvu.0123456789abcdef", want: TokenMask + " " + TokenMask},
		{name: "adjacent delimiters", why: "tokens separated by one byte are both found", in: "abcdef.0123456789abcdef,zyxwvu.0123456789abcdef", want: TokenMask + "," + TokenMask},
		{name: "longer word", why: "a longer alphanumeric run is not a token", in: "xabcdef.0123456789abcdef abcdef.0123456789abcdefx", want: "xabcdef.0123456789abcdef abcdef.0123456789abcdefx"},
		{name: "upper case", why: "tokens are lower case", in: "ABCDEF.0123456789ABCDEF", want: "ABCDEF.0123456789ABCDEF"},
		{name: "none", why: "data without tokens is unchanged", in: "hello", want: "hello"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(MaskBootstrapTokens([]byte(tt.in))); got != tt.want {
				t.Errorf("MaskBootstrapTokens(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}
