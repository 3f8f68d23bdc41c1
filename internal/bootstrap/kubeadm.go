package bootstrap

import (
	"errors"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/version"
	"sigs.k8s.io/yaml"

	bootstrapv1 "github.com/mpool-dev/mpool/api/bootstrap/v1beta1"
)

// kubeadm API versions of the JoinConfiguration.
const (
	// KubeadmV1Beta3 is kubeadm's configuration API before Kubernetes v1.31.
	KubeadmV1Beta3 = "kubeadm.k8s.io/v1beta3"
	// KubeadmV1Beta4 is kubeadm's configuration API from Kubernetes v1.31.
	KubeadmV1Beta4 = "kubeadm.k8s.io/v1beta4"
)

// v1beta4Since is the first Kubernetes version whose kubeadm reads v1beta4.
var v1beta4Since = version.MajorMinor(1, 31)

// KubeadmAPIVersion returns the kubeadm configuration API version for a node
// running kubernetesVersion (for example "v1.30.2"). An empty version selects
// v1beta3, which every supported kubeadm still reads.
func KubeadmAPIVersion(kubernetesVersion string) (string, error) {
	if kubernetesVersion == "" {
		return KubeadmV1Beta3, nil
	}
	v, err := version.ParseGeneric(kubernetesVersion)
	if err != nil {
		return "", fmt.Errorf("parsing Kubernetes version %q: %w", kubernetesVersion, err)
	}
	if v.AtLeast(v1beta4Since) {
		return KubeadmV1Beta4, nil
	}
	return KubeadmV1Beta3, nil
}

// kubeadmJoinConfiguration is kubeadm's JoinConfiguration in the union of the
// v1beta3 and v1beta4 shapes; the fields one version lacks stay empty.
type kubeadmJoinConfiguration struct {
	APIVersion       string                   `json:"apiVersion"`
	Kind             string                   `json:"kind"`
	NodeRegistration kubeadmNodeRegistration  `json:"nodeRegistration"`
	CACertPath       string                   `json:"caCertPath,omitempty"`
	Discovery        kubeadmDiscovery         `json:"discovery"`
	ControlPlane     *kubeadmJoinControlPlane `json:"controlPlane,omitempty"`
	SkipPhases       []string                 `json:"skipPhases,omitempty"`
	Patches          *kubeadmPatches          `json:"patches,omitempty"`
	// Timeouts is v1beta4 only.
	Timeouts *kubeadmTimeouts `json:"timeouts,omitempty"`
}

type kubeadmNodeRegistration struct {
	Name      string         `json:"name,omitempty"`
	CRISocket string         `json:"criSocket,omitempty"`
	Taints    []corev1.Taint `json:"taints,omitempty"`
	// KubeletExtraArgs is a map in v1beta3 and a list of kubeadmArg in v1beta4.
	KubeletExtraArgs      any      `json:"kubeletExtraArgs,omitempty"`
	IgnorePreflightErrors []string `json:"ignorePreflightErrors,omitempty"`
	ImagePullPolicy       string   `json:"imagePullPolicy,omitempty"`
	// ImagePullSerial is v1beta4 only.
	ImagePullSerial *bool `json:"imagePullSerial,omitempty"`
}

type kubeadmArg struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type kubeadmDiscovery struct {
	BootstrapToken    *kubeadmBootstrapTokenDiscovery `json:"bootstrapToken,omitempty"`
	File              *kubeadmFileDiscovery           `json:"file,omitempty"`
	TLSBootstrapToken string                          `json:"tlsBootstrapToken,omitempty"`
	// Timeout is v1beta3 only; v1beta4 moved it to timeouts.discovery.
	Timeout *metav1.Duration `json:"timeout,omitempty"`
}

type kubeadmBootstrapTokenDiscovery struct {
	Token                    string   `json:"token"`
	APIServerEndpoint        string   `json:"apiServerEndpoint,omitempty"`
	CACertHashes             []string `json:"caCertHashes,omitempty"`
	UnsafeSkipCAVerification bool     `json:"unsafeSkipCAVerification,omitempty"`
}

type kubeadmFileDiscovery struct {
	KubeConfigPath string `json:"kubeConfigPath"`
}

type kubeadmJoinControlPlane struct {
	LocalAPIEndpoint kubeadmAPIEndpoint `json:"localAPIEndpoint,omitempty"`
}

type kubeadmAPIEndpoint struct {
	AdvertiseAddress string `json:"advertiseAddress,omitempty"`
	BindPort         int32  `json:"bindPort,omitempty"`
}

type kubeadmPatches struct {
	Directory string `json:"directory,omitempty"`
}

type kubeadmTimeouts struct {
	Discovery *metav1.Duration `json:"discovery,omitempty"`
}

// MarshalJoinConfiguration renders jc as the kubeadm JoinConfiguration YAML
// document a node running kubernetesVersion reads: kubeadm.k8s.io/v1beta3
// before v1.31 (kubeletExtraArgs a map), v1beta4 from v1.31 (kubeletExtraArgs
// a list of {name, value} sorted by name, discovery.timeout moved to
// timeouts.discovery). jc's own apiVersion and kind are ignored.
func MarshalJoinConfiguration(jc *bootstrapv1.JoinConfiguration, kubernetesVersion string) ([]byte, error) {
	if jc == nil {
		jc = &bootstrapv1.JoinConfiguration{}
	}
	apiVersion, err := KubeadmAPIVersion(kubernetesVersion)
	if err != nil {
		return nil, err
	}
	v4 := apiVersion == KubeadmV1Beta4
	d := jc.Discovery
	if d.BootstrapToken != nil && d.File != nil {
		return nil, errors.New("joinConfiguration.discovery: bootstrapToken and file are mutually exclusive")
	}
	if d.File != nil && d.File.KubeConfig != nil {
		return nil, errors.New("joinConfiguration.discovery.file.kubeConfig is not supported; write the kubeconfig with spec.files and set only kubeConfigPath")
	}

	out := kubeadmJoinConfiguration{
		APIVersion: apiVersion,
		Kind:       "JoinConfiguration",
		NodeRegistration: kubeadmNodeRegistration{
			Name:                  jc.NodeRegistration.Name,
			CRISocket:             jc.NodeRegistration.CRISocket,
			Taints:                jc.NodeRegistration.Taints,
			IgnorePreflightErrors: jc.NodeRegistration.IgnorePreflightErrors,
			ImagePullPolicy:       jc.NodeRegistration.ImagePullPolicy,
		},
		CACertPath: jc.CACertPath,
		Discovery:  kubeadmDiscovery{TLSBootstrapToken: d.TLSBootstrapToken},
		SkipPhases: jc.SkipPhases,
	}
	if args := jc.NodeRegistration.KubeletExtraArgs; len(args) > 0 {
		if v4 {
			out.NodeRegistration.KubeletExtraArgs = kubeletArgList(args)
		} else {
			out.NodeRegistration.KubeletExtraArgs = args
		}
	}
	if v4 {
		out.NodeRegistration.ImagePullSerial = jc.NodeRegistration.ImagePullSerial
		if d.Timeout != nil {
			out.Timeouts = &kubeadmTimeouts{Discovery: d.Timeout}
		}
	} else {
		out.Discovery.Timeout = d.Timeout
	}
	if bt := d.BootstrapToken; bt != nil {
		out.Discovery.BootstrapToken = &kubeadmBootstrapTokenDiscovery{
			Token:                    bt.Token,
			APIServerEndpoint:        bt.APIServerEndpoint,
			CACertHashes:             bt.CACertHashes,
			UnsafeSkipCAVerification: bt.UnsafeSkipCAVerification,
		}
	}
	if d.File != nil {
		out.Discovery.File = &kubeadmFileDiscovery{KubeConfigPath: d.File.KubeConfigPath}
	}
	if cp := jc.ControlPlane; cp != nil {
		out.ControlPlane = &kubeadmJoinControlPlane{LocalAPIEndpoint: kubeadmAPIEndpoint{
			AdvertiseAddress: cp.LocalAPIEndpoint.AdvertiseAddress,
			BindPort:         cp.LocalAPIEndpoint.BindPort,
		}}
	}
	if p := jc.Patches; p != nil {
		out.Patches = &kubeadmPatches{Directory: p.Directory}
	}
	b, err := yaml.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("marshalling the kubeadm JoinConfiguration: %w", err)
	}
	return b, nil
}

// kubeletArgList converts v1beta3's kubeletExtraArgs map into v1beta4's list,
// sorted by name so that the output is deterministic.
func kubeletArgList(args map[string]string) []kubeadmArg {
	names := make([]string, 0, len(args))
	for n := range args {
		names = append(names, n)
	}
	sort.Strings(names)
	list := make([]kubeadmArg, 0, len(names))
	for _, n := range names {
		list = append(list, kubeadmArg{Name: n, Value: args[n]})
	}
	return list
}
