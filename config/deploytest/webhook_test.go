package deploytest

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/spf13/pflag"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/mpool-dev/mpool/config/crd"
	"github.com/mpool-dev/mpool/internal/admission/flexibleversion"
	"github.com/mpool-dev/mpool/internal/conversion"
	"github.com/mpool-dev/mpool/internal/manager"
	"github.com/mpool-dev/mpool/internal/webhookcert"
)

// checkValidatingWebhook: the rendered ValidatingWebhookConfiguration is
// flexibleversion.WebhookConfiguration, pointed at the manager's webhook
// Service at flexibleversion.Path, with no caBundle (the leader sets it).
func checkValidatingWebhook(t *testing.T, o *unstructured.Unstructured) {
	t.Helper()
	var got admissionregistrationv1.ValidatingWebhookConfiguration
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &got); err != nil {
		t.Fatal(err)
	}
	want := flexibleversion.WebhookConfiguration(admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{
		Namespace: manager.DefaultWebhookNamespace, Name: manager.DefaultWebhookServiceName, Path: ptr.To(flexibleversion.Path), Port: ptr.To[int32](443)}})
	if got.Name != want.Name {
		t.Errorf("ValidatingWebhookConfiguration is named %s, want %s (the name the manager patches)", got.Name, want.Name)
	}
	if !equality.Semantic.DeepEqual(got.Webhooks, want.Webhooks) {
		gy, _ := yaml.Marshal(got.Webhooks)
		wy, _ := yaml.Marshal(want.Webhooks)
		t.Errorf("config/manager's validating webhooks differ from flexibleversion.WebhookConfiguration's:\n%s\nwant:\n%s", gy, wy)
	}
}

// checkCRDConversion: a CRD that serves two versions converts through the
// manager's webhook Service at conversion.Path, with no caBundle in the
// manifest (the manager's leader sets it; re-applying must not reset it);
// any other CRD converts through nothing.
func checkCRDConversion(t *testing.T, o *unstructured.Unstructured) {
	t.Helper()
	var c apiextensionsv1.CustomResourceDefinition
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &c); err != nil {
		t.Fatal(err)
	}
	conv := c.Spec.Conversion
	if !crd.Converted(&c) {
		if conv != nil && conv.Strategy != apiextensionsv1.NoneConverter {
			t.Errorf("CRD %s serves one version but converts through %s", c.Name, conv.Strategy)
		}
		return
	}
	if conv == nil || conv.Strategy != apiextensionsv1.WebhookConverter || conv.Webhook == nil || conv.Webhook.ClientConfig == nil {
		t.Errorf("CRD %s serves %d versions but has no conversion webhook: %+v", c.Name, len(c.Spec.Versions), conv)
		return
	}
	cc := conv.Webhook.ClientConfig
	svc := cc.Service
	if svc == nil || svc.Name != manager.DefaultWebhookServiceName || svc.Namespace != manager.DefaultWebhookNamespace ||
		svc.Path == nil || *svc.Path != conversion.Path || svc.Port == nil || *svc.Port != 443 {
		t.Errorf("CRD %s conversion clientConfig = %+v, want Service %s/%s port 443 path %s", c.Name, svc,
			manager.DefaultWebhookNamespace, manager.DefaultWebhookServiceName, conversion.Path)
	}
	if cc.URL != nil || len(cc.CABundle) != 0 {
		t.Errorf("CRD %s conversion clientConfig sets a URL or caBundle", c.Name)
	}
	if !slices.Equal(conv.Webhook.ConversionReviewVersions, []string{"v1"}) {
		t.Errorf("CRD %s conversionReviewVersions = %v", c.Name, conv.Webhook.ConversionReviewVersions)
	}
}

// checkWebhookService: the webhook Service is the one the CRDs and the
// manager's certificate name, port 443 to the pods' webhook port.
func checkWebhookService(t *testing.T, o *unstructured.Unstructured) {
	t.Helper()
	var s corev1.Service
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &s); err != nil {
		t.Fatal(err)
	}
	if s.Name != manager.DefaultWebhookServiceName || s.Namespace != manager.DefaultWebhookNamespace {
		t.Errorf("Service %s/%s, want %s/%s", s.Namespace, s.Name, manager.DefaultWebhookNamespace, manager.DefaultWebhookServiceName)
	}
	if len(s.Spec.Ports) != 1 || s.Spec.Ports[0].Port != 443 || s.Spec.Ports[0].TargetPort.String() != "webhook" {
		t.Errorf("Service ports = %+v, want 443 to the pods' webhook port", s.Spec.Ports)
	}
	if s.Spec.Selector["control-plane"] != "mpool-manager" || len(s.Spec.Selector) != 1 {
		t.Errorf("Service selector = %v", s.Spec.Selector)
	}
}

// checkWebhookDeployment: the manager's arguments turn the conversion webhook
// on, self-managed, on the port the container names "webhook", and the pod
// selected by the Service has somewhere writable for the certificate files.
func checkWebhookDeployment(t *testing.T, d *appsv1.Deployment) {
	t.Helper()
	c := d.Spec.Template.Spec.Containers[0]
	opts := manager.DefaultOptions()
	fs := pflag.NewFlagSet("manager", pflag.ContinueOnError)
	fs.ParseErrorsAllowlist.UnknownFlags = true
	opts.AddWebhookFlags(fs)
	if err := fs.Parse(c.Args); err != nil {
		t.Fatalf("parsing the manager's args %v: %v", c.Args, err)
	}
	if !opts.ConversionWebhook || opts.WebhookCertDir != "" {
		t.Errorf("manager args %v: conversion webhook on=%v, certificate dir %q; want on, self-managed", c.Args, opts.ConversionWebhook, opts.WebhookCertDir)
	}
	port := -1
	for _, p := range c.Ports {
		if p.Name == "webhook" {
			port = int(p.ContainerPort)
		}
	}
	if port != opts.WebhookPort {
		t.Errorf("container port webhook = %d, manager serves on %d", port, opts.WebhookPort)
	}
	if d.Spec.Template.Labels["control-plane"] != "mpool-manager" {
		t.Errorf("pod labels %v are not what the webhook Service selects", d.Spec.Template.Labels)
	}
	tmp := false
	for _, m := range c.VolumeMounts {
		tmp = tmp || (m.MountPath == "/tmp" && !m.ReadOnly)
	}
	if c.SecurityContext != nil && c.SecurityContext.ReadOnlyRootFilesystem != nil && *c.SecurityContext.ReadOnlyRootFilesystem && !tmp {
		t.Error("read-only root filesystem and no writable /tmp: the certificate files cannot be written")
	}
	env := map[string]bool{}
	for _, e := range c.Env {
		env[e.Name] = e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.namespace"
	}
	if !env["POD_NAMESPACE"] {
		t.Error("POD_NAMESPACE (the webhook Secret's namespace) is not the pod's namespace")
	}
}

// TestManagerCertificatesAsItsServiceAccount applies config/default and does,
// as the manager's ServiceAccount, what a replica and the leader do with the
// webhook's certificates: create the Secret, rotate it (update), and patch
// the applied CRDs' caBundle. RBAC that falls short fails here.
func TestManagerCertificatesAsItsServiceAccount(t *testing.T) {
	ctx := context.Background()
	applyDefault(t)
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{
		UserName: "system:serviceaccount:mpool-system:mpool-manager",
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:mpool-system", "system:authenticated"},
	}
	m, err := webhookcert.New(cfg, webhookcert.Options{
		Namespace:   manager.DefaultWebhookNamespace,
		SecretName:  manager.DefaultWebhookSecretName,
		ServiceName: manager.DefaultWebhookServiceName,
		Dir:         t.TempDir(),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Ensure(ctx); err != nil {
		t.Fatalf("ensuring the Secret as the manager: %v", err)
	}
	if err := m.PatchCRDs(ctx); err != nil {
		t.Fatalf("patching the CRDs as the manager: %v", err)
	}

	s := runtime.NewScheme()
	if err := errors.Join(corev1.AddToScheme(s), apiextensionsv1.AddToScheme(s)); err != nil {
		t.Fatal(err)
	}
	admin, err := client.New(env.Config, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	sec := &corev1.Secret{}
	if err := admin.Get(ctx, client.ObjectKey{Namespace: manager.DefaultWebhookNamespace, Name: manager.DefaultWebhookSecretName}, sec); err != nil {
		t.Fatal(err)
	}
	bundle := sec.Data[webhookcert.KeyCABundle]
	crds, err := crd.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, want := range crds {
		if !crd.Converted(want) {
			continue
		}
		n++
		got := &apiextensionsv1.CustomResourceDefinition{}
		if err := admin.Get(ctx, client.ObjectKey{Name: want.Name}, got); err != nil {
			t.Fatal(err)
		}
		cc := got.Spec.Conversion.Webhook.ClientConfig
		if cc.Service == nil || cc.Service.Name != manager.DefaultWebhookServiceName {
			t.Errorf("CRD %s on the server converts through %+v", want.Name, cc)
		}
		if !bytes.Equal(cc.CABundle, bundle) {
			t.Errorf("CRD %s caBundle is not the Secret's bundle", want.Name)
		}
	}
	if want := len(conversion.Kinds) + len(conversion.CAPAKinds); n != want {
		t.Errorf("%d converted CRDs, conversion serves %d kinds", n, want)
	}

	// A rotation updates the Secret: renewing as the manager must be allowed
	// too (forced here by asking for another Service's name).
	m2, err := webhookcert.New(cfg, webhookcert.Options{
		Namespace:   manager.DefaultWebhookNamespace,
		SecretName:  manager.DefaultWebhookSecretName,
		ServiceName: "renamed-webhook-service",
		Dir:         t.TempDir(),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := m2.Ensure(ctx); err != nil {
		t.Fatalf("updating the Secret as the manager: %v", err)
	}
}
