package aks

// The AKS provider's RBAC; the engine's (MachinePools, events, ...) is in
// internal/controller/infrapool/rbac.go.
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=azuremanagedmachinepools;azuremanagedmachinepoolmachines,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=azuremanagedmachinepools/status;azuremanagedmachinepools/finalizers;azuremanagedmachinepoolmachines/status;azuremanagedmachinepoolmachines/finalizers,verbs=get;update;patch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=azuremanagedcontrolplanes;azureclusteridentities,verbs=get;list;watch
// The Cluster controller (standalone) marks the infrastructure cluster ready: mpool provisions nothing for it.
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=azuremanagedcontrolplanes/status,verbs=get;update;patch
