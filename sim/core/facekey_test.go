package core

import (
	"errors"
	"strings"
	"testing"
)

func TestFaceKey(t *testing.T) {
	type data struct{ Key string }
	var stored data
	updates := 0
	read := func() data { return stored }
	update := func(fn func(*data) error) (data, error) {
		updates++
		d := stored
		if err := fn(&d); err != nil {
			return data{}, err
		}
		stored = d
		return d, nil
	}
	key := func(d *data) *string { return &d.Key }
	k1, err := FaceKey(read, update, key)
	if err != nil || len(k1) != 32 {
		t.Fatalf("first FaceKey = %x, %v; want 32 bytes", k1, err)
	}
	k2, err := FaceKey(read, update, key)
	if err != nil || string(k2) != string(k1) || updates != 1 {
		t.Fatalf("second FaceKey = %x, %v after %d updates; want the first key %x, stored once", k2, err, updates, k1)
	}
	boom := errors.New("boom")
	if _, err := FaceKey(func() data { return data{} }, func(func(*data) error) (data, error) { return data{}, boom }, key); !errors.Is(err, boom) {
		t.Fatalf("FaceKey with a failing update = %v, want %v", err, boom)
	}
}

func TestSignToken(t *testing.T) {
	type claims struct{ Sub string }
	key, other := []byte("k1"), []byte("k2")
	for _, prefix := range []string{"", "ya29.x.", "eyJhbGciOiJIUzI1NiJ9."} {
		tok := SignToken(key, prefix, claims{Sub: "me"})
		if !strings.HasPrefix(tok, prefix) || strings.Count(tok, ".") != strings.Count(prefix, ".")+1 {
			t.Fatalf("SignToken(%q) = %q: want the prefix, the claims and one \".\" before the signature", prefix, tok)
		}
		var c claims
		if !VerifyToken(key, prefix, tok, &c) || c.Sub != "me" {
			t.Errorf("VerifyToken(%q) of its own token = %+v, want its claims", prefix, c)
		}
		body, sig, _ := strings.Cut(strings.TrimPrefix(tok, prefix), ".")
		for name, bad := range map[string]string{
			"another key's":        SignToken(other, prefix, claims{Sub: "me"}),
			"another prefix's":     SignToken(key, "p.", claims{Sub: "me"}),
			"changed claims":       prefix + body + "x." + sig,
			"without a signature":  prefix + body,
			"with a second dot":    tok + ".x",
			"with a bad signature": prefix + body + ".!!",
		} {
			if VerifyToken(key, prefix, bad, &claims{}) {
				t.Errorf("VerifyToken(%q) accepted a token %s: %q", prefix, name, bad)
			}
		}
	}
}
