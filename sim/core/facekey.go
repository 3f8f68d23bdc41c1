package core

import (
	"crypto/rand"
	"encoding/hex"
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
