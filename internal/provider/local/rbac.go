package local

// What the engine needs in the management cluster for the local provider's
// kinds; what it needs for every provider is declared with the engine
// (internal/controller/infrapool). Workload-cluster access (Nodes, Pods,
// evictions) goes through the cluster's own kubeconfig.
//
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=localmachinepools;localmachinepoolmachines,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=localmachinepools/status;localmachinepools/finalizers;localmachinepoolmachines/status;localmachinepoolmachines/finalizers,verbs=get;update;patch
