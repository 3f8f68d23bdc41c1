package examples

import (
	"strings"
	"testing"
)

func TestObjects(t *testing.T) {
	tests := []struct {
		name     string
		manifest string
		wantErr  string
		want     []string // kind/namespace/name
	}{
		{name: "empty", manifest: "", want: nil},
		{name: "documents in order, empty ones skipped", manifest: "kind: A\nmetadata: {name: a}\n---\n---\nkind: B\nmetadata: {name: b, namespace: other}\n",
			want: []string{"A/ns/a", "B/ns/b"}},
		{name: "bad document", manifest: "kind: A\n---\n: [\n", wantErr: "decoding document 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs, err := Objects([]byte(tt.manifest), "ns")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, o := range objs {
				got = append(got, o.GetKind()+"/"+o.GetNamespace()+"/"+o.GetName())
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestLocalMachinePoolDecodes(t *testing.T) {
	objs, err := Objects(LocalMachinePool, "default")
	if err != nil || len(objs) < 3 {
		t.Fatalf("%d objects, err %v", len(objs), err)
	}
}
