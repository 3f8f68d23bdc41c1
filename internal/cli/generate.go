package cli

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/mpool-dev/mpool/api"
	"github.com/mpool-dev/mpool/examples"
	"github.com/mpool-dev/mpool/internal/capi"
	mpoolscheme "github.com/mpool-dev/mpool/internal/scheme"
	"github.com/mpool-dev/mpool/templates"
)

type generateOptions struct {
	infrastructure     string
	flavor             string
	kubernetesVersion  string
	targetNamespace    string
	workerMachineCount int64
	listVariables      bool
	from               string
	writeTo            string
	config             string
	machineHealthCheck bool

	// env looks variables up in the environment (os.LookupEnv).
	env func(string) (string, bool)
	// defaultConfig is read, when it exists, unless --config names a file.
	defaultConfig string
	// currentNamespace is the namespace without --target-namespace.
	currentNamespace func() string
}

func newGenerateCommand() *cobra.Command {
	return newGenerateCommandWith(generateOptions{env: os.LookupEnv, defaultConfig: defaultClusterctlConfig(), currentNamespace: kubeconfigNamespace})
}

// newGenerateCommandWith is `mpool generate` reading variables from o.env
// and, without --config, from o.defaultConfig when it exists.
func newGenerateCommandWith(o generateOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "generate",
		Short: "Generate manifests, as clusterctl generate does",
	}
	cmd.AddCommand(newGenerateClusterCommand(o))
	return cmd
}

// kubeconfigNamespace is the namespace of the kubeconfig's current context
// ($KUBECONFIG, else ~/.kube/config), else "default", as clusterctl's
// --target-namespace defaults.
func kubeconfigNamespace() string {
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(clientcmd.NewDefaultClientConfigLoadingRules(), &clientcmd.ConfigOverrides{})
	ns, _, err := cc.Namespace()
	if err != nil || ns == "" {
		return "default"
	}
	return ns
}

func newGenerateClusterCommand(o generateOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cluster NAME",
		Short: "Generate the manifests of a cluster's worker pool from a flavor or a template",
		Long: `Generate the manifests of a workload cluster's worker pool, as
'clusterctl generate cluster' does, from one of mpool's embedded flavors or
from a clusterctl template file (--from).

The flavors follow the Cluster API providers' flavors of the same name and
use their variable names, but contain only the kinds mpool serves: the
Cluster and its infrastructure (an AzureCluster with the AzureClusterIdentity
it authenticates with and that identity's client-secret Secret; an
AWSCluster, whose pools use the manager's own AWS credentials; an
AWSManagedControlPlane naming an EKS cluster; for AKS, CAPZ's pair: an
AzureManagedControlPlane naming the AKS cluster as the Cluster's
controlPlaneRef and an AzureManagedCluster as its infrastructureRef), the
MachinePool, its infrastructure pool and its KubeadmConfig (none for EKS and
AKS, which bootstrap their nodes). What the
provider's flavor also contains (the control plane) is named on stderr: mpool
manages worker pools for a control plane that exists.

  local  machinepool              simulated VMs; with no variables set, joins
                                  the Cluster default/local of 'mpool up'
  azure  machinepool              a VM Scale Set (Uniform)
  azure  machinepool-flex         a VM Scale Set (Flexible)
  aws    machinepool              an EC2 Auto Scaling Group
  aws    eks-managedmachinepool   an EKS managed node group of an EKS cluster
                                  that exists, named by an AWSManagedControlPlane
  gcp    machinepool              a Compute Engine managed instance group

The azure, aws and gcp flavors default to the simulated clouds of 'mpool up' (its
subscription, tenant, service principal, region, subnet, a Kubernetes version
it has images of and its EKS cluster mpool-eks): with no variables set, their
pool runs there, 'mpool up' being the Cluster's control plane. Set the
providers' variables (AZURE_SUBSCRIPTION_ID, AZURE_TENANT_ID, AZURE_CLIENT_ID,
AZURE_CLIENT_SECRET, AZURE_LOCATION; AWS_REGION, AWS_AVAILABILITY_ZONE,
AWS_SSH_KEY_NAME; EKS_CLUSTER_NAME, AWS_SUBNET_ID; GCP_PROJECT, GCP_REGION,
GCP_NETWORK_NAME, IMAGE_ID) to target the real cloud;
--list-variables names them all.

--machine-health-check adds a MachineHealthCheck for each MachinePool, named
after it: a Node Ready Unknown or False for 5 minutes, or no Node 10 minutes
after its instance was created, makes an instance unhealthy, and mpool's
rollout engine replaces it within the pool's budgets, unless more than 40%
of the pool is unhealthy at once (an outage that replacing would not fix).

Variables are ${VAR}, ${VAR:=default}, ${VAR:-default}, ${VAR/#/prefix} and
the rest of clusterctl's syntax. Their values come from the flags below
(NAME is CLUSTER_NAME), then the environment, then the clusterctl config
file. A variable with no value and no default is an error that names every
such variable.`,
		Example: `  mpool generate cluster demo --flavor machinepool | kubectl apply -f -
  mpool generate cluster demo --infrastructure azure --flavor machinepool | kubectl apply -f -
  mpool generate cluster my-cluster --infrastructure azure --kubernetes-version v1.22.0 --flavor machinepool > my-cluster.yaml
  mpool generate cluster my-cluster --infrastructure aws --flavor eks-managedmachinepool --list-variables
  mpool generate cluster demo --flavor machinepool --machine-health-check | kubectl apply -f -
  mpool generate cluster my-cluster --from ./my-template.yaml`,
		Args: cobra.ExactArgs(1),
	}
	fs := cmd.Flags()
	fs.StringVarP(&o.infrastructure, "infrastructure", "i", "local", "The infrastructure provider of the flavor: local, azure, aws or gcp")
	fs.StringVarP(&o.flavor, "flavor", "f", "machinepool", "The flavor of the infrastructure provider to use")
	fs.StringVar(&o.kubernetesVersion, "kubernetes-version", "", "The Kubernetes version of the pool (KUBERNETES_VERSION)")
	fs.StringVarP(&o.targetNamespace, "target-namespace", "n", "", `The namespace of the objects (NAMESPACE) (default the kubeconfig context's namespace, else "default")`)
	fs.Int64Var(&o.workerMachineCount, "worker-machine-count", 0, "The number of machines of the pool (WORKER_MACHINE_COUNT); unset, the variable or the flavor's default")
	fs.BoolVar(&o.listVariables, "list-variables", false, "List the variables the template needs instead of generating it")
	fs.StringVar(&o.from, "from", "", "A clusterctl template file to use instead of a flavor")
	fs.StringVar(&o.writeTo, "write-to", "", "Write the manifests to this file instead of stdout")
	fs.BoolVar(&o.machineHealthCheck, "machine-health-check", false, "Add a MachineHealthCheck for each MachinePool: unhealthy instances are replaced (Node Ready Unknown or False for 5m, no Node 10m after creation; not while more than 40% are unhealthy)")
	fs.StringVar(&o.config, "config", "", "A clusterctl config file of KEY: value variables (default ~/.cluster-api/clusterctl.yaml if it exists)")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		return runGenerateCluster(cmd.OutOrStdout(), cmd.ErrOrStderr(), args[0], o, fs.Changed("worker-machine-count"), fs.Changed("flavor") || fs.Changed("infrastructure"))
	}
	return cmd
}

func runGenerateCluster(stdout, stderr io.Writer, name string, o generateOptions, countSet, flavorSet bool) error {
	if o.targetNamespace == "" {
		o.targetNamespace = "default"
		if o.currentNamespace != nil {
			o.targetNamespace = o.currentNamespace()
		}
	}
	vars, err := o.variables(name, countSet)
	if err != nil {
		return err
	}
	var (
		tpl     []byte
		leftOut []string
	)
	if o.from != "" {
		if flavorSet {
			return fmt.Errorf("--from and --flavor/--infrastructure choose the template two ways; give one")
		}
		if tpl, err = os.ReadFile(o.from); err != nil {
			return fmt.Errorf("reading the template: %w", err)
		}
	} else {
		f, err := templates.Lookup(o.infrastructure, o.flavor)
		if err != nil {
			return err
		}
		if tpl, err = f.Template(); err != nil {
			return err
		}
		leftOut = f.LeftOut
	}
	if o.listVariables {
		refs, err := inspectTemplate(string(tpl))
		if err != nil {
			return err
		}
		return printTemplateVariables(stdout, refs, vars.flags)
	}
	manifest, notes, err := generateManifest(tpl, vars, o.machineHealthCheck)
	if err != nil {
		return err
	}
	for _, l := range leftOut {
		fmt.Fprintf(stderr, "mpool generate: left out %s\n", strings.ReplaceAll(l, "${CLUSTER_NAME}", name))
	}
	if _, set := vars.lookup("LOCAL_CLUSTER_NAME"); o.from == "" && o.infrastructure == "local" && !set && o.targetNamespace != "default" {
		notes = append(notes, fmt.Sprintf("note: the pool is in namespace %s, but the Cluster local of `mpool up` is in default: "+
			"use --target-namespace default, or set LOCAL_CLUSTER_NAME to a Cluster in %s", o.targetNamespace, o.targetNamespace))
	}
	for _, n := range notes {
		fmt.Fprintf(stderr, "mpool generate: %s\n", n)
	}
	if o.writeTo != "" {
		if err := os.WriteFile(o.writeTo, manifest, 0o600); err != nil {
			return fmt.Errorf("writing the manifests: %w", err)
		}
		return nil
	}
	_, err = stdout.Write(manifest)
	return err
}

// variables are the template's variables for cluster name: the flags', the
// environment's and the config file's.
func (o generateOptions) variables(name string, countSet bool) (templateVars, error) {
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return templateVars{}, fmt.Errorf("invalid cluster name %q: %s", name, strings.Join(errs, "; "))
	}
	if errs := validation.IsDNS1123Label(o.targetNamespace); len(errs) > 0 {
		return templateVars{}, fmt.Errorf("invalid target namespace %q: %s", o.targetNamespace, strings.Join(errs, "; "))
	}
	flags := map[string]string{"CLUSTER_NAME": name, "NAMESPACE": o.targetNamespace}
	if o.kubernetesVersion != "" {
		if _, err := version.ParseSemantic(o.kubernetesVersion); err != nil {
			return templateVars{}, fmt.Errorf("invalid --kubernetes-version %q: use a semantic version such as v1.37.1", o.kubernetesVersion)
		}
		flags["KUBERNETES_VERSION"] = o.kubernetesVersion
	}
	if countSet {
		if o.workerMachineCount < 0 {
			return templateVars{}, fmt.Errorf("invalid --worker-machine-count %d: use a number greater than or equal to 0", o.workerMachineCount)
		}
		flags["WORKER_MACHINE_COUNT"] = strconv.FormatInt(o.workerMachineCount, 10)
	}
	path, optional := o.config, false
	if path == "" {
		path, optional = o.defaultConfig, true
	}
	var config map[string]string
	if path != "" {
		var err error
		if config, err = loadClusterctlConfig(path, optional); err != nil {
			return templateVars{}, err
		}
	}
	vars := templateVars{flags: flags, env: o.env, config: config}
	if v, ok := vars.lookup("WORKER_MACHINE_COUNT"); ok && !countSet {
		if n, err := strconv.ParseInt(v, 10, 64); err != nil || n < 0 {
			return templateVars{}, fmt.Errorf("invalid value %q for WORKER_MACHINE_COUNT: use a number greater than or equal to 0", v)
		}
	}
	return vars, nil
}

// generateManifest substitutes tpl's variables and returns its objects as
// YAML documents, each in the target namespace unless it names its own (as
// clusterctl does), with a note for each kind mpool does not serve.
func generateManifest(tpl []byte, vars templateVars, mhc bool) ([]byte, []string, error) {
	text, err := substitute(string(tpl), vars)
	if err != nil {
		return nil, nil, err
	}
	objs, err := examples.Objects([]byte(text), "")
	if err != nil {
		return nil, nil, fmt.Errorf("the generated manifests are not valid YAML: %w", err)
	}
	if mhc {
		objs = withMachineHealthChecks(objs)
	}
	served, err := mpoolscheme.New()
	if err != nil {
		return nil, nil, err
	}
	namespaced := runtime.NewScheme()
	if err := api.AddToScheme(namespaced); err != nil {
		return nil, nil, err
	}
	ns, _ := vars.lookup("NAMESPACE")
	var (
		out   strings.Builder
		notes []string
	)
	for _, u := range objs {
		gvk := u.GroupVersionKind()
		if !served.Recognizes(gvk) {
			notes = append(notes, fmt.Sprintf("note: %s %s (%s) is not served by mpool; applying it needs its provider's CRDs", gvk.Kind, u.GetName(), gvk.GroupVersion()))
		}
		if u.GetNamespace() == "" && (namespaced.Recognizes(gvk) || gvk.Group == "" && (gvk.Kind == "Secret" || gvk.Kind == "ConfigMap")) {
			u.SetNamespace(ns)
		}
		b, err := yaml.Marshal(u.Object)
		if err != nil {
			return nil, nil, fmt.Errorf("encoding %s %s: %w", gvk.Kind, u.GetName(), err)
		}
		out.WriteString("---\n")
		out.Write(b)
	}
	return []byte(out.String()), notes, nil
}

// printTemplateVariables lists a template's variables as clusterctl's
// --list-variables does: those that need a value, then those that have one
// from a flag or a default.
func printTemplateVariables(w io.Writer, refs []templateVar, flags map[string]string) error {
	var required []string
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, r := range refs {
		if _, ok := flags[r.name]; !ok && !r.hasDefault {
			required = append(required, r.name)
		}
	}
	if len(required) > 0 {
		fmt.Fprintln(tw, "Required Variables:")
		for _, r := range required {
			fmt.Fprintf(tw, "  - %s\n", r)
		}
		fmt.Fprintln(tw)
	}
	optional := false
	for _, r := range refs {
		var def string
		switch v, ok := flags[r.name]; {
		case ok:
			def = fmt.Sprintf("(defaults to %s)", v)
		case r.literal && r.defaultValue == "":
			def = `(defaults to "")`
		case r.literal:
			def = fmt.Sprintf("(defaults to %s)", r.defaultValue)
		case r.hasDefault:
			def = "(optional)"
		default:
			continue
		}
		if !optional {
			fmt.Fprintln(tw, "Optional Variables:")
			optional = true
		}
		fmt.Fprintf(tw, "  - %s\t%s\n", r.name, def)
	}
	return tw.Flush()
}

// withMachineHealthChecks appends to objs a MachineHealthCheck for each
// MachinePool among them, after it, as Cluster API's providers' flavors
// write one for a MachineDeployment's Machines, in v1beta2.
func withMachineHealthChecks(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, 0, len(objs)+1)
	for _, u := range objs {
		out = append(out, u)
		if u.GetKind() != "MachinePool" || u.GroupVersionKind().Group != clusterv1.GroupVersion.Group {
			continue
		}
		cluster, _, _ := unstructured.NestedString(u.Object, "spec", "clusterName")
		mhc := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": clusterv1.GroupVersion.String(),
			"kind":       "MachineHealthCheck",
			"metadata":   map[string]any{"name": u.GetName()},
			"spec": map[string]any{
				"clusterName": cluster,
				"selector": map[string]any{"matchLabels": map[string]any{
					clusterv1.MachinePoolNameLabel: capi.LabelValue(u.GetName()),
				}},
				"checks": map[string]any{
					"nodeStartupTimeoutSeconds": int64(600),
					"unhealthyNodeConditions": []any{
						map[string]any{"type": "Ready", "status": "Unknown", "timeoutSeconds": int64(300)},
						map[string]any{"type": "Ready", "status": "False", "timeoutSeconds": int64(300)},
					},
				},
				"remediation": map[string]any{"triggerIf": map[string]any{"unhealthyLessThanOrEqualTo": "40%"}},
			},
		}}
		if ns := u.GetNamespace(); ns != "" {
			mhc.SetNamespace(ns)
		}
		out = append(out, mhc)
	}
	return out
}
