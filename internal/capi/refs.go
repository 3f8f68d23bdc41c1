package capi

import (
	"context"
	"fmt"
	"sort"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// contractLabels are the CRD labels through which a provider declares, per
// Cluster API contract, which of its API versions follow that contract
// (value: versions joined by "_", for example "v1beta1_v1beta2"); newest
// contract first. Cluster API v1.14 speaks contract v1beta2 and still
// accepts providers of contract v1beta1.
var contractLabels = []string{
	clusterv1.GroupVersion.Group + "/v1beta2",
	clusterv1.GroupVersion.Group + "/v1beta1",
}

// APIVersion returns the apiVersion under which mpool reads objects of gk,
// as Cluster API does: the newest version its CRD's contract label names
// (the newest compatible contract first); a CRD without contract labels is
// read at the API server's preferred version. c must be able to read
// CustomResourceDefinitions' metadata and map kinds to resources.
func APIVersion(ctx context.Context, c client.Client, gk schema.GroupKind) (string, error) {
	mapping, err := c.RESTMapper().RESTMapping(gk)
	if err != nil {
		return "", fmt.Errorf("no API serves kind %s: %w", gk, err)
	}
	crd := &metav1.PartialObjectMetadata{}
	crd.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
	name := mapping.Resource.Resource + "." + gk.Group
	if err := c.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
		if client.IgnoreNotFound(err) == nil {
			// Not a CRD (a built-in or aggregated API): the preferred version.
			return mapping.GroupVersionKind.GroupVersion().String(), nil
		}
		return "", fmt.Errorf("reading CustomResourceDefinition %s: %w", name, err)
	}
	for _, l := range contractLabels {
		if v := latestVersion(crd.GetLabels()[l]); v != "" {
			return schema.GroupVersion{Group: gk.Group, Version: v}.String(), nil
		}
	}
	return mapping.GroupVersionKind.GroupVersion().String(), nil
}

// latestVersion returns the newest Kubernetes API version of a contract
// label's value ("v1alpha1_v1beta1" -> "v1beta1"), or "".
func latestVersion(value string) string {
	var vs []string
	for _, v := range strings.Split(value, "_") {
		if v = strings.TrimSpace(v); v != "" {
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 {
		return ""
	}
	sort.Slice(vs, func(i, j int) bool { return version.CompareKubeAwareVersionStrings(vs[i], vs[j]) > 0 })
	return vs[0]
}

// RefGVK returns the GroupVersionKind of the object ref names, its version
// resolved by APIVersion.
func RefGVK(ctx context.Context, c client.Client, ref clusterv1.ContractVersionedObjectReference) (schema.GroupVersionKind, error) {
	av, err := APIVersion(ctx, c, schema.GroupKind{Group: ref.APIGroup, Kind: ref.Kind})
	if err != nil {
		return schema.GroupVersionKind{}, err
	}
	return schema.FromAPIVersionAndKind(av, ref.Kind), nil
}

// RefersTo reports whether ref names an object of gk (its group and kind).
func RefersTo(ref clusterv1.ContractVersionedObjectReference, gk schema.GroupKind) bool {
	return ref.Name != "" && ref.Kind == gk.Kind && ref.APIGroup == gk.Group
}

// PlacementRef returns the Cluster's reference to its object of gk: its
// spec.infrastructureRef when that names one (mpool's own shape, where the
// object that places the pools is the infrastructure object), else its
// spec.controlPlaneRef (the shape of CAPZ's and CAPA's managed clusters,
// where the infrastructure object is an AzureManagedCluster or
// AWSManagedCluster and the control plane names the cloud's cluster). ok is
// false when neither names one.
func PlacementRef(c *clusterv1.Cluster, gk schema.GroupKind) (ref clusterv1.ContractVersionedObjectReference, ok bool) {
	for _, r := range []clusterv1.ContractVersionedObjectReference{c.Spec.InfrastructureRef, c.Spec.ControlPlaneRef} {
		if RefersTo(r, gk) {
			return r, true
		}
	}
	return clusterv1.ContractVersionedObjectReference{}, false
}
