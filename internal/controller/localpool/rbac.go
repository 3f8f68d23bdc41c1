package localpool

// What the LocalMachinePool and LocalMachinePoolMachine controllers (and the
// infrapool engine they run) do in the management cluster. Workload-cluster
// access (Nodes, Pods, evictions) goes through the cluster's own kubeconfig.
//
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=localmachinepools;localmachinepoolmachines,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=localmachinepools/status;localmachinepools/finalizers;localmachinepoolmachines/status;localmachinepoolmachines/finalizers,verbs=get;update;patch
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=machinepools;clusters;machines,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
