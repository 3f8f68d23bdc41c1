package bootstrap

import (
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
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
	Name      string `json:"name,omitempty"`
	CRISocket string `json:"criSocket,omitempty"`
	// Taints is nil when the spec leaves them unset and written (possibly
	// as an empty list) when the spec sets them.
	Taints *[]corev1.Taint `json:"taints,omitempty"`
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
	// Timeout is v1beta3 only; v1beta4 replaced it with timeouts.tlsBootstrap.
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

// kubeadmTimeouts is kubeadm v1beta4's timeouts, which the KubeadmConfig
// spec holds in whole seconds.
type kubeadmTimeouts struct {
	ControlPlaneComponentHealthCheck *metav1.Duration `json:"controlPlaneComponentHealthCheck,omitempty"`
	KubeletHealthCheck               *metav1.Duration `json:"kubeletHealthCheck,omitempty"`
	KubernetesAPICall                *metav1.Duration `json:"kubernetesAPICall,omitempty"`
	EtcdAPICall                      *metav1.Duration `json:"etcdAPICall,omitempty"`
	TLSBootstrap                     *metav1.Duration `json:"tlsBootstrap,omitempty"`
	Discovery                        *metav1.Duration `json:"discovery,omitempty"`
}

// MarshalJoinConfiguration renders jc as the kubeadm JoinConfiguration YAML
// document a node running kubernetesVersion reads: kubeadm.k8s.io/v1beta3
// before v1.31, v1beta4 from v1.31.
//
// The KubeadmConfig spec follows kubeadm v1beta4, so for v1beta3 it is
// converted as Cluster API converts it: kubeletExtraArgs become a map (of
// arguments named twice, the later wins), timeouts.tlsBootstrapSeconds
// becomes discovery.timeout and the other timeouts and imagePullSerial, which
// v1beta3 lacks, are dropped. For v1beta4 kubeletExtraArgs stay a list in
// spec order and every timeout set is written.
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
	if d.BootstrapToken.IsDefined() && d.File.IsDefined() {
		return nil, errors.New("joinConfiguration.discovery: bootstrapToken and file are mutually exclusive")
	}
	if d.File.KubeConfig.IsDefined() {
		return nil, errors.New("joinConfiguration.discovery.file.kubeConfig is not supported; write the kubeconfig with spec.files and set only kubeConfigPath")
	}

	nr := jc.NodeRegistration
	out := kubeadmJoinConfiguration{
		APIVersion: apiVersion,
		Kind:       "JoinConfiguration",
		NodeRegistration: kubeadmNodeRegistration{
			Name:                  nr.Name,
			CRISocket:             nr.CRISocket,
			Taints:                nr.Taints,
			IgnorePreflightErrors: nr.IgnorePreflightErrors,
			ImagePullPolicy:       string(nr.ImagePullPolicy),
		},
		CACertPath: jc.CACertPath,
		Discovery:  kubeadmDiscovery{TLSBootstrapToken: d.TLSBootstrapToken},
		SkipPhases: jc.SkipPhases,
	}
	if args := nr.KubeletExtraArgs; len(args) > 0 {
		if v4 {
			out.NodeRegistration.KubeletExtraArgs = kubeletArgList(args)
		} else {
			out.NodeRegistration.KubeletExtraArgs = kubeletArgMap(args)
		}
	}
	if v4 {
		out.NodeRegistration.ImagePullSerial = nr.ImagePullSerial
		out.Timeouts = timeouts(jc.Timeouts)
	} else {
		out.Discovery.Timeout = seconds(jc.Timeouts.TLSBootstrapSeconds)
	}
	if bt := d.BootstrapToken; bt.IsDefined() {
		out.Discovery.BootstrapToken = &kubeadmBootstrapTokenDiscovery{
			Token:                    bt.Token,
			APIServerEndpoint:        bt.APIServerEndpoint,
			CACertHashes:             bt.CACertHashes,
			UnsafeSkipCAVerification: bt.UnsafeSkipCAVerification != nil && *bt.UnsafeSkipCAVerification,
		}
	}
	if d.File.IsDefined() {
		out.Discovery.File = &kubeadmFileDiscovery{KubeConfigPath: d.File.KubeConfigPath}
	}
	if cp := jc.ControlPlane; cp != nil {
		out.ControlPlane = &kubeadmJoinControlPlane{LocalAPIEndpoint: kubeadmAPIEndpoint{
			AdvertiseAddress: cp.LocalAPIEndpoint.AdvertiseAddress,
			BindPort:         cp.LocalAPIEndpoint.BindPort,
		}}
	}
	if p := jc.Patches; p.Directory != "" {
		out.Patches = &kubeadmPatches{Directory: p.Directory}
	}
	b, err := yaml.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("marshalling the kubeadm JoinConfiguration: %w", err)
	}
	return b, nil
}

// kubeletArgList converts the spec's kubeletExtraArgs into v1beta4's list, in
// spec order: kubeadm v1beta4 allows an argument more than once, and the
// order then matters.
func kubeletArgList(args []bootstrapv1.Arg) []kubeadmArg {
	list := make([]kubeadmArg, 0, len(args))
	for _, a := range args {
		list = append(list, kubeadmArg{Name: a.Name, Value: ptr.Deref(a.Value, "")})
	}
	return list
}

// kubeletArgMap converts the spec's kubeletExtraArgs into v1beta3's map; of
// an argument named more than once the last value wins, as in Cluster API.
func kubeletArgMap(args []bootstrapv1.Arg) map[string]string {
	m := make(map[string]string, len(args))
	for _, a := range args {
		m[a.Name] = ptr.Deref(a.Value, "")
	}
	return m
}

// timeouts converts the spec's timeouts (whole seconds) into kubeadm
// v1beta4's durations; nil when none is set.
func timeouts(t bootstrapv1.Timeouts) *kubeadmTimeouts {
	out := &kubeadmTimeouts{
		ControlPlaneComponentHealthCheck: seconds(t.ControlPlaneComponentHealthCheckSeconds),
		KubeletHealthCheck:               seconds(t.KubeletHealthCheckSeconds),
		KubernetesAPICall:                seconds(t.KubernetesAPICallSeconds),
		EtcdAPICall:                      seconds(t.EtcdAPICallSeconds),
		TLSBootstrap:                     seconds(t.TLSBootstrapSeconds),
		Discovery:                        seconds(t.DiscoverySeconds),
	}
	if *out == (kubeadmTimeouts{}) {
		return nil
	}
	return out
}

func seconds(s *int32) *metav1.Duration {
	if s == nil {
		return nil
	}
	return &metav1.Duration{Duration: time.Duration(*s) * time.Second}
}
