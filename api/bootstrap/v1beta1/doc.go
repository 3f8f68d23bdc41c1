// Package v1beta1 contains the bootstrap.cluster.x-k8s.io/v1beta1 API types that mpool
// serves: KubeadmConfig and KubeadmConfigTemplate, with Cluster API's field names. The
// join path (joinConfiguration, files, users, commands) is typed; clusterConfiguration and
// initConfiguration are accepted and preserved as written.
//
// +kubebuilder:object:generate=true
// +groupName=bootstrap.cluster.x-k8s.io
package v1beta1
