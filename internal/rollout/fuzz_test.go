package rollout

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// fuzzBytes hands out the fuzzer's bytes one at a time, then zeros.
type fuzzBytes []byte

func (b *fuzzBytes) next() byte {
	if len(*b) == 0 {
		return 0
	}
	v := (*b)[0]
	*b = (*b)[1:]
	return v
}

// budget decodes an unset, integer (possibly negative), percentage (possibly
// above 100%) or malformed budget.
func (b *fuzzBytes) budget() *intstr.IntOrString {
	switch kind, v := b.next()%8, b.next(); kind {
	case 0:
		return nil
	case 1, 2, 3:
		return ptr.To(intstr.FromInt32(int32(v%8) - 1))
	case 4, 5, 6:
		return ptr.To(intstr.FromString(fmt.Sprintf("%d%%", int(v%120)-5)))
	default:
		return ptr.To(intstr.FromString("often"))
	}
}

// fuzzInput decodes an Input from the fuzzer's bytes. IDs are unique and states
// valid, so Plan may fail only on the strategy.
func fuzzInput(data []byte) Input {
	b := fuzzBytes(data)
	in := Input{
		Desired:   int32(b.next() % 16),
		ModelHash: "m1",
		Now:       t0,
	}
	in.Strategy.MaxSurge = b.budget()
	in.Strategy.MaxUnavailable = b.budget()
	in.Strategy.DeletePolicy = []DeletePolicy{"", DeletePolicyOldest, DeletePolicyNewest, DeletePolicyRandom}[b.next()%4]
	in.Strategy.MinReadySeconds = int32(b.next()%4) * 20
	flags := b.next()
	in.SkipModelReconciliation = flags&1 != 0
	in.Paused = flags&0x0e == 0 // one in eight
	in.RandSeed = int64(b.next())
	n := int(b.next() % 40)
	for k := range n {
		i := Instance{
			ID:        fmt.Sprintf("i-%02d", k),
			Zone:      fmt.Sprintf("zone-%d", k%3),
			CreatedAt: t0.Add(-time.Duration(b.next()%32) * time.Minute), // ties on purpose
			ModelHash: []string{"m1", "m0"}[b.next()%2],
			State:     []InstanceState{StateRunning, StateRunning, StateRunning, StatePending, StateFailed, StateDeleting}[b.next()%6],
		}
		switch r := b.next(); r % 4 {
		case 0:
			// not Ready
		case 1:
			i.ReadySince = ptr.To(t0.Add(-time.Duration(r) * time.Second)) // maybe within minReadySeconds
		default:
			i.ReadySince = ptr.To(t0.Add(-time.Hour))
		}
		i.MarkedForDeletion = b.next()%6 == 0
		in.Instances = append(in.Instances, i)
	}
	return in
}

func FuzzPlan(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{3, 1, 1, 1, 0, 1, 0, 0, 0, 6, 0, 1, 0, 3, 0, 0, 1, 1, 0, 3, 0, 0, 1, 0, 0, 3, 0})
	f.Add([]byte{10, 4, 25, 1, 1, 3, 2, 2, 7, 20, 5, 1, 0, 1, 0, 9, 0, 1, 3, 1, 0})
	f.Add([]byte{4, 1, 0, 4, 1, 0, 1, 3, 0, 12, 3, 0, 0, 2, 0, 1, 1, 0, 0, 7, 1, 0, 5})
	f.Add([]byte{0, 7, 0, 7, 0, 2, 0, 0, 2, 5, 1, 1, 4, 1, 5, 1, 2, 3, 0, 4})
	f.Fuzz(func(t *testing.T, data []byte) {
		in := fuzzInput(data)
		res, err := Plan(in)
		if _, _, budgetErr := ResolveBudgets(in.Desired, in.Strategy); (err != nil) != (budgetErr != nil) {
			t.Fatalf("Plan error %v, ResolveBudgets error %v: only the strategy may be invalid", err, budgetErr)
		}
		if err != nil {
			return
		}
		if errs := checkInvariants(in, res); len(errs) > 0 {
			t.Fatalf("invariants broken:\n  %s\ninput: %s", strings.Join(errs, "\n  "), describeInput(in))
		}
		// Pure and order-independent: the same observation listed backwards
		// gives the same result.
		reversed := in
		reversed.Instances = slices.Clone(in.Instances)
		slices.Reverse(reversed.Instances)
		again, err := Plan(reversed)
		if err != nil {
			t.Fatalf("Plan on reversed input: %v", err)
		}
		if !reflect.DeepEqual(res, again) {
			t.Fatalf("result depends on input order:\n%+v\n%+v", res, again)
		}
	})
}

// describeInput prints an Input compactly for failure messages.
func describeInput(in Input) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "desired=%d surge=%v unavailable=%v policy=%q minReady=%d skip=%v paused=%v seed=%d model=%s\n",
		in.Desired, in.Strategy.MaxSurge, in.Strategy.MaxUnavailable, in.Strategy.DeletePolicy,
		in.Strategy.MinReadySeconds, in.SkipModelReconciliation, in.Paused, in.RandSeed, in.ModelHash)
	for _, i := range in.Instances {
		ready := "notready"
		if i.ReadySince != nil {
			ready = "ready " + in.Now.Sub(*i.ReadySince).String()
		}
		fmt.Fprintf(&sb, "  %s %s %s created-%s %s marked=%v\n",
			i.ID, i.State, i.ModelHash, in.Now.Sub(i.CreatedAt), ready, i.MarkedForDeletion)
	}
	return sb.String()
}
