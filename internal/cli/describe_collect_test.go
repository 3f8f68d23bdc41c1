package cli

import (
	"encoding/json"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
)

// TestGenericInstances reads instances of infra kinds other than the local
// one through the generic decoding: Azure's per-instance objects report a
// provisioningState and no zone, AWS pools have no per-instance objects and
// list their instances in status.instances.
func TestGenericInstances(t *testing.T) {
	tests := []struct {
		name string
		obj  map[string]any
		pool bool // obj is an infra pool whose status.instances are read
		want []InstanceView
	}{
		{
			name: "an AzureMachinePoolMachine",
			obj: map[string]any{
				"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1",
				"kind":       "AzureMachinePoolMachine",
				"metadata": map[string]any{
					"name":        "pool-0",
					"annotations": map[string]any{"cluster.x-k8s.io/delete-machine": "yes"},
				},
				"spec": map[string]any{"providerID": "azure:///vmss/0", "instanceID": "0"},
				"status": map[string]any{
					"provisioningState":  "Succeeded",
					"latestModelApplied": false,
					"ready":              true,
					"version":            "v1.37.1",
					"nodeRef":            map[string]any{"name": "pool-vmss000000"},
				},
			},
			want: []InstanceView{{
				Name: "pool-0", InstanceID: "0", ProviderID: "azure:///vmss/0", State: "Succeeded",
				UpToDate: ptr.To(false), Ready: true, Version: "v1.37.1", MarkedForDeletion: true,
				Node: &NodeView{Name: "pool-vmss000000"},
			}},
		},
		{
			name: "an AWSMachinePool's status.instances",
			pool: true,
			obj: map[string]any{
				"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1",
				"kind":       "AWSMachinePool",
				"metadata":   map[string]any{"name": "pool"},
				"status": map[string]any{
					"ready":     true,
					"replicas":  int64(2),
					"instances": []any{map[string]any{"instanceID": "i-1", "version": "v1.37.1"}, map[string]any{"instanceID": "i-2"}},
				},
			},
			want: []InstanceView{{Name: "i-1", InstanceID: "i-1", Version: "v1.37.1"}, {Name: "i-2", InstanceID: "i-2"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := &unstructured.Unstructured{Object: tt.obj}
			var got []InstanceView
			if tt.pool {
				var p infraPoolObject
				if err := decode(u, &p); err != nil {
					t.Fatal(err)
				}
				for _, in := range p.Status.Instances {
					got = append(got, instanceFromStatus(in))
				}
			} else {
				var o instanceObject
				if err := decode(u, &o); err != nil {
					t.Fatal(err)
				}
				in := instanceFromObject(&o)
				in.Created = nil
				got = append(got, in)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %s\nwant %s", spew(got), spew(tt.want))
			}
		})
	}
}

func spew(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
