package core

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
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

func TestFaceDataAsDecodesOncePerChange(t *testing.T) {
	dir := t.TempDir()
	c := newTestCloud(t, clocktesting.NewFakeClock(t0), dir, Simulation{})
	if got := FaceDataAs[testPayload](c, "acme"); got.N != 0 || got.Tags != nil {
		t.Fatalf("FaceDataAs before any data = %+v, want the zero value", got)
	}
	if _, err := UpdateFaceDataAs(c, "acme", func(p *testPayload) error { p.N, p.Tags = 1, []string{"a"}; return nil }); err != nil {
		t.Fatal(err)
	}
	first := FaceDataAs[testPayload](c, "acme")
	if first.N != 1 || len(first.Tags) != 1 {
		t.Fatalf("FaceDataAs after a change = %+v, want n 1 and one tag (the view before it was kept)", first)
	}
	// Unchanged data is the same decoded value, not a decode again.
	if again := FaceDataAs[testPayload](c, "acme"); &again.Tags[0] != &first.Tags[0] {
		t.Error("FaceDataAs decoded unchanged data again")
	}
	// Another face's change leaves this one's view alone; its own change
	// replaces it.
	if _, err := UpdateFaceDataAs(c, "other", func(p *testPayload) error { p.N = 5; return nil }); err != nil {
		t.Fatal(err)
	}
	if again := FaceDataAs[testPayload](c, "acme"); &again.Tags[0] != &first.Tags[0] {
		t.Error("another face's change decoded this face's data again")
	}
	if _, err := UpdateFaceDataAs(c, "acme", func(p *testPayload) error { p.N = 2; return nil }); err != nil {
		t.Fatal(err)
	}
	if got := FaceDataAs[testPayload](c, "acme"); got.N != 2 || &got.Tags[0] == &first.Tags[0] {
		t.Errorf("FaceDataAs after the face's own change = %+v, want n 2 decoded anew", got)
	}
	// The state file's face data is encoded again after each change, and
	// kept in between.
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	if _, err := UpdateFaceDataAs(c, "acme", func(p *testPayload) error { p.N = 3; return nil }); err != nil {
		t.Fatal(err)
	}
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	c2 := newTestCloud(t, clocktesting.NewFakeClock(t0), dir, Simulation{})
	if got := FaceDataAs[testPayload](c2, "acme"); got.N != 3 {
		t.Errorf("face data after a restart = %+v, want n 3 (the last change flushed)", got)
	}
	if got := FaceDataAs[testPayload](c2, "other"); got.N != 5 {
		t.Errorf("the other face's data after a restart = %+v, want n 5", got)
	}
}

// TestFaceRecords: records are read, listed, changed and deleted one at a
// time, kept across a restart, and the state file holds them as
// json.Marshal would.
func TestFaceRecords(t *testing.T) {
	dir := t.TempDir()
	c := newTestCloud(t, clocktesting.NewFakeClock(t0), dir, Simulation{})
	for _, k := range []string{"t/b", "t/a", "u/x"} {
		if _, err := UpdateFaceRecordAs(c, "acme", k, func(p *testPayload) error { p.N = len(k); p.Tags = []string{k}; return nil }); err != nil {
			t.Fatal(err)
		}
	}
	// Not compact: kept compact, so the state file can copy it.
	if _, err := c.UpdateFaceRecord("other", "k", ReplacePayload(json.RawMessage(`{ "n" : 1 }`))); err != nil {
		t.Fatal(err)
	}
	if got := FaceRecordAs[testPayload](c, "acme", "t/a"); got.N != 3 || got.Tags[0] != "t/a" {
		t.Errorf("FaceRecordAs(t/a) = %+v", got)
	}
	if got := c.FaceRecords("acme", "t/"); len(got) != 2 || got["t/a"] == nil || got["t/b"] == nil {
		t.Errorf("FaceRecords(t/) = %s, want t/a and t/b", got)
	}
	if _, err := UpdateFaceRecordAs(c, "acme", "t/a", func(p *testPayload) error { return errors.New("no") }); err == nil {
		t.Error("a failing edit succeeded")
	}
	if _, err := c.UpdateFaceRecord("acme", "t/b", func(json.RawMessage) (json.RawMessage, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
	if got := c.FaceRecord("acme", "t/b"); got != nil {
		t.Errorf("deleted record = %s, want none", got)
	}
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, stateFile))
	if err != nil {
		t.Fatal(err)
	}
	var f stateFileV2
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatalf("state file: %v", err)
	}
	want, _ := json.Marshal(map[string]map[string]json.RawMessage{
		"acme":  {"t/a": json.RawMessage(`{"n":3,"tags":["t/a"]}`), "u/x": json.RawMessage(`{"n":3,"tags":["u/x"]}`)},
		"other": {"k": json.RawMessage(`{"n":1}`)},
	})
	if got, _ := json.Marshal(f.FaceRecords); string(got) != string(want) {
		t.Errorf("state file's records = %s, want %s", got, want)
	}
	if !bytes.Contains(b, []byte(`"faceRecords":`+string(want))) {
		t.Errorf("state file does not hold the records as json.Marshal encodes them: %s", b)
	}
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	c2 := newTestCloud(t, clocktesting.NewFakeClock(t0), dir, Simulation{})
	if got := FaceRecordAs[testPayload](c2, "acme", "u/x"); got.N != 3 {
		t.Errorf("record after a restart = %+v, want n 3", got)
	}
	if got := c2.FaceRecords("acme", ""); len(got) != 2 {
		t.Errorf("records after a restart = %s, want 2", got)
	}
}
