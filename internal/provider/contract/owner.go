package contract

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
)

// PoolOwner returns the owner reference of a per-instance object to its
// infrastructure pool (of kind poolKind in the infrastructure API group), nil when it
// has none.
//
// The reference is a plain owner reference, not the controller's: Cluster
// API's MachinePool controller creates a Machine per per-instance object and
// its Machine controller makes that Machine the object's controller (it
// refuses an object another controller owns), as CAPA's AWSMachines of a
// pool are owned. Objects created by earlier mpool versions carry a
// controller reference to the pool; PoolOwner finds either.
func PoolOwner(obj metav1.Object, poolKind string) *metav1.OwnerReference {
	for _, ref := range obj.GetOwnerReferences() {
		if ref.Kind != poolKind {
			continue
		}
		if gv, err := schema.ParseGroupVersion(ref.APIVersion); err == nil && gv.Group == infrav1.GroupVersion.Group {
			r := ref
			return &r
		}
	}
	return nil
}

// PoolOwnerReference is the owner reference a per-instance object carries
// to its pool (see PoolOwner): blocking the pool's foreground deletion, not
// its controller.
func PoolOwnerReference(pool metav1.Object, gvk schema.GroupVersionKind) metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion:         gvk.GroupVersion().String(),
		Kind:               gvk.Kind,
		Name:               pool.GetName(),
		UID:                pool.GetUID(),
		BlockOwnerDeletion: ptr.To(true),
	}
}
