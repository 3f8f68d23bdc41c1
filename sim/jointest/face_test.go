package jointest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/sim/core"
)

// acmeFace is a toy face whose instances have names, providerIDs and
// metadata of their own; its HTTP API is not needed here.
type acmeFace struct{}

func (acmeFace) Name() string { return "acme" }

func (acmeFace) Handler(core.FaceEnv) http.Handler { return http.NotFoundHandler() }

func (acmeFace) InstanceIdentity(in core.NewInstance) core.InstanceIdentity {
	id := fmt.Sprintf("a-%012x", in.Seq)
	return core.InstanceIdentity{
		ID:         id,
		ProviderID: "acme://" + in.Group.Scope + "/" + id,
		Hostname:   fmt.Sprintf("ip-10-9-%d-%d.acme.internal", (in.Seq>>8)&0xff, in.Seq&0xff),
		Metadata:   map[string]string{core.MetaRegion: "moon-1"},
	}
}

func (acmeFace) WriteFault(w http.ResponseWriter, _ *http.Request, f core.Fault) {
	w.WriteHeader(f.Status)
	_ = json.NewEncoder(w).Encode(map[string]string{"__type": "Throttling"})
}

// TestSecondFaceInstancesJoin: a face's instances join with the providerID
// and host name it chose; the seeds' node name
// {{ ds.meta_data["local_hostname"] }} is the face's host name.
func TestSecondFaceInstancesJoin(t *testing.T) {
	ctx := context.Background()
	cs := clientset(t)
	opts := cloudOptions(t)
	opts.Faces = []core.Face{acmeFace{}}
	srv := startCloudWith(t, opts)

	token := createToken(t, time.Now().Add(time.Hour))
	scope := srv.Cloud().Scope("acme", "111")
	if _, err := scope.ApplyGroup("web", core.GroupSpec{
		Capacity: 2,
		Model:    core.Model{Zones: []string{"moon-1a"}, CustomData: cloudInit("kubeadm.k8s.io/v1beta4", token, caHash(t))},
	}); err != nil {
		t.Fatalf("ApplyGroup: %v", err)
	}
	g := waitJoin(t, core.JoinJoined, func() (*core.Group, error) { return scope.GetGroup("web") })
	for _, in := range g.Instances {
		if in.NodeName != in.Hostname {
			t.Errorf("instance %s joined as %q, want its host name %q", in.ID, in.NodeName, in.Hostname)
		}
		n, err := cs.CoreV1().Nodes().Get(ctx, in.Hostname, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("node of instance %s: %v", in.ID, err)
		}
		if want := "acme://111/" + in.ID; n.Spec.ProviderID != want || n.Labels[corev1.LabelHostname] != in.Hostname || n.Labels[corev1.LabelTopologyZone] != "moon-1a" {
			t.Errorf("node %s: providerID %q labels %v; want %s", n.Name, n.Spec.ProviderID, n.Labels, want)
		}
		if nodeReady(n) != corev1.ConditionTrue {
			t.Errorf("node %s is not Ready", n.Name)
		}
	}

	// Powering the face's instances off reaches their Nodes too.
	if _, err := scope.DeleteGroup("web"); err != nil {
		t.Fatal(err)
	}
	for _, in := range g.Instances {
		testenv.Eventually(t, 30*time.Second, func() error {
			n, err := cs.CoreV1().Nodes().Get(ctx, in.Hostname, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if nodeReady(n) == corev1.ConditionTrue {
				return fmt.Errorf("node %s is still Ready", n.Name)
			}
			return nil
		})
		_ = cs.CoreV1().Nodes().Delete(ctx, in.Hostname, metav1.DeleteOptions{})
	}
}
