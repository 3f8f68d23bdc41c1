package kit

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/provider/contract"
	"github.com/mpool-dev/mpool/internal/scalegroup"
)

func TestRetryAfter(t *testing.T) {
	date := "Wed, 21 Oct 2026 07:28:00 GMT"
	for _, tc := range []struct {
		name   string
		header http.Header
		want   time.Duration
	}{
		{name: "absent: the engine's backoff applies", header: http.Header{}, want: 0},
		{name: "delay-seconds", header: http.Header{"Retry-After": {" 7 "}}, want: 7 * time.Second},
		{name: "negative seconds are no wait", header: http.Header{"Retry-After": {"-3"}}, want: 0},
		{name: "a date is relative to the response's Date, the cloud's clock", header: http.Header{"Retry-After": {"Wed, 21 Oct 2026 07:28:30 GMT"}, "Date": {date}}, want: 30 * time.Second},
		{name: "a date in the past is no wait", header: http.Header{"Retry-After": {"Wed, 21 Oct 2026 07:27:00 GMT"}, "Date": {date}}, want: 0},
		{name: "a date without Date cannot be placed", header: http.Header{"Retry-After": {date}}, want: 0},
		{name: "garbage", header: http.Header{"Retry-After": {"soon"}}, want: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := RetryAfter(tc.header); got != tc.want {
				t.Errorf("RetryAfter(%v) = %v, want %v", tc.header, got, tc.want)
			}
		})
	}
}

func TestClientCacheBuildsOncePerComparableKey(t *testing.T) {
	type key struct {
		region string
		creds  any
	}
	var c ClientCache[key, int]
	builds := 0
	build := func() (int, error) { builds++; return builds, nil }
	shared := &struct{ id string }{"a"}
	for range 3 {
		if v, _ := c.Get(key{"r1", shared}, build); v != 1 {
			t.Fatalf("got clients %d, want the first ones", v)
		}
	}
	// Credentials of a type that cannot be compared are never cached.
	for range 2 {
		_, _ = c.Get(key{"r1", []string{"x"}}, build)
	}
	if builds != 3 {
		t.Errorf("built %d times, want 3 (once for the pointer, twice for the slice)", builds)
	}
	if _, err := c.Get(key{"r2", shared}, func() (int, error) { return 0, errors.New("boom") }); err == nil {
		t.Error("a failed build returned no error")
	}
	if v, _ := c.Get(key{"r2", shared}, build); v != 4 {
		t.Errorf("a failed build was cached: got %d", v)
	}
}

func TestCredentialCacheRebuildsOnNewVersion(t *testing.T) {
	var c CredentialCache[string]
	builds := 0
	build := func() (string, error) { builds++; return "cred", nil }
	for _, v := range []string{"1/1", "1/1", "1/2", "1/2", "2/2"} {
		if _, err := c.Get("ns/id", v, build); err != nil {
			t.Fatal(err)
		}
	}
	if builds != 3 {
		t.Errorf("built %d times, want 3 (one per identity/Secret version)", builds)
	}
}

func TestObjectsNameTheKindsAfterTheTypes(t *testing.T) {
	type objects = Objects[infrav1.AzureMachinePool, infrav1.AzureMachinePoolMachine, infrav1.AzureMachinePoolMachineList, infrav1.AzureCluster]
	k := objects{}.Named(contract.Kinds{Provider: "azure"})
	if k.Provider != "azure" || k.Pool != "AzureMachinePool" || k.Instance != "AzureMachinePoolMachine" || k.InfraCluster != "AzureCluster" {
		t.Errorf("Named: %+v", k)
	}
	if ac, err := (objects{}).InfraCluster(&infrav1.AzureCluster{}); ac == nil || err != nil {
		t.Errorf("InfraCluster of an AzureCluster: %v, %v", ac, err)
	}
	for _, infra := range []client.Object{nil, (*infrav1.AzureCluster)(nil), &infrav1.AWSCluster{}} {
		if _, err := (objects{}).InfraCluster(infra); err == nil || !strings.Contains(err.Error(), "an AzureMachinePool needs its Cluster's AzureCluster") {
			t.Errorf("InfraCluster(%T): %v, want an error naming what the pool needs", infra, err)
		}
	}
	none := localObjects{}
	if k := none.Named(contract.Kinds{}); k.InfraCluster != "" || none.NewInfraCluster() != nil {
		t.Errorf("a provider without an infrastructure cluster: kind %q, object %v", k.InfraCluster, none.NewInfraCluster())
	}
}

func TestPoolFieldsKeepWhatAnUnobservedGroupDoesNotSay(t *testing.T) {
	pool := &infrav1.LocalMachinePool{}
	st := &pool.Status
	f := localObjects{}.Pool(pool)
	if !f.Write(contract.PoolReport{Observed: true, ProviderIDList: []string{"a"}, Ready: true, Replicas: 1, ObservedGeneration: 1}) {
		t.Fatal("an observed report reads as not observed")
	}
	if f.Write(contract.PoolReport{InfrastructureMachineKind: "LocalMachinePoolMachine", ObservedGeneration: 2}) {
		t.Fatal("an unobserved report reads as observed")
	}
	if len(pool.Spec.ProviderIDList) != 1 || !st.Ready || st.Replicas != 1 || st.ObservedGeneration != 2 || st.InfrastructureMachineKind != "LocalMachinePoolMachine" {
		t.Errorf("after an unobserved report: providerIDs %v, ready %v, replicas %d, generation %d, kind %q; want the observed values kept, the rest written",
			pool.Spec.ProviderIDList, st.Ready, st.Replicas, st.ObservedGeneration, st.InfrastructureMachineKind)
	}
}

func TestInstanceFieldsAreTheKindsOwn(t *testing.T) {
	m := &infrav1.LocalMachinePoolMachine{}
	f := localObjects{}.Instance(m)
	f.WriteSpec("i-1", "local:///g/i-1")
	f.WriteStatus(contract.InstanceReport{Ready: true, LatestModelApplied: true, Version: "v1.31.2", FailureReason: ptr.To("r")})
	if m.Spec.InstanceID != "i-1" || m.Spec.ProviderID != "local:///g/i-1" || !m.Status.Ready || !m.Status.LatestModelApplied ||
		m.Status.Version != "v1.31.2" || ptr.Deref(m.Status.FailureReason, "") != "r" {
		t.Errorf("the fields written are not the object's: %+v", m)
	}
	// A kind without the contract's fields is a provider's bug, said at once.
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "has no field Spec.InstanceID") {
			t.Errorf("binding a kind without spec.instanceID: %v, want a panic naming the field", r)
		}
	}()
	Objects[infrav1.AzureCluster, infrav1.AzureCluster, infrav1.AzureClusterList, NoInfraCluster]{}.Instance(&infrav1.AzureCluster{})
}

// localObjects are the local provider's objects.
type localObjects = Objects[infrav1.LocalMachinePool, infrav1.LocalMachinePoolMachine, infrav1.LocalMachinePoolMachineList, NoInfraCluster]

func TestPoolTags(t *testing.T) {
	pool := &infrav1.LocalMachinePool{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}}
	got := PoolTags(pool, map[string]string{"a": "cluster", "b": "cluster", TagPool: "spoofed"}, map[string]string{"b": "pool"})
	if len(got) != 3 || got["a"] != "cluster" || got["b"] != "pool" || got[TagPool] != "ns/p" {
		t.Errorf("PoolTags = %v: want the cluster's tags, the pool's winning, and the pool tag", got)
	}
}

func TestModelPart(t *testing.T) {
	type part struct{ N int }
	for _, tc := range []struct {
		name   string
		v      any
		want   part
		ok     bool
		reason scalegroup.Reason
	}{
		{name: "a value, as Adapters put it", v: part{N: 1}, want: part{N: 1}, ok: true},
		{name: "a pointer is read through", v: &part{N: 2}, want: part{N: 2}, ok: true},
		{name: "none: the provider's default applies", v: nil},
		{name: "a nil pointer is none", v: (*part)(nil)},
		{name: "another type is the Adapter's bug: Invalid", v: "part", reason: scalegroup.ReasonInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok, err := ModelPart[part](tc.v, "the part")
			if got != tc.want || ok != tc.ok || scalegroup.ReasonOf(err) != tc.reason {
				t.Errorf("ModelPart(%#v) = %v, %v, %v; want %v, %v, reason %q", tc.v, got, ok, err, tc.want, tc.ok, tc.reason)
			}
		})
	}
}

func TestCheckScaling(t *testing.T) {
	for _, tc := range []struct {
		name               string
		replicas, min, max int32
		external           bool
		want               string
	}{
		{name: "within", replicas: 2, min: 1, max: 3},
		{name: "at the bounds", replicas: 3, min: 3, max: 3},
		{name: "min above max", replicas: 2, min: 4, max: 3, want: "spec.scaling.minSize 4 is above spec.scaling.maxSize 3"},
		{name: "min above max, external replicas", replicas: 2, min: 4, max: 3, external: true, want: "is above"},
		{name: "above max", replicas: 6, min: 1, max: 3, want: "the MachinePool's replicas 6 are outside the K's [scaling.minSize 1, scaling.maxSize 3]"},
		{name: "below min", replicas: 0, min: 1, max: 3, want: "replicas 0 are outside"},
		{name: "outside, external replicas", replicas: 6, min: 1, max: 3, external: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckScaling("K", tc.replicas, tc.min, tc.max, tc.external)
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("CheckScaling(%d, [%d, %d], external %v) = %v, want an error with %q", tc.replicas, tc.min, tc.max, tc.external, err, tc.want)
			}
		})
	}
	if got := OwnerReplicas(contract.Owner{}); got != 1 {
		t.Errorf("OwnerReplicas without a MachinePool = %d, want 1", got)
	}
}

func TestStateWords(t *testing.T) {
	for _, tc := range []struct {
		words StateWords[string]
		want  map[contract.InstanceState]string
	}{
		{ // every state a word of its own
			words: StateWords[string]{Pending: "Creating", Booting: "Booting", Running: "Succeeded", Failed: "Failed", Deleting: "Deleting"},
			want: map[contract.InstanceState]string{contract.InstancePending: "Creating", contract.InstanceBooting: "Booting", contract.InstanceRunning: "Succeeded",
				contract.InstanceFailed: "Failed", contract.InstanceDeleting: "Deleting", contract.InstanceUnknown: "Succeeded"},
		},
		{ // booting is pending, a failed instance stays in service
			words: StateWords[string]{Pending: "pending", Running: "running", Deleting: "shutting-down"},
			want: map[contract.InstanceState]string{contract.InstancePending: "pending", contract.InstanceBooting: "pending", contract.InstanceRunning: "running",
				contract.InstanceFailed: "running", contract.InstanceDeleting: "shutting-down", contract.InstanceUnknown: "running"},
		},
	} {
		for _, s := range contract.InstanceStates {
			if got := tc.words.Word(s); got != tc.want[s] {
				t.Errorf("%+v.Word(%s) = %q, want %q", tc.words, s, got, tc.want[s])
			}
			// State reverses Word, but for the states that share a word.
			want := s
			switch {
			case s == contract.InstanceUnknown || s == contract.InstanceFailed && tc.words.Failed == "":
				want = contract.InstanceRunning
			case s == contract.InstanceBooting && tc.words.Booting == "":
				want = contract.InstancePending
			}
			if got := tc.words.State(tc.words.Word(s)); got != want {
				t.Errorf("%+v.State(%q) = %s, want %s", tc.words, tc.words.Word(s), got, want)
			}
		}
	}
	words := StateWords[string]{Pending: "pending", Running: "running", Deleting: "shutting-down",
		Also: map[string]contract.InstanceState{"stopped": contract.InstanceDeleting}, Other: contract.InstanceRunning}
	for word, want := range map[string]contract.InstanceState{"": "", "pending": contract.InstancePending, "stopped": contract.InstanceDeleting,
		"hibernating": contract.InstanceRunning} {
		if got := words.State(word); got != want {
			t.Errorf("State(%q) = %q, want %q", word, got, want)
		}
	}
	words.Other = ""
	if got := words.State("hibernating"); got != "" {
		t.Errorf("State of another word with no other state = %q, want none", got)
	}
}

// getReader is a client.Reader whose Get returns err.
type getReader struct {
	client.Reader
	err error
}

func (r getReader) Get(context.Context, client.ObjectKey, client.Object, ...client.GetOption) error {
	return r.err
}

func TestReadCredentialsObject(t *testing.T) {
	key := client.ObjectKey{Namespace: "ns", Name: "id"}
	notFound := apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, "id")
	for _, tc := range []struct {
		err      error
		reason   scalegroup.Reason
		mentions string
	}{
		{err: nil},
		{err: notFound, reason: scalegroup.ReasonUnauthorized, mentions: "create Secret ns/id"},
		{err: errors.New("connection refused"), reason: scalegroup.ReasonTransient, mentions: "reading Secret ns/id"},
	} {
		err := ReadCredentialsObject(context.Background(), getReader{err: tc.err}, key, &corev1.Secret{}, "Secret ns/id", "create Secret ns/id")
		if scalegroup.ReasonOf(err) != tc.reason || (tc.err == nil) != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.mentions) {
			t.Errorf("read failing with %v: %v, want %q mentioning %q", tc.err, err, tc.reason, tc.mentions)
		}
	}
}

// TestReadyAliasMirrorsTheReasonsItNames: a pool's ScaleGroupReady is
// mirrored under the alias's type with its reasons; a reason the alias
// leaves empty keeps the engine's.
func TestReadyAliasMirrorsTheReasonsItNames(t *testing.T) {
	aliases := map[string][]ConditionAlias{infrav1.ScaleGroupReadyCondition: {
		ReadyAlias("GroupReady", "GroupNotFound", "GroupFailed", ""),
	}}
	for engine, want := range map[string]string{
		infrav1.ScaleGroupNotFoundReason:        "GroupNotFound",
		infrav1.ScaleGroupProvisionFailedReason: "GroupFailed",
		infrav1.ScaleGroupDeletingReason:        infrav1.ScaleGroupDeletingReason,
	} {
		pool := &infrav1.LocalMachinePool{}
		pool.SetConditions([]metav1.Condition{{Type: infrav1.ScaleGroupReadyCondition, Status: metav1.ConditionFalse, Reason: engine, Message: "m"}})
		MirrorConditions(pool, aliases)
		got := meta.FindStatusCondition(pool.GetConditions(), "GroupReady")
		if got == nil || got.Reason != want || got.Status != metav1.ConditionFalse || got.Message != "m" {
			t.Errorf("engine reason %s: mirrored %+v, want reason %s", engine, got, want)
		}
	}
}

// TestOwnCredentials: the manager's own credentials are returned as they
// are; none is Unauthorized, saying the hint.
func TestOwnCredentials(t *testing.T) {
	var none fmt.Stringer
	if got, err := OwnCredentials(none, "give the manager credentials"); got != nil || !scalegroup.IsUnauthorized(err) || !strings.Contains(err.Error(), "give the manager credentials") {
		t.Errorf("no credentials: %v, %v; want Unauthorized with the hint", got, err)
	}
	own := fmt.Stringer(scalegroup.Ref{Name: "own"})
	if got, err := OwnCredentials(own, "unused"); got != own || err != nil {
		t.Errorf("own credentials: %v, %v; want them", got, err)
	}
}
