// Package v1beta1 contains the cluster.x-k8s.io/v1beta1 API types that mpool serves:
// Cluster and Machine (the fields a Cluster API user writes, so Cluster API manifests
// apply unchanged) and MachinePool, the object mpool reconciles. Field names and JSON
// tags follow Cluster API v1beta1; conditions are []metav1.Condition.
//
// +kubebuilder:object:generate=true
// +groupName=cluster.x-k8s.io
package v1beta1
