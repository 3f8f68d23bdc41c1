package cli

import (
	"bytes"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestRenderTree(t *testing.T) {
	root := &treeNode{cells: []cell{c("root", bold), c("", plain), c("x", plain)}}
	root.details = [][]cell{{c("detail", plain)}}
	a := &treeNode{group: "g", cells: []cell{c("a", plain), c("long-value", plain), c("end", plain)}}
	a.add(&treeNode{cells: []cell{c("child of a", plain)}})
	root.add(a,
		&treeNode{group: "g", cells: []cell{c("bbbb", plain), c("v", plain), c("", plain), c("extra", plain)}},
		&treeNode{group: "other", cells: []cell{c("c", plain), c("w", plain)}},
	)
	var b bytes.Buffer
	if err := renderTree(&b, root, palette{}); err != nil {
		t.Fatal(err)
	}
	want := `root  x
│  detail
├─ a     long-value  end
│  └─ child of a
├─ bbbb  v                extra
└─ c  w
`
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}

	b.Reset()
	if err := renderTree(&b, &treeNode{cells: []cell{c("ok", good), c("plain", plain)}}, palette{on: true}); err != nil {
		t.Fatal(err)
	}
	if want := "\x1b[32mok\x1b[0m  plain\n"; b.String() != want {
		t.Errorf("colour: got %q, want %q", b.String(), want)
	}
}

func TestNeedsAttention(t *testing.T) {
	tests := []struct {
		name string
		cond metav1.Condition
		want bool
	}{
		{name: "a True condition is fine", cond: metav1.Condition{Type: "Ready", Status: "True"}, want: false},
		{name: "a False condition needs attention", cond: metav1.Condition{Type: "Ready", Status: "False"}, want: true},
		{name: "an Unknown condition needs attention", cond: metav1.Condition{Type: "Ready", Status: "Unknown"}, want: true},
		{name: "Paused=False is the normal state", cond: metav1.Condition{Type: "Paused", Status: "False"}, want: false},
		{name: "Paused=True needs attention", cond: metav1.Condition{Type: "Paused", Status: "True"}, want: true},
		{name: "ScalingUp=True is worth showing", cond: metav1.Condition{Type: "ScalingUp", Status: "True"}, want: true},
		{name: "a converged rollout is fine", cond: metav1.Condition{Type: "RolloutProgressing", Status: "False", Reason: "Converged"}, want: false},
		{name: "a paused rollout is shown", cond: metav1.Condition{Type: "RolloutProgressing", Status: "False", Reason: "Paused"}, want: true},
		{name: "a progressing rollout is shown", cond: metav1.Condition{Type: "RolloutProgressing", Status: "True", Reason: "WaitingForAvailable"}, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := needsAttention(tt.cond); got != tt.want {
				t.Errorf("needsAttention(%+v) = %v, want %v", tt.cond, got, tt.want)
			}
		})
	}
}

func TestFlagValues(t *testing.T) {
	tests := []struct {
		name    string
		set     func() error
		wantErr string
	}{
		{name: "json", set: func() error { var o outputFormat; return o.Set("json") }},
		{name: "yaml", set: func() error { var o outputFormat; return o.Set("yaml") }},
		{name: "an unknown format", set: func() error { var o outputFormat; return o.Set("wide") }, wantErr: `unknown output format "wide"`},
		{name: "colour always", set: func() error { var c colorMode; return c.Set("always") }},
		{name: "an unknown colour mode", set: func() error { var c colorMode; return c.Set("sometimes") }, wantErr: `unknown --color value "sometimes"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.set()
			if (err == nil) != (tt.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("error = %v, want %q", err, tt.wantErr)
			}
		})
	}
	var b bytes.Buffer
	if colorMode("auto").palette(&b).on {
		t.Error("auto colours a buffer")
	}
}
