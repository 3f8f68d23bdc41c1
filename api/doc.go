// Package api is the root of the API types mpool serves. Cluster API's core
// and kubeadm bootstrap groups are upstream's own types
// (sigs.k8s.io/cluster-api/api, v1beta1 and v1beta2); mpool's own group is
// infrastructure/v1beta1. This package registers all of them with a scheme in
// one call.
package api
