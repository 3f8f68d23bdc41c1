package core

import (
	"encoding/json"
	"errors"
	"testing"

	clocktesting "k8s.io/utils/clock/testing"
)

type testPayload struct {
	N    int      `json:"n"`
	Tags []string `json:"tags,omitempty"`
}

func TestDecodePayload(t *testing.T) {
	if got := DecodePayload[testPayload](nil); got.N != 0 || got.Tags != nil {
		t.Errorf("DecodePayload(nil) = %+v, want the zero value", got)
	}
	if got := DecodePayload[testPayload](json.RawMessage(`{"n":3,"tags":["a"]}`)); got.N != 3 || len(got.Tags) != 1 {
		t.Errorf("DecodePayload = %+v, want n 3 and one tag", got)
	}
	// What decodes of a payload of another shape is kept.
	if got := DecodePayload[testPayload](json.RawMessage(`{"n":4,"tags":"x"}`)); got.N != 4 {
		t.Errorf("DecodePayload of a mistyped field = %+v, want n 4", got)
	}
}

func TestEditPayload(t *testing.T) {
	inc := EditPayload(func(p *testPayload) error { p.N++; return nil })
	tests := []struct {
		name    string
		fn      PayloadFunc
		old     string
		want    string
		wantErr bool
	}{
		{name: "no payload edits the zero value", fn: inc, old: "", want: `{"n":1}`},
		{name: "a payload is decoded, edited and encoded", fn: inc, old: `{"n":1,"tags":["a"]}`, want: `{"n":2,"tags":["a"]}`},
		{name: "a payload of another shape is kept", fn: inc, old: `{"n":"x"}`, wantErr: true},
		{name: "the edit's error is returned", fn: EditPayload(func(*testPayload) error { return errors.New("no") }), old: `{"n":1}`, wantErr: true},
		{name: "replace ignores the old payload", fn: ReplacePayload(testPayload{N: 7}), old: `{"n":1}`, want: `{"n":7}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var old json.RawMessage
			if tt.old != "" {
				old = json.RawMessage(tt.old)
			}
			got, err := tt.fn(old)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if !tt.wantErr && string(got) != tt.want {
				t.Errorf("payload = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestUpdateFaceDataAs(t *testing.T) {
	c := newTestCloud(t, clocktesting.NewFakeClock(t0), t.TempDir(), Simulation{})
	for want := 1; want <= 2; want++ {
		got, err := UpdateFaceDataAs(c, "acme", func(p *testPayload) error { p.N++; return nil })
		if err != nil || got.N != want {
			t.Fatalf("UpdateFaceDataAs = %+v, %v, want n %d", got, err, want)
		}
	}
	if _, err := UpdateFaceDataAs(c, "acme", func(p *testPayload) error { p.N = 9; return errors.New("no") }); err == nil {
		t.Fatal("UpdateFaceDataAs with a failing edit succeeded")
	}
	if got := DecodePayload[testPayload](c.FaceData("acme")); got.N != 2 {
		t.Errorf("face data after a failed edit = %+v, want n 2 (unchanged)", got)
	}
}
