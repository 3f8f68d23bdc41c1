package core

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"strings"
)

// FaceKey returns the signing key of the tokens a face issues: the random
// 32 bytes kept hex-encoded in the face's data at key, as read reads them;
// when there are none yet it stores new ones through update (which keeps a
// key another request stored first).
func FaceKey[D any](read func() D, update func(func(*D) error) (D, error), key func(*D) *string) ([]byte, error) {
	d := read()
	if *key(&d) == "" {
		var err error
		d, err = update(func(d *D) error {
			if k := key(d); *k == "" {
				b := make([]byte, 32)
				_, _ = rand.Read(b)
				*k = hex.EncodeToString(b)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return hex.DecodeString(*key(&d))
}

var tokenB64 = base64.RawURLEncoding

// SignToken is an access token a face issues with a FaceKey: prefix, then
// claims as base64url JSON, then "." and the base64url HMAC-SHA256 under key
// of all that precedes it. With the prefix of a JWT's header and "." it is
// an HS256 JWT.
func SignToken(key []byte, prefix string, claims any) string {
	body, _ := json.Marshal(claims)
	msg := prefix + tokenB64.EncodeToString(body)
	return msg + "." + tokenB64.EncodeToString(tokenMAC(key, msg))
}

// VerifyToken reports whether tok is a token SignToken made with key and
// prefix, and decodes its claims into claims (a pointer) when it is.
func VerifyToken(key []byte, prefix, tok string, claims any) bool {
	rest, ok := strings.CutPrefix(tok, prefix)
	body, sig, ok2 := strings.Cut(rest, ".")
	if !ok || !ok2 || strings.Contains(sig, ".") {
		return false
	}
	mac, err := tokenB64.DecodeString(sig)
	if err != nil || !hmac.Equal(mac, tokenMAC(key, prefix+body)) {
		return false
	}
	raw, err := tokenB64.DecodeString(body)
	return err == nil && json.Unmarshal(raw, claims) == nil
}

func tokenMAC(key []byte, msg string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(msg))
	return m.Sum(nil)
}
