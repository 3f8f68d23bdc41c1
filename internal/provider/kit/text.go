package kit

import (
	"slices"
	"strings"
)

// OneLine collapses whitespace, for cloud messages shown in conditions and
// events.
func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// UniqueIDs returns ids without empty strings and duplicates, in order.
func UniqueIDs(ids []string) []string {
	var out []string
	for _, id := range ids {
		if id != "" && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}
