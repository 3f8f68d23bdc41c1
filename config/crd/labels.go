package crd

import (
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// ProviderLabel names, on a CRD, the Cluster API provider that serves it;
// clusterctl reads it to tell providers' objects apart (describe, move).
const ProviderLabel = "cluster.x-k8s.io/provider"

// InfrastructureProvider is the ProviderLabel value of mpool's own
// infrastructure CRDs.
const InfrastructureProvider = "infrastructure-mpool"

// Contract labels: on a provider's CRD, which of its API versions follow each
// Cluster API contract (versions joined by "_"). Cluster API v1.14 reads
// ContractV1Beta2Label first to find the apiVersion of a referenced object.
const (
	ContractV1Beta2Label = "cluster.x-k8s.io/v1beta2"
	ContractV1Beta1Label = "cluster.x-k8s.io/v1beta1"
)

// Labels returns the labels a CRD of group carries, as the providers'
// release manifests (installed by clusterctl) label them: upstream's core CRDs
// as provider "cluster-api", the kubeadm bootstrap CRDs as
// "bootstrap-kubeadm" whose v1beta2 follows contract v1beta2, and mpool's infrastructure CRDs as
// "infrastructure-mpool" with the contract label saying that their v1beta1
// follows the v1beta1 contract (status.ready, spec.providerIDList), which
// Cluster API v1.14 still accepts.
func Labels(group string) map[string]string {
	switch group {
	case "cluster.x-k8s.io":
		return map[string]string{ProviderLabel: "cluster-api"}
	case "bootstrap.cluster.x-k8s.io":
		return map[string]string{ProviderLabel: "bootstrap-kubeadm", ContractV1Beta2Label: "v1beta2"}
	case "infrastructure.cluster.x-k8s.io":
		return map[string]string{ProviderLabel: InfrastructureProvider, ContractV1Beta1Label: "v1beta1"}
	}
	return nil
}

// Converted reports whether crd serves more than one version, so that the API
// server needs the conversion webhook for it.
func Converted(crd *apiextensionsv1.CustomResourceDefinition) bool {
	return len(crd.Spec.Versions) > 1
}

// SetConversion points every converted CRD (see Converted) of crds at the
// conversion webhook at url (https, path included), trusted through caBundle
// (PEM). CRDs that serve one version are left alone.
func SetConversion(crds []*apiextensionsv1.CustomResourceDefinition, url string, caBundle []byte) error {
	if url == "" || len(caBundle) == 0 {
		return fmt.Errorf("a conversion webhook needs a URL and a CA bundle")
	}
	for _, c := range crds {
		if !Converted(c) {
			continue
		}
		u := url
		c.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{
			Strategy: apiextensionsv1.WebhookConverter,
			Webhook: &apiextensionsv1.WebhookConversion{
				ClientConfig:             &apiextensionsv1.WebhookClientConfig{URL: &u, CABundle: caBundle},
				ConversionReviewVersions: []string{"v1"},
			},
		}
	}
	return nil
}
