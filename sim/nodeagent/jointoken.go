package nodeagent

import (
	"context"
	"fmt"
	"os"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	certutil "k8s.io/client-go/util/cert"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	bootstraputil "k8s.io/cluster-bootstrap/token/util"
)

// JoinTicket is what a cloud that bootstraps its own nodes (a managed node
// pool) gives them to join a workload cluster with kubeadm: the API
// server, its CA's pin and a bootstrap token.
type JoinTicket struct {
	// Endpoint is the API server's URL (https://host:port).
	Endpoint string
	// CAHash is the "sha256:<hex>" pin of its CA's public key.
	CAHash string
	// Token is the bootstrap token, <id>.<secret>. It is a credential:
	// never log it.
	Token string
}

// IssueJoinTicket creates a bootstrap token in the kube-system namespace of
// the workload cluster cfg reaches (one of Agent.Servers), labelled with
// labels, and returns the ticket of it.
func IssueJoinTicket(ctx context.Context, cfg *rest.Config, labels map[string]string, description string) (JoinTicket, error) {
	ca := cfg.CAData
	if len(ca) == 0 && cfg.CAFile != "" {
		b, err := os.ReadFile(cfg.CAFile)
		if err != nil {
			return JoinTicket{}, err
		}
		ca = b
	}
	certs, err := certutil.ParseCertsPEM(ca)
	if err != nil || len(certs) == 0 {
		return JoinTicket{}, fmt.Errorf("the workload API server's CA cannot be read: %v", err)
	}
	token, err := bootstraputil.GenerateBootstrapToken()
	if err != nil {
		return JoinTicket{}, err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return JoinTicket{}, err
	}
	id, secret := token[:6], token[7:]
	_, err = cs.CoreV1().Secrets(metav1.NamespaceSystem).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceSystem, Name: bootstraputil.BootstrapTokenSecretName(id), Labels: labels},
		Type:       corev1.SecretTypeBootstrapToken,
		StringData: map[string]string{
			bootstrapapi.BootstrapTokenIDKey: id, bootstrapapi.BootstrapTokenSecretKey: secret,
			bootstrapapi.BootstrapTokenUsageAuthentication: "true", bootstrapapi.BootstrapTokenUsageSigningKey: "true",
			bootstrapapi.BootstrapTokenExtraGroupsKey: "system:bootstrappers:kubeadm:default-node-token",
			bootstrapapi.BootstrapTokenDescriptionKey: description,
		},
	}, metav1.CreateOptions{})
	if err != nil {
		return JoinTicket{}, fmt.Errorf("creating the bootstrap token: %w", err)
	}
	return JoinTicket{Endpoint: cfg.Host, CAHash: Pin(certs[len(certs)-1]), Token: token}, nil
}
