package infrapool

// What the engine does in the management cluster for every provider: it
// reads the owner MachinePools, their Clusters and Machines and the
// bootstrap data Secrets, records events, and sets the OwnerRemediated
// condition of the pool Machines it remediates. Each provider declares the
// verbs on its own kinds beside its Adapter.
//
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=machinepools;clusters,verbs=get;list;watch
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=machines,verbs=get;list;watch;delete
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=machines/status,verbs=get;update;patch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
