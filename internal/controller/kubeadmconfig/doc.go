// Package kubeadmconfig is the kubeadm bootstrap controller for MachinePools:
// it turns a KubeadmConfig owned by a MachinePool into one bootstrap data
// Secret shared by every instance of the pool, and keeps the bootstrap token
// in that data valid for as long as the pool may still add instances.
//
// # Data Secret
//
// The data Secret is named after the KubeadmConfig, controlled by it, labelled
// cluster.x-k8s.io/cluster-name, of type cluster.x-k8s.io/secret, with keys
// "value" (the cloud-config document rendered by internal/bootstrap) and
// "format". The JoinConfiguration's discovery is filled in where the spec
// leaves it empty: the API server endpoint from the Cluster's
// spec.controlPlaneEndpoint, the CA pins from the "<cluster>-ca" Secret (key
// tls.crt) and a bootstrap token. The KubeadmConfig's spec is never written.
// Once the Secret exists, status.dataSecretName names it and
// status.initialization.dataSecretCreated is true.
//
// The data follows the config. It is rendered with a new token when the
// Secret does not exist, and rendered again, in place, whenever what the
// config renders to differs from what the Secret holds: after a change of the
// spec (files, kubeletExtraArgs, pre- and post-kubeadm commands,
// joinConfiguration, users, ...), of a Secret its files or users reference,
// of the Cluster's endpoint or CA, or of the pool's Kubernetes version (which
// picks the kubeadm API version). Rendering again keeps the token the data
// carries (the one TokenSecretAnnotation names, or the spec's own): it never
// creates, rotates or extends a token. The fresh rendering is compared with
// the Secret byte for byte, so a config that did not change writes nothing.
// An update is recorded as a DataSecretUpdated event.
//
// What a change means for the pool is decided by the infrastructure pool's
// rollout: the instance model hash covers the bootstrap data with its tokens
// masked (bootstrap.MaskBootstrapTokens), so a content change rolls the pool
// within its budgets while a token rotation rolls nothing.
//
// While the data cannot be rendered again (a referenced Secret or the CA is
// missing, the spec asks for something mpool cannot render, the Secret
// carries no token that could be kept) the Secret keeps the data rendered
// earlier, which instances can still join with, and the token is looked after
// as usual. The conditions tell the two apart: DataSecretAvailable says
// whether the Secret exists, DataSecretUpToDate whether it holds what the
// config renders to now (False with the reason otherwise). A Secret that
// already existed (restored or moved) is adopted and rendered again only if
// it carries a token that can be kept.
//
// # Bootstrap tokens
//
// Tokens are created with k8s.io/cluster-bootstrap in the workload cluster's
// kube-system namespace (bootstrap-token-<id>, usages authentication and
// signing, extra group system:bootstrappers:kubeadm:default-node-token),
// labelled with the KubeadmConfig's UID so that every token a config ever
// created can be found again. The data Secret's annotation
// TokenSecretAnnotation names the token Secret it currently carries; the
// token's secret half appears only in the data Secret and the token Secret.
//
// Following Cluster API's kubeadm bootstrap provider, a token lives TokenTTL
// (15 minutes by default) and the controller looks at it every TokenTTL/3:
//
//   - While the pool is joining instances (its infrastructure is not ready
//     or it has fewer nodeRefs than replicas) the token is extended to
//     now+TokenTTL once less than 5/6 of TokenTTL is left, so instances that
//     booted with the current data can still join.
//   - Otherwise the token is rotated once less than TokenTTL/2 is left: a new
//     token is created, the data Secret is updated in place with only the
//     token string changed, and the old token is deleted. The data masked by
//     bootstrap.MaskBootstrapTokens does not change, so a rotation rolls
//     nothing.
//   - A token that disappeared is replaced the same way.
//
// A finalizer on the KubeadmConfig deletes its tokens from the workload
// cluster. It never blocks deletion for good: when the Cluster is gone or the
// workload cluster stays unreachable for TokenTTL (by then the tokens have
// expired), the finalizer is dropped with a warning event.
//
// A token the spec sets itself is not managed: the data carries it as the
// spec says, and changing it renders the data again (the masked data, and so
// the pool, stay as they are).
//
// In the workload cluster the controller needs get, list, create, patch and
// delete on Secrets in kube-system only.
//
// Tokens and bootstrap data never appear in logs, events or conditions; only
// token Secret names (which carry the public token ID) do.
package kubeadmconfig
