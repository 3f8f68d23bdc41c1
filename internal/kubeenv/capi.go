package kubeenv

import (
	"context"
	"embed"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/mpool-dev/mpool/config/crd"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// UpstreamCAPIVersion is the Cluster API release whose own managers (core
// and the kubeadm bootstrap provider) the interop tests run beside mpool.
// It is the release of the API module mpool builds on.
const UpstreamCAPIVersion = "v1.14.2"

// capitool is the small Go module that builds upstream Cluster API's core
// manager and kubeadm bootstrap manager (see clusterctltool for the .txt
// suffixes).
//
//go:embed capitool
var capitool embed.FS

const capiModule = "sigs.k8s.io/cluster-api"

// capiBuild builds the two managers, stamped with their version as
// upstream's release build does, and copies their CRDs and webhook
// manifests from the module beside them.
var capiBuild = toolBuild{
	fsys:     capitool,
	module:   "capitool",
	name:     "cluster-api-" + UpstreamCAPIVersion,
	what:     "Cluster API " + UpstreamCAPIVersion + " core and kubeadm bootstrap managers",
	estimate: "5 to 15 minutes on 2 cores",
	goflags:  "-mod=readonly -buildvcs=false",
	pkgs:     []string{capiModule + "/core", capiModule + "/bootstrap/kubeadm"},
	ldflags:  versionLDFlags(capiModule+"/version", UpstreamCAPIVersion),
	files: map[string][]string{capiModule: {
		"core/config/crd/bases", "core/config/webhook",
		"bootstrap/kubeadm/config/crd/bases", "bootstrap/kubeadm/config/webhook",
	}},
}

// UpstreamCAPI is a cached build of upstream Cluster API's managers with
// the manifests of the same release.
type UpstreamCAPI struct {
	// Core and Kubeadm are the paths of the core manager and the kubeadm
	// bootstrap manager.
	Core, Kubeadm string
	dir           string
}

// UpstreamComponent is one of upstream's managers: "core" or "kubeadm".
type UpstreamComponent string

// The two upstream managers.
const (
	UpstreamCore    UpstreamComponent = "core"
	UpstreamKubeadm UpstreamComponent = "kubeadm"
)

func (u UpstreamCAPI) configDir(c UpstreamComponent) string {
	if c == UpstreamKubeadm {
		return filepath.Join(u.dir, "cluster-api", "bootstrap", "kubeadm", "config")
	}
	return filepath.Join(u.dir, "cluster-api", "core", "config")
}

// CRDs returns the CRDs of component c as upstream's release ships them
// (without the conversion webhook its kustomization adds).
func (u UpstreamCAPI) CRDs(c UpstreamComponent) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	return readCRDs(filepath.Join(u.configDir(c), "crd", "bases"))
}

// Webhooks returns the mutating and validating webhook configurations of
// component c as upstream's config/webhook/manifests.yaml declares them
// (pointing at upstream's webhook Service).
func (u UpstreamCAPI) Webhooks(c UpstreamComponent) ([]*admissionregistrationv1.MutatingWebhookConfiguration, []*admissionregistrationv1.ValidatingWebhookConfiguration, error) {
	return readWebhooks(filepath.Join(u.configDir(c), "webhook", "manifests.yaml"))
}

// readCRDs decodes the CRDs of an upstream release's crd/bases directory.
func readCRDs(dir string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("reading upstream's CRDs: %w", err)
	}
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".yaml") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.Unmarshal(b, crd); err != nil {
			return nil, fmt.Errorf("decoding upstream CRD %s: %w", e.Name(), err)
		}
		out = append(out, crd)
	}
	return out, nil
}

// readWebhooks decodes the webhook configurations of an upstream release's
// config/webhook/manifests.yaml.
func readWebhooks(file string) ([]*admissionregistrationv1.MutatingWebhookConfiguration, []*admissionregistrationv1.ValidatingWebhookConfiguration, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, nil, fmt.Errorf("reading upstream's webhook manifests: %w", err)
	}
	var muts []*admissionregistrationv1.MutatingWebhookConfiguration
	var vals []*admissionregistrationv1.ValidatingWebhookConfiguration
	err = crd.Documents(b, func(kind string, doc []byte) error {
		switch kind {
		case "MutatingWebhookConfiguration":
			m := &admissionregistrationv1.MutatingWebhookConfiguration{}
			if err := yaml.Unmarshal(doc, m); err != nil {
				return err
			}
			muts = append(muts, m)
		case "ValidatingWebhookConfiguration":
			v := &admissionregistrationv1.ValidatingWebhookConfiguration{}
			if err := yaml.Unmarshal(doc, v); err != nil {
				return err
			}
			vals = append(vals, v)
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("decoding upstream's webhook manifests: %w", err)
	}
	return muts, vals, nil
}

// EnsureUpstreamCAPI returns a cached build of upstream Cluster API
// UpstreamCAPIVersion's core and kubeadm bootstrap managers, building them
// from source through the Go module proxy first if this cache has none for
// the pinned version and toolchain (minutes on a cold Go build cache;
// progress lines go to progress). Concurrent callers (other processes
// included) wait for one build.
func EnsureUpstreamCAPI(ctx context.Context, progress io.Writer) (UpstreamCAPI, error) {
	dir, err := capiBuild.ensure(ctx, progress)
	if err != nil {
		return UpstreamCAPI{}, err
	}
	return UpstreamCAPI{Core: filepath.Join(dir, "core"), Kubeadm: filepath.Join(dir, "kubeadm"), dir: dir}, nil
}
