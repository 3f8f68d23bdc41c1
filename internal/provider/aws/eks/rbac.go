package eks

// The EKS provider's RBAC; the engine's (MachinePools, events, ...) is in
// internal/controller/infrapool/rbac.go.
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=awsmanagedmachinepools;awsmanagedmachinepoolmachines,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=awsmanagedmachinepools/status;awsmanagedmachinepools/finalizers;awsmanagedmachinepoolmachines/status;awsmanagedmachinepoolmachines/finalizers,verbs=get;update;patch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=awsmanagedcontrolplanes;awsclusterstaticidentities,verbs=get;list;watch
// The Cluster controller (standalone) marks the infrastructure cluster ready: mpool provisions nothing for it.
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=awsmanagedcontrolplanes/status,verbs=get;update;patch
