// Package bootstrap renders a KubeadmConfig into the bootstrap data a pool
// instance boots with: a cloud-init #cloud-config document (behind a
// "## template: jinja" header, so cloud-init fills instance-data placeholders
// such as {{ ds.meta_data["local_hostname"] }}) that writes the user's files
// and kubeadm's JoinConfiguration, then runs kubeadm join between the pre- and
// post-kubeadm commands.
//
// It owns four pure pieces, with no I/O and no clock:
//
//   - RenderCloudInit: the cloud-config document, from the KubeadmConfig spec,
//     the content of the Secrets it references and the JoinConfiguration with
//     its discovery filled in.
//   - MarshalJoinConfiguration: kubeadm's JoinConfiguration in the API version
//     the node's kubeadm speaks (kubeadm.k8s.io/v1beta3 before Kubernetes
//     v1.31, v1beta4 from v1.31).
//   - CACertHash: the "sha256:<hex>" pin of a CA's public key that kubeadm's
//     discovery.bootstrapToken.caCertHashes expects.
//   - MaskBootstrapTokens: rendered data with its bootstrap tokens replaced
//     by TokenMask and nothing else changed.
//
// The rendered data carries a bootstrap token. Callers must never log it or
// put it into events or conditions.
//
// # Content and token
//
// The same KubeadmConfig is rendered again whenever it or an input changes
// (internal/controller/kubeadmconfig), and its token is rotated on its own.
// The data therefore has two parts with different meanings: the content,
// which defines what an instance is, and the token, which only lets it join.
// MaskBootstrapTokens separates them: two renderings that differ only in
// their tokens mask to the same bytes, renderings that differ in anything
// else do not. A pool's instance model hash covers the masked data, so that
// a changed KubeadmConfig rolls the pool and a rotated token does not.
package bootstrap
