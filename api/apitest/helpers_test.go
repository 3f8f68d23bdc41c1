package apitest

import (
	"reflect"
	"testing"
)

// TestSubsetDiff keeps the round-trip checker honest: it must report dropped and changed
// fields, and ignore number representation and extra fields.
func TestSubsetDiff(t *testing.T) {
	tests := []struct {
		name      string
		want, got map[string]any
		diffs     int
	}{
		{name: "equal with different number types", want: map[string]any{"a": float64(1)}, got: map[string]any{"a": int64(1)}, diffs: 0},
		{name: "extra fields in got are fine", want: map[string]any{"a": "x"}, got: map[string]any{"a": "x", "b": "y"}, diffs: 0},
		{name: "dropped nested field", want: map[string]any{"s": map[string]any{"x": "1", "y": "2"}}, got: map[string]any{"s": map[string]any{"x": "1"}}, diffs: 1},
		{name: "changed list item", want: map[string]any{"l": []any{"a", "b"}}, got: map[string]any{"l": []any{"a", "c"}}, diffs: 1},
		{name: "string became number", want: map[string]any{"v": "1"}, got: map[string]any{"v": int64(1)}, diffs: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if d := subsetDiff("", tt.want, tt.got); len(d) != tt.diffs {
				t.Fatalf("got %d diffs %v, want %d", len(d), d, tt.diffs)
			}
		})
	}
}

func TestYAMLBlocks(t *testing.T) {
	text := "intro\n```yaml\na: 1\n```\n```shell\nls\n```\n  ```yaml\nb: 2\n  ```\n"
	if got, want := yamlBlocks(text), []string{"a: 1", "b: 2"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("yamlBlocks = %q, want %q", got, want)
	}
}
