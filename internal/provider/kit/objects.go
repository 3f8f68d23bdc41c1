package kit

import (
	"fmt"
	"reflect"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mpool-dev/mpool/internal/provider/contract"
)

// Objects is the part of a contract.Adapter that its Go types decide: the
// pool type P, the per-instance type I and its list L, and the Cluster's
// infrastructure type C (NoInfraCluster when the provider needs none),
// each a Kubernetes API struct whose pointer is the object. Its kinds are
// named after the types, as a scheme names them, and the contract's fields
// of its objects (InstanceFields, PoolFields) are theirs of the contract's
// names, as Cluster API reads an infra machine pool's. A provider's Adapter
// embeds it, so that its empty objects, their kinds and their contract
// fields are given once:
//
//	type Adapter struct {
//		kit.Objects[infrav1.AzureMachinePool, infrav1.AzureMachinePoolMachine, infrav1.AzureMachinePoolMachineList, infrav1.AzureCluster]
//	}
//
// The contract suite (contracttest.Adapter) checks that the types are
// objects of the contract's interfaces.
type Objects[P, I, L, C any] struct{}

// NoInfraCluster is Objects' C of a provider whose pools need no Cluster
// infrastructure object.
type NoInfraCluster struct{}

// NewPool implements contract.Adapter.
func (Objects[P, I, L, C]) NewPool() contract.Pool { return any(new(P)).(contract.Pool) }

// NewInstance implements contract.Adapter.
func (Objects[P, I, L, C]) NewInstance() contract.InstanceObject {
	return any(new(I)).(contract.InstanceObject)
}

// NewInstanceList implements contract.Adapter.
func (Objects[P, I, L, C]) NewInstanceList() client.ObjectList {
	return any(new(L)).(client.ObjectList)
}

// NewInfraCluster implements contract.Adapter: nil for NoInfraCluster.
func (Objects[P, I, L, C]) NewInfraCluster() client.Object {
	o, _ := any(new(C)).(client.Object)
	return o
}

// Named returns k with its Pool, Instance and InfraCluster kinds named
// after the types ("" for NoInfraCluster): an Adapter's Kinds gives the
// rest (the provider, the finalizers).
func (Objects[P, I, L, C]) Named(k contract.Kinds) contract.Kinds {
	k.Pool, k.Instance = kindOf[P](), kindOf[I]()
	if _, ok := any(new(C)).(client.Object); ok {
		k.InfraCluster = kindOf[C]()
	}
	return k
}

// InfraCluster returns the Cluster's infrastructure object infra (what
// GroupRef is given, contract.Owner.InfraCluster) as the provider's type,
// or an error saying that the pool needs it.
func (Objects[P, I, L, C]) InfraCluster(infra client.Object) (*C, error) {
	c, ok := any(infra).(*C)
	if !ok || c == nil {
		return nil, fmt.Errorf("an %s needs its Cluster's %s, got %T", kindOf[P](), kindOf[C](), infra)
	}
	return c, nil
}

// WriteInstanceSpec implements contract.Adapter: spec.instanceID and
// spec.providerID, which every per-instance kind has.
func (o Objects[P, I, L, C]) WriteInstanceSpec(obj contract.InstanceObject, instanceID, providerID string) {
	o.Instance(obj).WriteSpec(instanceID, providerID)
}

// Instance binds the per-instance object obj's fields of every
// per-instance kind (InstanceFields): I's fields of those names.
func (Objects[P, I, L, C]) Instance(obj contract.InstanceObject) InstanceFields {
	v := reflect.ValueOf(obj).Elem()
	return InstanceFields{
		Object:             obj,
		InstanceID:         field[string](v, "Spec", "InstanceID"),
		ProviderID:         field[string](v, "Spec", "ProviderID"),
		Ready:              field[bool](v, "Status", "Ready"),
		LatestModelApplied: field[bool](v, "Status", "LatestModelApplied"),
		Version:            field[string](v, "Status", "Version"),
		NodeRef:            field[*corev1.ObjectReference](v, "Status", "NodeRef"),
		FailureReason:      field[*string](v, "Status", "FailureReason"),
		FailureMessage:     field[*string](v, "Status", "FailureMessage"),
		Conditions:         field[[]metav1.Condition](v, "Status", "Conditions"),
	}
}

// Pool binds the pool p's fields of Cluster API's infra machine pool
// contract (PoolFields): P's fields of those names.
func (Objects[P, I, L, C]) Pool(p contract.Pool) PoolFields {
	v := reflect.ValueOf(p).Elem()
	return PoolFields{
		ProviderIDList:            field[[]string](v, "Spec", "ProviderIDList"),
		Ready:                     field[bool](v, "Status", "Ready"),
		Replicas:                  field[int32](v, "Status", "Replicas"),
		InfrastructureMachineKind: field[string](v, "Status", "InfrastructureMachineKind"),
		FailureReason:             field[*string](v, "Status", "FailureReason"),
		FailureMessage:            field[*string](v, "Status", "FailureMessage"),
		ObservedGeneration:        field[int64](v, "Status", "ObservedGeneration"),
	}
}

// field is the address of the field at path (names of nested struct
// fields) of the struct obj, of type T. A kind without it does not keep
// the contract, a bug the contract suite finds in every registered
// provider: it panics, naming the field.
func field[T any](obj reflect.Value, path ...string) *T {
	v := obj
	for _, name := range path {
		if v = v.FieldByName(name); !v.IsValid() {
			panic(fmt.Sprintf("kit: %s has no field %s", obj.Type(), strings.Join(path, ".")))
		}
	}
	p, ok := v.Addr().Interface().(*T)
	if !ok {
		panic(fmt.Sprintf("kit: %s's field %s is a %s, not a %T", obj.Type(), strings.Join(path, "."), v.Type(), *new(T)))
	}
	return p
}

// kindOf is the kind of the API type T: its Go name.
func kindOf[T any]() string { return reflect.TypeFor[T]().Name() }
