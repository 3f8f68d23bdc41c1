// Package conversion serves the CustomResourceDefinition conversion webhook
// for the Cluster API kinds mpool serves in two versions (Cluster, Machine,
// MachinePool, MachineHealthCheck, KubeadmConfig, KubeadmConfigTemplate, and
// MachineSet and MachineDeployment, which mpool does not reconcile but serves
// because clusterctl lists them: v1beta1 and v1beta2, stored as v1beta2). The conversions are upstream Cluster API's own
// (sigs.k8s.io/cluster-api core and kubeadm bootstrap webhooks/conversion,
// v1.14), so an object written in either version reads back as upstream would
// return it; this package only registers them and wires the one piece of
// context they need: the apiVersion of a referenced object when a v1beta2
// reference (group and kind only) becomes a v1beta1 one.
//
// It also converts the AWS kinds mpool serves in Cluster API Provider AWS's
// v1beta2 beside its own v1beta1 (CAPAKinds), field by field (see
// fieldwise).
package conversion

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/conversion"

	bootstrapconversion "sigs.k8s.io/cluster-api/bootstrap/kubeadm/webhooks/conversion"
	coreconversion "sigs.k8s.io/cluster-api/core/webhooks/conversion"

	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	mpoolscheme "github.com/mpool-dev/mpool/internal/scheme"
	"k8s.io/client-go/rest"
)

// Path is where the webhook is served; the CRDs' conversion clientConfig
// names it.
const Path = "/convert"

// Kinds are the GroupKinds whose CRDs convert through this webhook.
var Kinds = []schema.GroupKind{
	{Group: clusterv1.GroupVersion.Group, Kind: "Cluster"},
	{Group: clusterv1.GroupVersion.Group, Kind: "Machine"},
	{Group: clusterv1.GroupVersion.Group, Kind: "MachinePool"},
	{Group: clusterv1.GroupVersion.Group, Kind: "MachineSet"},
	{Group: clusterv1.GroupVersion.Group, Kind: "MachineDeployment"},
	{Group: clusterv1.GroupVersion.Group, Kind: "MachineHealthCheck"},
	{Group: bootstrapv1.GroupVersion.Group, Kind: "KubeadmConfig"},
	{Group: bootstrapv1.GroupVersion.Group, Kind: "KubeadmConfigTemplate"},
}

// converters are upstream's hub-and-spoke converters, in Kinds' order.
var converters = []func(*runtime.Scheme) (conversion.Converter, error){
	coreconversion.Cluster,
	coreconversion.Machine,
	coreconversion.MachinePool,
	coreconversion.MachineSet,
	coreconversion.MachineDeployment,
	coreconversion.MachineHealthCheck,
	bootstrapconversion.KubeadmConfig,
	bootstrapconversion.KubeadmConfigTemplate,
}

// getterMu guards upstream's package-level apiVersion getter: one process
// may build several handlers (tests), and the last reader set wins, which is
// harmless because every reader sees the same CRDs of one API server.
var getterMu sync.Mutex

// Registry returns a registry holding the converters of every kind in Kinds
// and CAPAKinds. s must hold v1beta1 and v1beta2 of the core and bootstrap
// groups and of CAPAKinds.
func Registry(s *runtime.Scheme) (conversion.Registry, error) {
	r := conversion.NewRegistry()
	if err := register(s, r); err != nil {
		return nil, err
	}
	return r, nil
}

func register(s *runtime.Scheme, r conversion.Registry) error {
	for _, gk := range CAPAKinds {
		if err := r.RegisterConverter(gk, fieldwise{}); err != nil {
			return err
		}
	}
	for i, newConverter := range converters {
		c, err := newConverter(s)
		if err != nil {
			return fmt.Errorf("building the %s converter: %w", Kinds[i], err)
		}
		if err := r.RegisterConverter(Kinds[i], recording{inner: c}); err != nil {
			return err
		}
	}
	return nil
}

// SetReader sets how a v1beta2 reference's apiVersion is found when it
// converts to v1beta1, reading the API server through c: the version the
// reference had when last written in v1beta1 if the API server still serves
// it (see recording), else the referenced kind's CRD contract labels (see
// capi.APIVersion), else, for a kind no API serves, the recorded version.
// c should read CRDs from a cache (a manager's client does): each
// conversion of a Machine reads two.
func SetReader(c client.Client) { setReader(c, nil) }

func setReader(c client.Client, memo *versionMemo) {
	getterMu.Lock()
	defer getterMu.Unlock()
	coreconversion.SetAPIVersionGetter(func(ctx context.Context, gk schema.GroupKind) (string, error) {
		return apiVersion(ctx, c, memo, gk)
	})
}

// Handler returns the webhook's HTTP handler for s (see Registry), reading
// referenced kinds' versions through c.
func Handler(s *runtime.Scheme, c client.Client) (http.Handler, error) {
	return handler(s, c, nil)
}

func handler(s *runtime.Scheme, c client.Client, memo *versionMemo) (http.Handler, error) {
	r, err := Registry(s)
	if err != nil {
		return nil, err
	}
	setReader(c, memo)
	return conversion.NewWebhookHandler(s, r), nil
}

// contractTTL is how long ForConfig's webhook, whose client has no cache,
// keeps a kind's contract version before reading its CRD again. Without it
// a scale-up of 1,000 instances read CRDs 1,356 times (13% of the API
// server's requests): every Machine converted to v1beta1 read its two
// references' CRDs. A CRD's contract labels change when its provider is
// upgraded; conversions follow within this long.
const contractTTL = 10 * time.Second

// versionMemo remembers capi.APIVersion's answer per kind for ttl.
type versionMemo struct {
	ttl time.Duration
	now func() time.Time

	mu sync.Mutex
	m  map[schema.GroupKind]memoEntry
}

type memoEntry struct {
	version string
	at      time.Time
}

func newVersionMemo(ttl time.Duration) *versionMemo {
	return &versionMemo{ttl: ttl, now: time.Now, m: map[schema.GroupKind]memoEntry{}}
}

// get returns gk's apiVersion as read says, from the memo when it is
// younger than the ttl. Errors are not remembered. A nil memo always reads.
func (m *versionMemo) get(ctx context.Context, gk schema.GroupKind, read func(context.Context, schema.GroupKind) (string, error)) (string, error) {
	if m == nil {
		return read(ctx, gk)
	}
	m.mu.Lock()
	e, ok := m.m[gk]
	m.mu.Unlock()
	if ok && m.now().Sub(e.at) < m.ttl {
		return e.version, nil
	}
	v, err := read(ctx, gk)
	if err != nil {
		return v, err
	}
	m.mu.Lock()
	m.m[gk] = memoEntry{version: v, at: m.now()}
	m.mu.Unlock()
	return v, nil
}

// ForConfig returns the webhook's handler for the API server cfg reaches,
// with mpool's scheme and a client of cfg for reading CRD contract labels:
// what an embedded control plane (kubeenv.Options.Conversion) serves.
func ForConfig(cfg *rest.Config) (http.Handler, error) {
	c, err := mpoolscheme.NewClient(cfg)
	if err != nil {
		return nil, err
	}
	return handler(c.Scheme(), c, newVersionMemo(contractTTL))
}
