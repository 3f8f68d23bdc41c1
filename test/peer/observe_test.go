package peer

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"testing"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/sim/face/awsface"
)

// TestTokenRotationAtRest records what each system does when the
// bootstrap token in a pool's data is rotated while the pool is at rest
// (Running, no change asked): how many launch template versions it
// creates and how many instances it replaces (CAPA #2321/#2354: the token
// must reach the launch template, or a later scale-up cannot join; CAPA
// #4071/#4245: a data change that is only the token should not replace
// instances). The token's expiry is brought forward, as time would, so
// that the bootstrap provider (upstream's CABPK, mpool's own) rotates it.
// It fails only if a system does not rotate the token or the pool does not
// come back Running; what it did is logged, not judged.
func TestTokenRotationAtRest(t *testing.T) {
	for _, sys := range []*System{peerSys, mpoolSys} {
		t.Run(sys.Name, func(t *testing.T) {
			f := NewFixture(t, sys, cloud)
			logOnFailure(t, f)
			const n = 2
			f.CreatePool(n, instanceType)
			f.waitRunning(n, instanceType)
			before := instanceIDs(f)
			lt := f.launchTemplateID()
			v0 := launchTemplateVersion(t, lt)
			refreshes := ops(awsface.OpAWSStartInstanceRefresh)
			token := f.dataToken()
			f.expireSoon(token)
			testenv.Eventually(t, 3*time.Minute, func() error {
				f.poke(KubeadmConfigGVK)
				if got := f.dataToken(); got == token {
					return fmt.Errorf("the pool's data still carries token %s", token)
				}
				return nil
			})
			// The system has looked at its group twice since the data
			// changed (CAPA and mpool read it on every reconcile of the
			// pool), and the pool is Running with n instances again.
			reads := ops(awsface.OpAWSDescribeAutoScalingGroups)
			testenv.Eventually(t, 3*time.Minute, func() error {
				f.poke(AWSMachinePoolGVK)
				if got := ops(awsface.OpAWSDescribeAutoScalingGroups) - reads; got < 2 {
					return fmt.Errorf("%d reads of the group since the rotation", got)
				}
				return f.Running(n, instanceType)
			})
			replaced := 0
			for _, id := range before {
				if !slices.Contains(instanceIDs(f), id) {
					replaced++
				}
			}
			t.Logf("%s: token rotation at rest: launch template versions %d → %d, instance refreshes started %d, instances replaced %d of %d",
				sys.Name, v0, launchTemplateVersion(t, lt), ops(awsface.OpAWSStartInstanceRefresh)-refreshes, replaced, n)
			f.Delete()
			testenv.Eventually(t, converge, f.Gone)
		})
	}
}

// waitRunning waits until Running(n, instanceType) holds.
func (f *Fixture) waitRunning(n int, instanceType string) {
	f.T.Helper()
	testenv.Eventually(f.T, converge, func() error {
		if err := f.Sys.Running(); err != nil {
			f.T.Fatal(err)
		}
		return f.Running(n, instanceType)
	})
}

func instanceIDs(f *Fixture) []string {
	var ids []string
	for _, in := range f.Instances() {
		ids = append(ids, in.ID)
	}
	return ids
}

// launchTemplateID is the AWSMachinePool's status.launchTemplateID (both
// systems report it).
func (f *Fixture) launchTemplateID() string {
	f.T.Helper()
	amp := f.Get(AWSMachinePoolGVK, PoolName)
	id, _, _ := unstructured.NestedString(amp.Object, "status", "launchTemplateID")
	if id == "" {
		f.T.Fatal("the AWSMachinePool reports no launch template")
	}
	return id
}

// launchTemplateVersion is launch template id's latest version, read with
// the real SDK.
func launchTemplateVersion(t testing.TB, id string) int64 {
	t.Helper()
	c := ec2.New(ec2.Options{
		Region:       awsface.AWSDefaultRegion,
		BaseEndpoint: awssdk.String(cloud.FaceURL(awsface.AWSFaceName)),
		Credentials:  credentials.NewStaticCredentialsProvider(awsface.AWSDefaultAccessKeyID, awsface.AWSDefaultSecretAccessKey, ""),
	})
	out, err := c.DescribeLaunchTemplates(context.Background(), &ec2.DescribeLaunchTemplatesInput{LaunchTemplateIds: []string{id}})
	if err != nil || len(out.LaunchTemplates) != 1 {
		t.Fatalf("describing launch template %s: %v", id, err)
	}
	return awssdk.ToInt64(out.LaunchTemplates[0].LatestVersionNumber)
}

// bootstrapToken is a kubeadm bootstrap token as join data carries it.
var bootstrapToken = regexp.MustCompile(`\b([a-z0-9]{6})\.[a-z0-9]{16}\b`)

// dataToken returns the ID of the bootstrap token the pool's bootstrap
// data carries.
func (f *Fixture) dataToken() string {
	f.T.Helper()
	mp := f.Get(MachinePoolGVK, PoolName)
	name, _, _ := unstructured.NestedString(mp.Object, "spec", "template", "spec", "bootstrap", "dataSecretName")
	s := &corev1.Secret{}
	if err := f.Env.Client.Get(f.Ctx, types.NamespacedName{Namespace: f.NS, Name: name}, s); err != nil {
		f.T.Fatalf("reading the pool's data Secret %q: %v", name, err)
	}
	m := bootstrapToken.FindSubmatch(s.Data["value"])
	if m == nil {
		f.T.Fatalf("the pool's data Secret %s carries no bootstrap token", name)
	}
	return string(m[1])
}

// expireSoon brings the expiry of token id forward to a minute from now,
// less than half of any bootstrap provider's TTL (both rotate a pool's
// token at rest once less than that is left).
func (f *Fixture) expireSoon(id string) {
	f.T.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceSystem, Name: "bootstrap-token-" + id}}
	patch := mustJSON(map[string]any{"stringData": map[string]any{"expiration": time.Now().Add(time.Minute).UTC().Format(time.RFC3339)}})
	if err := f.Env.Client.Patch(f.Ctx, s, client.RawPatch(types.MergePatchType, patch)); err != nil {
		f.T.Fatalf("bringing token %s's expiry forward: %v", id, err)
	}
}

// poke annotates the pool's object of kind gvk, so that its controllers
// reconcile it now rather than at their next resync; at most every two
// seconds.
func (f *Fixture) poke(gvk schema.GroupVersionKind) {
	f.T.Helper()
	if time.Since(f.poked) < 2*time.Second {
		return
	}
	f.poked = time.Now()
	f.Patch(gvk, PoolName, map[string]any{"metadata": map[string]any{"annotations": map[string]any{"test.mpool.dev/poke": time.Now().Format(time.RFC3339Nano)}}})
}
