package gcpface

import (
	"slices"
	"strings"

	"github.com/mpool-dev/mpool/sim/core"
)

// GCPTemplates lists the names of the instance templates of project that
// start with prefix, sorted, as the cloud holds them (for tests and the
// admin's eyes; clients list them through the API).
func GCPTemplates(c *core.Cloud, project, prefix string) []string {
	var out []string
	for k := range readData(c).Templates {
		p, name, _ := strings.Cut(k, "/")
		if p == project && strings.HasPrefix(name, prefix) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}
