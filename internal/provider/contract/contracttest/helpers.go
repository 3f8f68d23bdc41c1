package contracttest

import (
	"testing"

	"github.com/mpool-dev/mpool/internal/provider/contract"
	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// ModelHash is the engine's hash of m (contract.ModelHash), failing t when
// m cannot be hashed: what a provider's tests compare to tell whether a
// field of its pool rolls the pool's instances.
func ModelHash(t testing.TB, m scalegroup.Model) string {
	t.Helper()
	h, err := contract.ModelHash(m)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// RecordsOperation checks that a records the long-running operation op
// that the engine reports on pool (what names the write that started it):
// op carries a resume token, and after WritePool, ReadPool hands the same
// token back (the operation a restarted manager resumes), which it returns.
// A provider whose cloud has resumable operations calls it from its own
// tests with an operation its ScaleGroup reported; it then checks its
// kind's own fields.
func RecordsOperation(t testing.TB, a contract.Adapter, pool contract.Pool, what string, op *scalegroup.Operation) scalegroup.Operation {
	t.Helper()
	if op == nil || op.ResumeToken == "" {
		t.Fatalf("%s: operation %+v, want one with a resume token", what, op)
	}
	a.WritePool(pool, contract.PoolReport{Observed: true, Operation: op})
	view, err := a.ReadPool(pool)
	if err != nil || view.Operation == nil || view.Operation.ResumeToken != op.ResumeToken {
		t.Fatalf("ReadPool after %s: %+v, %v; want the recorded token", what, view.Operation, err)
	}
	return *view.Operation
}
