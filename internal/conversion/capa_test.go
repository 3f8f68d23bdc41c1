package conversion_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	capaexpinfrav1 "sigs.k8s.io/cluster-api-provider-aws/v2/exp/api/v1beta2"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/conversion"
)

// capaTemplate returns the documents of kinds in one of CAPA's own flavor
// templates (from the pinned sigs.k8s.io/cluster-api-provider-aws/v2
// module), with its ${VARIABLES} set.
func capaTemplate(t *testing.T, name string, kinds ...string) []*unstructured.Unstructured {
	t.Helper()
	dir, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/cluster-api-provider-aws/v2").Output()
	if err != nil {
		t.Fatalf("locating the CAPA module: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(dir)), "templates", name))
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{
		"CLUSTER_NAME": "capa", "AWS_REGION": "us-east-1", "AWS_SSH_KEY_NAME": "default",
		"AWS_NODE_MACHINE_TYPE": "t3.large", "AWS_AVAILABILITY_ZONE": "us-east-1a",
		"KUBERNETES_VERSION": "v1.32.1", "WORKER_MACHINE_COUNT": "2",
	}
	text := regexp.MustCompile(`\$\{([A-Z_]+)(:-[^}]*)?\}`).ReplaceAllStringFunc(string(b), func(m string) string {
		name := regexp.MustCompile(`[A-Z_]+`).FindString(m)
		if v, ok := vars[name]; ok {
			return v
		}
		return m
	})
	var out []*unstructured.Unstructured
	for _, doc := range strings.Split(text, "\n---\n") {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil || u.Object == nil {
			continue
		}
		for _, k := range kinds {
			if u.GetKind() == k {
				out = append(out, u)
			}
		}
	}
	if len(out) != len(kinds) {
		t.Fatalf("%s holds %d of the kinds %v", name, len(out), kinds)
	}
	return out
}

// contains reports where got lacks or changes what want has.
func contains(want, got any, path string) []string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{path + ": missing"}
		}
		var out []string
		for k, v := range w {
			out = append(out, contains(v, g[k], path+"."+k)...)
		}
		return out
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return []string{path + ": changed"}
		}
		var out []string
		for i := range w {
			out = append(out, contains(w[i], g[i], path+"[]")...)
		}
		return out
	}
	if fmt.Sprint(want) != fmt.Sprint(got) { // YAML's float64 10 is the API server's int64 10
		return []string{path + ": changed"}
	}
	return nil
}

// TestCAPATemplatesApply writes the AWS objects of CAPA's own machinepool
// and EKS managed machine pool templates unchanged, in CAPA's v1beta2, and
// reads them back in v1beta2 (nothing pruned or changed) and in mpool's
// v1beta1 (what its controllers read).
func TestCAPATemplatesApply(t *testing.T) {
	ctx := context.Background()
	objs := append(capaTemplate(t, "cluster-template-machinepool.yaml", "AWSCluster", "AWSMachinePool"),
		capaTemplate(t, "cluster-template-eks-managedmachinepool.yaml", "AWSManagedMachinePool")...)
	ns := env.NewNamespace(t)
	for _, in := range objs {
		in.SetNamespace(ns)
		want := in.DeepCopy()
		if err := env.Client.Create(ctx, in); err != nil {
			t.Fatalf("creating CAPA's %s %s: %v", in.GetKind(), in.GetName(), err)
		}
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(want.GroupVersionKind())
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(in), got); err != nil {
			t.Fatal(err)
		}
		if d := contains(want.Object["spec"], got.Object["spec"], "spec"); len(d) > 0 {
			t.Errorf("%s %s reads back in v1beta2 without: %v", in.GetKind(), in.GetName(), d)
		}
	}
	mp := &infrav1.AWSMachinePool{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "capa-mp-0"}, mp); err != nil {
		t.Fatal(err)
	}
	if mp.Spec.AWSLaunchTemplate.InstanceType != "t3.large" || mp.Spec.MaxSize != 10 || mp.Spec.MinSize != 1 ||
		!cmp.Equal(mp.Spec.AvailabilityZones, []string{"us-east-1a"}) {
		t.Errorf("CAPA's AWSMachinePool reads in v1beta1 as %+v", mp.Spec)
	}
	// Unset in v1beta2 (CAPA's webhook would default it), so mpool's default.
	if mp.Spec.DefaultCoolDown.Duration != 300*time.Second || mp.Spec.DefaultInstanceWarmup.Duration != 300*time.Second {
		t.Errorf("CAPA's AWSMachinePool reads in v1beta1 with defaultCoolDown %v, defaultInstanceWarmup %v, want 5m0s",
			mp.Spec.DefaultCoolDown.Duration, mp.Spec.DefaultInstanceWarmup.Duration)
	}
	mmp := &infrav1.AWSManagedMachinePool{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "capa-pool-0"}, mmp); err != nil {
		t.Fatal(err)
	}
	if ptr.Deref(mmp.Spec.AMIType, "") != "AL2023_x86_64_STANDARD" {
		t.Errorf("CAPA's AWSManagedMachinePool reads in v1beta1 with amiType %v", mmp.Spec.AMIType)
	}
}

// TestFieldsOfOneVersionSurviveTheOther writes a field only CAPA's v1beta2
// has (spec.ignition) and one only mpool's v1beta1 has
// (additionalSecurityGroups[].arn), changes the object in the other version,
// and reads each back in its own.
func TestFieldsOfOneVersionSurviveTheOther(t *testing.T) {
	ctx := context.Background()
	ns := createYAML(t, `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: AWSMachinePool
metadata:
  name: pool
spec:
  minSize: 1
  maxSize: 3
  awsLaunchTemplate:
    instanceType: t3.large
    marketType: OnDemand
  ignition:
    version: "3.4"
    storageType: UnencryptedUserData
`)
	key := client.ObjectKey{Namespace: ns, Name: "pool"}
	mine := &infrav1.AWSMachinePool{}
	if err := env.Client.Get(ctx, key, mine); err != nil {
		t.Fatal(err)
	}
	if _, ok := mine.Annotations[conversion.UnconvertedAnnotation]; !ok {
		t.Fatalf("the v1beta1 view keeps nothing of spec.ignition: annotations %v", mine.Annotations)
	}
	mine.Spec.MaxSize = 5
	mine.Spec.AWSLaunchTemplate.AdditionalSecurityGroups = []infrav1.AWSResourceReference{{ARN: ptr.To("arn:aws:ec2:us-east-1:123456789012:security-group/sg-1")}}
	if err := env.Client.Update(ctx, mine); err != nil {
		t.Fatalf("updating in v1beta1: %v", err)
	}

	theirs := &capaexpinfrav1.AWSMachinePool{}
	if err := env.Client.Get(ctx, key, theirs); err != nil {
		t.Fatal(err)
	}
	if theirs.Spec.MaxSize != 5 || theirs.Spec.Ignition == nil || theirs.Spec.Ignition.Version != "3.4" ||
		theirs.Spec.AWSLaunchTemplate.MarketType != "OnDemand" {
		t.Fatalf("v1beta2 after a v1beta1 update: maxSize %d, ignition %+v, marketType %q", theirs.Spec.MaxSize, theirs.Spec.Ignition, theirs.Spec.AWSLaunchTemplate.MarketType)
	}
	theirs.Spec.MinSize = 2
	if err := env.Client.Update(ctx, theirs); err != nil {
		t.Fatalf("updating in v1beta2: %v", err)
	}
	if err := env.Client.Get(ctx, key, mine); err != nil {
		t.Fatal(err)
	}
	if mine.Spec.MinSize != 2 || len(mine.Spec.AWSLaunchTemplate.AdditionalSecurityGroups) != 1 ||
		ptr.Deref(mine.Spec.AWSLaunchTemplate.AdditionalSecurityGroups[0].ARN, "") == "" {
		t.Fatalf("v1beta1 after a v1beta2 update: minSize %d, additionalSecurityGroups %+v", mine.Spec.MinSize, mine.Spec.AWSLaunchTemplate.AdditionalSecurityGroups)
	}
}
