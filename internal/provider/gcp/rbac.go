package gcp

// The GCP provider's own RBAC; the engine's shared rules (Secrets,
// MachinePools, events, ...) are in internal/controller/infrapool/rbac.go.
//
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=gcpmachinepools;gcpmachinepoolmachines,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=gcpmachinepools/status;gcpmachinepools/finalizers;gcpmachinepoolmachines/status;gcpmachinepoolmachines/finalizers,verbs=get;update;patch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=gcpclusters,verbs=get;list;watch
// The Cluster controller (standalone) marks the infrastructure cluster ready: mpool provisions nothing for it.
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=gcpclusters/status,verbs=get;update;patch
