package manager_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/config/crd"
	"github.com/mpool-dev/mpool/internal/admission/flexibleversion"
	"github.com/mpool-dev/mpool/internal/conversion"
	"github.com/mpool-dev/mpool/internal/manager"
	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/internal/webhookcert"
)

var env *testenv.Env

func TestMain(m *testing.M) { os.Exit(testenv.Run(m, &env)) }

// TestConversionWebhookSelfManaged runs the manager as deployed
// (ConversionWebhook, self-managed certificates) and checks that it created
// its Secret, pointed the converted CRDs' caBundle at it, and converts a
// ConversionReview over TLS that a client trusting only that bundle accepts.
func TestConversionWebhookSelfManaged(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	ns := env.NewNamespace(t)
	s := runtime.NewScheme()
	if err := errors.Join(corev1.AddToScheme(s), apiextensionsv1.AddToScheme(s), admissionregistrationv1.AddToScheme(s)); err != nil {
		t.Fatal(err)
	}
	kc, err := client.New(env.Config, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	crds, err := crd.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	// Restore the embedded control plane's caBundle (its loopback webhook
	// converts for the rest of the package) once the manager is gone.
	saved := map[string][]byte{}
	for _, c := range crds {
		if crd.Converted(c) {
			live := &apiextensionsv1.CustomResourceDefinition{}
			if err := kc.Get(ctx, client.ObjectKey{Name: c.Name}, live); err != nil {
				t.Fatal(err)
			}
			saved[c.Name] = live.Spec.Conversion.Webhook.ClientConfig.CABundle
		}
	}
	// The embedded control plane's validating webhook configuration, whose
	// caBundle the manager sets too: restored with the CRDs'.
	vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	if err := kc.Get(ctx, client.ObjectKey{Name: flexibleversion.Name}, vwc); err != nil {
		t.Fatal(err)
	}
	savedVWC := vwc.DeepCopy()
	done := make(chan error, 1)
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
		live := &admissionregistrationv1.ValidatingWebhookConfiguration{}
		if err := kc.Get(context.Background(), client.ObjectKey{Name: flexibleversion.Name}, live); err != nil {
			t.Error(err)
		} else {
			live.Webhooks = savedVWC.Webhooks
			if err := kc.Update(context.Background(), live); err != nil {
				t.Error(err)
			}
		}
		for n, b := range saved {
			live := &apiextensionsv1.CustomResourceDefinition{}
			if err := kc.Get(context.Background(), client.ObjectKey{Name: n}, live); err != nil {
				t.Error(err)
				continue
			}
			base := live.DeepCopy()
			live.Spec.Conversion.Webhook.ClientConfig.CABundle = b
			if err := kc.Patch(context.Background(), live, client.MergeFrom(base)); err != nil {
				t.Error(err)
			}
		}
	})

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	_ = ln.Close()
	opts := manager.DefaultOptions()
	opts.MetricsBindAddress, opts.HealthProbeBindAddress = "0", "0"
	opts.CacheNamespaces = []string{ns}
	opts.SkipNameValidation = true
	opts.ConversionWebhook = true
	opts.WebhookPort = port
	opts.WebhookNamespace = ns
	mgr, err := manager.New(ctx, env.Config, opts)
	if err != nil {
		done <- nil
		t.Fatal(err)
	}
	go func() { done <- mgr.Start(ctx) }()

	// New already ensured the Secret (the webhook server needs the files).
	sec := &corev1.Secret{}
	if err := kc.Get(ctx, client.ObjectKey{Namespace: ns, Name: opts.WebhookSecretName}, sec); err != nil {
		t.Fatal(err)
	}
	bundle := sec.Data[webhookcert.KeyCABundle]
	testenv.Eventually(t, 30*time.Second, func() error {
		for n := range saved {
			live := &apiextensionsv1.CustomResourceDefinition{}
			if err := kc.Get(ctx, client.ObjectKey{Name: n}, live); err != nil {
				return err
			}
			if !bytes.Equal(live.Spec.Conversion.Webhook.ClientConfig.CABundle, bundle) {
				return fmt.Errorf("CRD %s caBundle not patched yet", n)
			}
		}
		live := &admissionregistrationv1.ValidatingWebhookConfiguration{}
		if err := kc.Get(ctx, client.ObjectKey{Name: flexibleversion.Name}, live); err != nil {
			return err
		}
		for _, w := range live.Webhooks {
			if !bytes.Equal(w.ClientConfig.CABundle, bundle) {
				return fmt.Errorf("validating webhook %s caBundle not patched yet", w.Name)
			}
		}
		return nil
	})

	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(bundle) {
		t.Fatal("empty bundle")
	}
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
		RootCAs: roots, ServerName: opts.WebhookServiceName + "." + ns + ".svc", MinVersion: tls.VersionTLS12}}}
	review := `{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","request":{"uid":"u1",
"desiredAPIVersion":"cluster.x-k8s.io/v1beta2","objects":[{"apiVersion":"cluster.x-k8s.io/v1beta1","kind":"Cluster",
"metadata":{"name":"c","namespace":"` + ns + `"},"spec":{"paused":true}}]}}`
	// post sends a review to path on the manager's webhook server and
	// decodes the answer into out.
	post := func(path, review string, out any) error {
		resp, err := hc.Post(fmt.Sprintf("https://127.0.0.1:%d%s", port, path), "application/json", strings.NewReader(review))
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("status %s", resp.Status)
		}
		return json.NewDecoder(resp.Body).Decode(out)
	}
	var out apiextensionsv1.ConversionReview
	testenv.Eventually(t, 30*time.Second, func() error { return post(conversion.Path, review, &out) })
	if out.Response == nil || out.Response.Result.Status != "Success" || len(out.Response.ConvertedObjects) != 1 {
		t.Fatalf("conversion response = %+v", out.Response)
	}
	if got := string(out.Response.ConvertedObjects[0].Raw); !strings.Contains(got, `"apiVersion":"cluster.x-k8s.io/v1beta2"`) {
		t.Errorf("converted object = %s", got)
	}

	// The same server judges a Flexible AzureMachinePool's MachinePool: one
	// below v1.26 over it is refused, reading the AzureMachinePool from the
	// manager's cache.
	amp := &infrav1.AzureMachinePool{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "flex"},
		Spec:       infrav1.AzureMachinePoolSpec{Location: "westus2", OrchestrationMode: infrav1.FlexibleOrchestrationMode},
	}
	amp.Spec.Template.VMSize = "Standard_D2s_v3"
	amp.Spec.Template.OSDisk.OSType, amp.Spec.Template.OSDisk.DiskSizeGB = "Linux", ptr.To[int32](30)
	if err := env.Client.Create(ctx, amp); err != nil {
		t.Fatal(err)
	}
	admissionReview := `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u2","operation":"CREATE",
"kind":{"group":"cluster.x-k8s.io","version":"v1beta2","kind":"MachinePool"},"resource":{"group":"cluster.x-k8s.io","version":"v1beta2","resource":"machinepools"},
"namespace":"` + ns + `","name":"mp","object":{"apiVersion":"cluster.x-k8s.io/v1beta2","kind":"MachinePool","metadata":{"name":"mp","namespace":"` + ns + `"},
"spec":{"clusterName":"c","template":{"spec":{"clusterName":"c","version":"v1.25.0","bootstrap":{"dataSecretName":""},
"infrastructureRef":{"apiGroup":"infrastructure.cluster.x-k8s.io","kind":"AzureMachinePool","name":"flex"}}}}}}}`
	var verdict admissionv1.AdmissionReview
	testenv.Eventually(t, 30*time.Second, func() error {
		verdict = admissionv1.AdmissionReview{}
		if err := post(flexibleversion.Path, admissionReview, &verdict); err != nil {
			return err
		}
		if verdict.Response == nil || verdict.Response.Allowed {
			return fmt.Errorf("admission response %+v, want refused (the cache may not have the AzureMachinePool yet)", verdict.Response)
		}
		return nil
	})
	if msg := verdict.Response.Result.Message; !strings.Contains(msg, "is below v1.26, which AzureMachinePool flex needs for orchestrationMode Flexible") {
		t.Errorf("refusal %q", msg)
	}
}
