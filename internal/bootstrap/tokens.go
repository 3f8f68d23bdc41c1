package bootstrap

import (
	"regexp"
)

// TokenMask replaces bootstrap tokens in MaskBootstrapTokens' output. It has a
// token's length but can never be one (tokens are lower-case alphanumerics).
const TokenMask = "XXXXXX.XXXXXXXXXXXXXXXX"

// tokenRE matches a bootstrap token: "<id>.<secret>", 6 and 16 lower-case
// alphanumerics.
var tokenRE = regexp.MustCompile(`[a-z0-9]{6}\.[a-z0-9]{16}`)

// MaskBootstrapTokens returns a copy of data with every bootstrap token that is
// not part of a longer alphanumeric word replaced by TokenMask. Two renderings
// of the same KubeadmConfig that differ only in their token mask to the same
// bytes, so a hash of the masked data identifies the instance model without the
// token: a rotated token must not roll a pool.
func MaskBootstrapTokens(data []byte) []byte {
	out := make([]byte, 0, len(data))
	last := 0
	for _, m := range tokenRE.FindAllIndex(data, -1) {
		start, end := m[0], m[1]
		if (start > 0 && isAlnum(data[start-1])) || (end < len(data) && isAlnum(data[end])) {
			continue
		}
		out = append(out, data[last:start]...)
		out = append(out, TokenMask...)
		last = end
	}
	return append(out, data[last:]...)
}

func isAlnum(b byte) bool {
	return (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || (b >= '0' && b <= '9')
}
