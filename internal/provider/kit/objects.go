package kit

import (
	"fmt"
	"reflect"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mpool-dev/mpool/internal/provider/contract"
)

// Objects is the part of a contract.Adapter that its Go types decide: the
// pool type P, the per-instance type I and its list L, and the Cluster's
// infrastructure type C (NoInfraCluster when the provider needs none),
// each a Kubernetes API struct whose pointer is the object. Its kinds are
// named after the types, as a scheme names them. A provider's Adapter
// embeds it, so that its empty objects and their kinds are given once:
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

// kindOf is the kind of the API type T: its Go name.
func kindOf[T any]() string { return reflect.TypeFor[T]().Name() }
