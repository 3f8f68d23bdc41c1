package manager

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/pflag"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/mpool-dev/mpool/internal/admission/flexibleversion"
	"github.com/mpool-dev/mpool/internal/conversion"
	"github.com/mpool-dev/mpool/internal/webhookcert"
)

// Defaults of the conversion webhook's options: the names config/default
// gives the Service and the Secret (namePrefix "mpool-").
const (
	DefaultWebhookPort        = 9443
	DefaultWebhookServiceName = "mpool-webhook-service"
	DefaultWebhookSecretName  = "mpool-webhook-cert"
	DefaultWebhookNamespace   = "mpool-system"
)

// The webhooks' RBAC: the self-managed certificate Secret in the manager's
// namespace, the converted CRDs whose caBundle the leader sets (the
// conversion handler reads CRDs' contract labels through the cache), and the
// validating webhook's configuration, whose caBundle it sets too.
// +kubebuilder:rbac:groups="",namespace=system,resources=secrets,verbs=get;create;update
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=get;list;watch;patch;update
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=validatingwebhookconfigurations,verbs=get;patch

// AddWebhookFlags registers the conversion webhook's flags on fs, defaulting
// to o's values: off unless --conversion-webhook, which the deployed manager
// (config/manager) passes; `mpool up` keeps it off, its embedded control plane
// serves conversion itself.
func (o *Options) AddWebhookFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.ConversionWebhook, "conversion-webhook", o.ConversionWebhook, "Serve the CRD conversion webhook (v1beta1 <-> v1beta2) at "+conversion.Path+", and the validating webhook of config/manager at "+flexibleversion.Path+", on --webhook-port")
	fs.IntVar(&o.WebhookPort, "webhook-port", o.WebhookPort, "Port of the webhook server")
	fs.StringVar(&o.WebhookCertDir, "webhook-cert-dir", o.WebhookCertDir, "Directory holding the webhook's tls.crt and tls.key (e.g. a mounted cert-manager Secret; the CRDs' caBundle is then yours to set). Empty: the manager issues, rotates and trusts its own, in Secret --webhook-secret-name")
	fs.StringVar(&o.WebhookServiceName, "webhook-service-name", o.WebhookServiceName, "Service in front of the webhook; the self-managed certificate is for <service>.<namespace>.svc")
	fs.StringVar(&o.WebhookSecretName, "webhook-secret-name", o.WebhookSecretName, "Secret in the manager's namespace that holds the self-managed webhook CA and certificate")
	fs.StringVar(&o.WebhookNamespace, "webhook-namespace", o.WebhookNamespace, "The manager's namespace, of the webhook's Service and Secret (default: $POD_NAMESPACE, else "+DefaultWebhookNamespace+")")
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// webhookServer returns the server the manager gets when it serves
// conversion (nil: controller-runtime's default, never started because nothing
// registers on it), and the directory of self-managed certificates ("" when
// --webhook-cert-dir names one).
func webhookServer(opts Options) (webhook.Server, string, error) {
	if !opts.ConversionWebhook {
		return nil, "", nil
	}
	dir, self := opts.WebhookCertDir, ""
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "mpool-webhook-cert-"); err != nil {
			return nil, "", fmt.Errorf("creating the webhook certificate directory: %w", err)
		}
		self = dir
	}
	return webhook.NewServer(webhook.Options{Port: opts.WebhookPort, CertDir: dir}), self, nil
}

// setupConversionWebhook registers the conversion handler on mgr's webhook
// server and, when selfDir is set, the self-managed certificates: ensured
// once now (the server reads the files when it starts), then kept current on
// every replica, with the leader patching the CRDs' caBundle.
func setupConversionWebhook(ctx context.Context, mgr ctrl.Manager, opts Options, selfDir string) error {
	if !opts.ConversionWebhook {
		return nil
	}
	if selfDir != "" {
		certs, err := webhookcert.New(mgr.GetConfig(), webhookcert.Options{
			Namespace:   opts.WebhookNamespace,
			SecretName:  opts.WebhookSecretName,
			ServiceName: opts.WebhookServiceName,
			Dir:         selfDir,
			Groups:      opts.Mode.ConvertsGroup,
			// config/manager's, under config/default's namePrefix.
			ValidatingWebhooks: []string{flexibleversion.Name},
			Log:                ctrl.Log.WithName("webhookcert"),
		})
		if err != nil {
			return err
		}
		if err := certs.Ensure(ctx); err != nil {
			return fmt.Errorf("ensuring the conversion webhook's certificate: %w", err)
		}
		if err := mgr.Add(certs); err != nil {
			return err
		}
		if err := mgr.Add(certs.CRDPatcher()); err != nil {
			return err
		}
		if err := mgr.Add(removeOnStop(selfDir)); err != nil {
			return err
		}
	}
	srv := mgr.GetWebhookServer()
	h, err := conversion.Handler(mgr.GetScheme(), mgr.GetClient())
	if err != nil {
		return err
	}
	srv.Register(conversion.Path, h)
	// The webhook that judges a Flexible AzureMachinePool's Kubernetes
	// version, reading the other object of the pair from the cache.
	srv.Register(flexibleversion.Path, flexibleversion.Handler(mgr.GetClient()))
	// Not ready (no Service endpoint) until the server serves.
	return mgr.AddReadyzCheck("webhook", srv.StartedChecker())
}

// removeOnStop removes the self-managed certificate directory when the
// manager stops, on every replica: the key leaves the disk with the manager.
type removeOnStop string

func (d removeOnStop) Start(ctx context.Context) error {
	<-ctx.Done()
	return os.RemoveAll(string(d))
}

func (removeOnStop) NeedLeaderElection() bool { return false }
