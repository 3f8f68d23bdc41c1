package bootstrap

import (
	"bytes"
	"regexp"
	"slices"
)

// TokenMask replaces bootstrap tokens in MaskBootstrapTokens' output. It has a
// token's length but can never be one (tokens are lower-case alphanumerics).
const TokenMask = "XXXXXX.XXXXXXXXXXXXXXXX"

// tokenPattern is a bootstrap token: "<id>.<secret>", 6 and 16 lower-case
// alphanumerics (k8s.io/cluster-bootstrap's BootstrapTokenPattern, unanchored).
const tokenPattern = `[a-z0-9]{6}\.[a-z0-9]{16}`

// tokenFieldRE matches a bootstrap token as the value of a kubeadm
// JoinConfiguration "token" or "tlsBootstrapToken" key, in every form
// RenderCloudInit writes it: plain, double-quoted when YAML would read the
// token as a number ("123456.1234567890123456"), single-quoted, and escaped
// (\"...\") or folded onto the next line should the JoinConfiguration ever be
// written as a double-quoted string. Group 1 is the value with its quotes;
// exactly one of groups 2 to 5 is the token. A plain value must end where the
// token does (endsValue).
var tokenFieldRE = regexp.MustCompile(`\b(?:token|tlsBootstrapToken):[ \t\r\n]+` +
	`("(` + tokenPattern + `)"|'(` + tokenPattern + `)'|\\"(` + tokenPattern + `)\\"|(` + tokenPattern + `))`)

// MaskBootstrapTokens returns a copy of data, bootstrap data rendered by
// RenderCloudInit, with its bootstrap tokens replaced by TokenMask and nothing
// else changed:
//
//   - A token is a value of a JoinConfiguration "token" or "tlsBootstrapToken"
//     key. Such a value is replaced, quotes included, by the unquoted
//     TokenMask, so that a token YAML happens to quote masks like any other.
//   - Every other occurrence of those same tokens (a token a user also wrote
//     into a file or a command) is replaced by TokenMask as well.
//   - Anything else, including token-shaped strings that are not one of the
//     data's tokens (a host name such as "abcdef.0123456789abcdef.example"),
//     is left as it is.
//
// Two renderings that differ only in their tokens mask to the same bytes, and
// renderings that differ in anything else do not, so a hash of the masked
// data identifies the instance model without the token: a rotated token must
// not roll a pool, a changed KubeadmConfig must. The function is pure and
// safe for concurrent use; its output contains none of the tokens it masked.
func MaskBootstrapTokens(data []byte) []byte {
	type span struct{ start, end int }
	var spans []span
	var tokens []string
	for _, m := range tokenFieldRE.FindAllSubmatchIndex(data, -1) {
		if m[10] >= 0 && !endsValue(data, m[11]) {
			continue
		}
		spans = append(spans, span{m[2], m[3]})
		for g := 4; g < len(m); g += 2 {
			if t := m[g]; t >= 0 && !slices.Contains(tokens, string(data[t:m[g+1]])) {
				tokens = append(tokens, string(data[t:m[g+1]]))
			}
		}
	}
	if len(tokens) == 0 {
		return bytes.Clone(data)
	}
	// Occurrences of a token do not overlap, whether of the same token or of
	// two: a token's only '.' is its seventh byte.
	fields := slices.Clip(spans)
	for _, t := range tokens {
		for i := 0; ; {
			j := bytes.Index(data[i:], []byte(t))
			if j < 0 {
				break
			}
			start, end := i+j, i+j+len(t)
			if !slices.ContainsFunc(fields, func(s span) bool { return start < s.end && end > s.start }) {
				spans = append(spans, span{start, end})
			}
			i = end
		}
	}
	slices.SortFunc(spans, func(a, b span) int { return a.start - b.start })

	out := make([]byte, 0, len(data))
	last := 0
	for _, s := range spans {
		out = append(out, data[last:s.start]...)
		out = append(out, TokenMask...)
		last = s.end
	}
	return append(out, data[last:]...)
}

// SameContent reports whether two renderings of bootstrap data differ at
// most in their bootstrap tokens: equal once masked (MaskBootstrapTokens),
// which equal bytes are without masking them.
func SameContent(a, b []byte) bool {
	return bytes.Equal(a, b) || bytes.Equal(MaskBootstrapTokens(a), MaskBootstrapTokens(b))
}

// endsValue reports whether a plain YAML value that reaches data[i] ends there,
// so that it is a token and does not just begin with one
// ("abcdef.0123456789abcdef.example"): at the end of the data, a blank or a
// line break, the backslash of an escape (inside a double-quoted string) or a
// flow indicator.
func endsValue(data []byte, i int) bool {
	if i == len(data) {
		return true
	}
	switch data[i] {
	case ' ', '\t', '\r', '\n', '\\', ',', ']', '}':
		return true
	}
	return false
}
