package core

import (
	"errors"
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
