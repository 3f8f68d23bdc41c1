package workload

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// workloadClient reads Nodes from the cluster's cache and does everything
// else directly against the API server.
type workloadClient struct {
	client.Client
	nodes cache.Cache
}

// Get implements client.Reader.
func (w *workloadClient) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if _, ok := obj.(*corev1.Node); ok {
		return w.nodes.Get(ctx, key, obj, opts...)
	}
	return w.Client.Get(ctx, key, obj, opts...)
}

// List implements client.Reader.
func (w *workloadClient) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if _, ok := list.(*corev1.NodeList); ok {
		return w.nodes.List(ctx, list, opts...)
	}
	return w.Client.List(ctx, list, opts...)
}
