// Command mpool is the single binary of the mpool MachinePool system: `mpool up`
// runs everything on one machine, `mpool manager` runs the controllers against
// a management cluster.
package main

import (
	"os"

	"github.com/mpool-dev/mpool/internal/cli"
)

func main() {
	if err := cli.NewRootCommand().Execute(); err != nil {
		os.Exit(1)
	}
}
