package kubeenv

import (
	"context"
	"embed"
	"io"
	"path/filepath"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// UpstreamCAPAVersion is the Cluster API Provider AWS (CAPA) release whose
// unmodified manager the peer tests run against the simulated AWS. It pins
// Cluster API v1.13.4 in its own go.mod; it runs beside upstream Cluster
// API UpstreamCAPIVersion's managers, as a management cluster mixing
// providers' releases does.
const UpstreamCAPAVersion = "v2.13.0"

// capatool is the small Go module that builds CAPA's manager (see
// clusterctltool for the .txt suffixes).
//
//go:embed capatool
var capatool embed.FS

const capaModule = "sigs.k8s.io/cluster-api-provider-aws/v2"

// capaBuild builds CAPA's manager (its main package, the module's root),
// stamped with its version as CAPA's release build does, and copies its
// CRDs and webhook manifests from the module beside it.
var capaBuild = toolBuild{
	fsys:     capatool,
	module:   "capatool",
	name:     "cluster-api-provider-aws-" + UpstreamCAPAVersion,
	what:     "Cluster API Provider AWS " + UpstreamCAPAVersion + " manager",
	estimate: "10 to 25 minutes on 2 cores",
	goflags:  "-mod=readonly -buildvcs=false",
	pkgs:     []string{capaModule},
	ldflags:  versionLDFlags(capaModule+"/version", UpstreamCAPAVersion),
	files:    map[string][]string{capaModule: {"config/crd/bases", "config/webhook"}},
}

// UpstreamCAPA is a cached build of CAPA's manager with the manifests of
// the same release.
type UpstreamCAPA struct {
	// Manager is the path of CAPA's manager.
	Manager string
	dir     string
}

// configDir is where the release's config/ was copied (toolBuild.files
// names it after the module path's last element, v2).
func (u UpstreamCAPA) configDir() string { return filepath.Join(u.dir, "v2", "config") }

// CRDs returns CAPA's CRDs as its release ships them (without the
// conversion webhook its kustomization adds).
func (u UpstreamCAPA) CRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	return readCRDs(filepath.Join(u.configDir(), "crd", "bases"))
}

// Webhooks returns CAPA's mutating and validating webhook configurations
// as its config/webhook/manifests.yaml declares them (pointing at its
// webhook Service).
func (u UpstreamCAPA) Webhooks() ([]*admissionregistrationv1.MutatingWebhookConfiguration, []*admissionregistrationv1.ValidatingWebhookConfiguration, error) {
	return readWebhooks(filepath.Join(u.configDir(), "webhook", "manifests.yaml"))
}

// EnsureUpstreamCAPA returns a cached build of CAPA UpstreamCAPAVersion's
// manager, building it from source through the Go module proxy first if
// this cache has none for the pinned version and toolchain (many minutes
// on a cold Go build cache; progress lines go to progress). Concurrent
// callers (other processes included) wait for one build.
func EnsureUpstreamCAPA(ctx context.Context, progress io.Writer) (UpstreamCAPA, error) {
	dir, err := capaBuild.ensure(ctx, progress)
	if err != nil {
		return UpstreamCAPA{}, err
	}
	return UpstreamCAPA{Manager: filepath.Join(dir, "cluster-api-provider-aws"), dir: dir}, nil
}
