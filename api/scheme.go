package api

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	bootstrapv1beta1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta1"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1beta1 "sigs.k8s.io/cluster-api/api/core/v1beta1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	capainfrav1 "sigs.k8s.io/cluster-api-provider-aws/v2/api/v1beta2"
	capaexpinfrav1 "sigs.k8s.io/cluster-api-provider-aws/v2/exp/api/v1beta2"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
)

//go:generate bash ../hack/generate.sh

// AddToScheme registers every API group mpool serves with s: Cluster API's
// core (cluster.x-k8s.io) and kubeadm bootstrap (bootstrap.cluster.x-k8s.io)
// groups in v1beta2 (the hub mpool's controllers use) and v1beta1 (served for
// the seeds' manifests, converted by internal/conversion), both upstream's
// own types; and mpool's infrastructure.cluster.x-k8s.io v1beta1, with
// CAPA's v1beta2 of the AWS kinds it serves in both (addCAPA).
func AddToScheme(s *runtime.Scheme) error {
	for _, add := range []func(*runtime.Scheme) error{
		clusterv1.AddToScheme,
		clusterv1beta1.AddToScheme,
		bootstrapv1.AddToScheme,
		bootstrapv1beta1.AddToScheme,
		infrav1.AddToScheme,
		addCAPA,
	} {
		if err := add(s); err != nil {
			return fmt.Errorf("adding mpool API types to scheme: %w", err)
		}
	}
	return nil
}

// addCAPA registers the kinds mpool serves in Cluster API Provider AWS's
// v1beta2 as well as in its own v1beta1 (AWSCluster, AWSMachinePool,
// AWSManagedMachinePool), with CAPA's own Go types, and no other CAPA kind.
func addCAPA(s *runtime.Scheme) error {
	gv := capainfrav1.GroupVersion
	s.AddKnownTypes(gv,
		&capainfrav1.AWSCluster{}, &capainfrav1.AWSClusterList{},
		&capaexpinfrav1.AWSMachinePool{}, &capaexpinfrav1.AWSMachinePoolList{},
		&capaexpinfrav1.AWSManagedMachinePool{}, &capaexpinfrav1.AWSManagedMachinePoolList{},
	)
	metav1.AddToGroupVersion(s, gv)
	return nil
}
