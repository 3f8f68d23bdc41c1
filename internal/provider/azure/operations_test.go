package azure_test

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/provider/azure"
	"github.com/mpool-dev/mpool/internal/provider/contract"
	"github.com/mpool-dev/mpool/internal/provider/contract/contracttest"
	"github.com/mpool-dev/mpool/internal/scalegroup"
	"github.com/mpool-dev/mpool/internal/testenv/cloudtest"
	"github.com/mpool-dev/mpool/sim/face/azureface"
)

// TestOperationResumesAfterARestart: the scale set PUT mpool starts is
// reported with its poller's resume token, which the pool records as
// CAPZ's longRunningOperationStates and reads back; a restarted provider
// given the recorded operation reports it as its own with the same token
// (no write: Get only), one without it as another client's (no token);
// at rest nothing is reported. A write left Failed (a VM that failed to
// boot) says why in Azure's words, read from the resumed operation. For
// Uniform and Flexible scale sets.
func TestOperationResumesAfterARestart(t *testing.T) {
	for _, mode := range []string{"Uniform", "Flexible"} {
		t.Run(mode, func(t *testing.T) {
			ctx := context.Background()
			sim := cloudtest.DefaultSimulation
			sim.FailureRate = 1
			e := startAzureWith(t, nil, sim)
			r := ref("resume-" + strings.ToLower(mode))
			pool := &infrav1.AzureMachinePool{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "resume",
				Annotations: map[string]string{contract.GroupRefAnnotation: r.Encode()}}}

			g := e.Apply(t, r, spec(2, "h1", mode))
			op := g.Operation
			read := contracttest.RecordsOperation(t, azure.Adapter{}, pool, "the create's PUT", op)
			if f := pool.Status.LongRunningOperationStates; len(f) != 1 || f[0] != (infrav1.Future{Type: "PUT", ServiceName: "scalesets",
				ResourceGroup: azureface.AzureDefaultResourceGroup, Name: r.Name, Data: op.ResumeToken}) {
				t.Fatalf("longRunningOperationStates %+v", f)
			}

			// A restarted manager: told the recorded operation, it is
			// mpool's, with the same token; nothing is written.
			restarted := e.restarted(t)
			recorded := scalegroup.WithRecordedOperation(ctx, read)
			e.Srv.ResetStats()
			g, err := restarted.Get(recorded, r)
			if err != nil || g.Operation == nil || g.Operation.ResumeToken != op.ResumeToken {
				t.Fatalf("after a restart, with the recorded operation: %+v, %v; want its token", g.Operation, err)
			}
			if got := e.Requests(); writes(got) != 0 {
				t.Fatalf("requests of Get after a restart: %v", got)
			}
			if g, err = e.restarted(t).Get(ctx, r); err != nil || g.Operation == nil || g.Operation.ResumeToken != "" {
				t.Fatalf("after a restart, without the recorded operation: %+v, %v; want another client's operation (no token)", g.Operation, err)
			}

			// Every VM fails to boot: the write is left Failed, and says
			// why from its operation.
			for range 60 {
				if g, err = restarted.Get(recorded, r); err != nil || g.Operation == nil {
					break
				}
				e.Clk.Step(time.Second)
			}
			if err != nil || g.Operation != nil || !strings.Contains(g.Message, "VMExtensionProvisioningError") {
				t.Fatalf("after the boot failures: operation %+v, message %q, %v; want Azure's error of the write", g.Operation, g.Message, err)
			}
			azure.Adapter{}.WritePool(pool, contract.PoolReport{Observed: true, Operation: g.Operation})
			if f := pool.Status.LongRunningOperationStates; len(f) != 0 {
				t.Fatalf("at rest, longRunningOperationStates %+v", f)
			}
		})
	}
}
