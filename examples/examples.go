// Package examples embeds the example manifests that `mpool up` applies, so
// the binary works outside a checkout, and decodes manifests like them.
package examples

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// LocalMachinePool is examples/v1beta2/local-machinepool.yaml, the v1beta2
// form of examples/local/machinepool.yaml (internal/conversion's golden test
// keeps the two in step): a MachinePool, LocalMachinePool and KubeadmConfig
// for the Cluster "local" that `mpool up` registers, as its sample pool (the
// local flavor of `mpool generate` for the name local) creates them.
//
//go:embed v1beta2/local-machinepool.yaml
var LocalMachinePool []byte

// Objects decodes a multi-document YAML (or JSON) manifest into its
// objects, in order, skipping empty documents. Each object gets namespace
// ns when ns is not empty.
func Objects(manifest []byte, ns string) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(manifest), 4096)
	var out []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, fmt.Errorf("decoding document %d: %w", len(out)+1, err)
		}
		if len(u.Object) == 0 {
			continue
		}
		if ns != "" {
			u.SetNamespace(ns)
		}
		out = append(out, u)
	}
}
