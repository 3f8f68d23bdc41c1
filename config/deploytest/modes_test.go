package deploytest

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/config/crd"
)

// TestModeOverlaysInstallOnlyMpoolsPart checks the overlays that deploy
// mpool beside upstream Cluster API (config/providers, config/pools): only
// mpool's infrastructure CRDs, each labelled as mpool's (never a copy of
// upstream's core or bootstrap CRDs that would replace upstream's own), the
// same RBAC and Deployment as config/default, and the manager run in the
// overlay's mode.
func TestModeOverlaysInstallOnlyMpoolsPart(t *testing.T) {
	want := 0
	for _, o := range render(t) {
		if o.GetKind() == "CustomResourceDefinition" && strings.HasSuffix(o.GetName(), ".infrastructure.cluster.x-k8s.io") {
			want++
		}
	}
	for _, mode := range []string{"providers", "pools"} {
		t.Run(mode, func(t *testing.T) {
			objs := renderDir(t, mode)
			crds, deployments := 0, 0
			for _, o := range objs {
				switch o.GetKind() {
				case "CustomResourceDefinition":
					crds++
					group, _, _ := unstructured.NestedString(o.Object, "spec", "group")
					if group != infrav1.GroupVersion.Group || o.GetLabels()[crd.ProviderLabel] != crd.InfrastructureProvider {
						t.Errorf("config/%s installs CRD %s (group %s, labels %v); want only mpool's infrastructure CRDs", mode, o.GetName(), group, o.GetLabels())
					}
				case "Deployment":
					deployments++
					cs, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
					args, _, _ := unstructured.NestedStringSlice(cs[0].(map[string]any), "args")
					if !slices.Contains(args, "--mode="+mode) {
						t.Errorf("config/%s runs the manager with %v, want --mode=%s", mode, args, mode)
					}
				}
			}
			if crds != want || deployments != 1 {
				t.Errorf("config/%s renders %d CRDs and %d Deployments, want %d and 1", mode, crds, deployments, want)
			}
		})
	}
}
