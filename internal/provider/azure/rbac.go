package azure

// The Azure provider's own RBAC; the engine's shared rules are in
// internal/controller/infrapool/rbac.go.
//
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=azuremachinepools;azuremachinepoolmachines,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=azuremachinepools/status;azuremachinepools/finalizers;azuremachinepoolmachines/status;azuremachinepoolmachines/finalizers,verbs=get;update;patch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=azureclusters;azureclusteridentities,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch
// The Cluster controller (standalone) marks the infrastructure cluster ready: mpool provisions nothing for it.
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=azureclusters/status,verbs=get;update;patch
