package v1beta1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of the types in this package.
	GroupVersion = schema.GroupVersion{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta1"}

	// SchemeBuilder registers the types in this package with a scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds the types in this package to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func init() {
	SchemeBuilder.Register(
		&AzureMachinePool{}, &AzureMachinePoolList{},
		&AzureMachinePoolMachine{}, &AzureMachinePoolMachineList{},
		&AWSMachinePool{}, &AWSMachinePoolList{},
		&AWSManagedMachinePool{}, &AWSManagedMachinePoolList{},
		&LocalMachinePool{}, &LocalMachinePoolList{},
		&LocalMachinePoolMachine{}, &LocalMachinePoolMachineList{},
	)
}
