package aws

// The AWS provider's own RBAC; the engine's shared rules (Secrets,
// MachinePools, events, ...) are in internal/controller/infrapool/rbac.go.
//
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=awsmachinepools;awsmachinepoolmachines,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=awsmachinepools/status;awsmachinepools/finalizers;awsmachinepoolmachines/status;awsmachinepoolmachines/finalizers,verbs=get;update;patch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=awsclusters;awsclusterstaticidentities,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch
// The Cluster controller (standalone) marks the infrastructure cluster ready: mpool provisions nothing for it.
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=awsclusters/status,verbs=get;update;patch
