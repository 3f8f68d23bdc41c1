// Package crd embeds the CustomResourceDefinitions mpool serves so that `mpool up`
// and the test environment can install them without files on disk: mpool's own
// infrastructure kinds (config/crd/bases, generated from api/) and upstream Cluster
// API's core and kubeadm bootstrap CRDs (config/crd/core and config/crd/bootstrap,
// copied unchanged from the pinned sigs.k8s.io/cluster-api module by
// hack/generate.sh), each labelled as clusterctl expects (Labels).
package crd

import (
	"bufio"
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sort"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

//go:embed bases/*.yaml core/*.x-k8s.io_*.yaml bootstrap/*.x-k8s.io_*.yaml
var bases embed.FS

//go:embed policies/*.yaml
var policies embed.FS

// CRDs returns every CRD mpool serves, sorted by file name, with Labels applied.
// Each call returns fresh objects.
func CRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	var names []string
	for _, pattern := range []string{"bases/*.yaml", "core/*.x-k8s.io_*.yaml", "bootstrap/*.x-k8s.io_*.yaml"} {
		n, err := fs.Glob(bases, pattern)
		if err != nil {
			return nil, fmt.Errorf("listing embedded CRDs: %w", err)
		}
		names = append(names, n...)
	}
	sort.Slice(names, func(i, j int) bool { return path.Base(names[i]) < path.Base(names[j]) })
	out := make([]*apiextensionsv1.CustomResourceDefinition, 0, len(names))
	for _, name := range names {
		b, err := bases.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("reading embedded CRD %s: %w", path.Base(name), err)
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(b, crd); err != nil {
			return nil, fmt.Errorf("decoding embedded CRD %s: %w", path.Base(name), err)
		}
		if crd.Labels == nil {
			crd.Labels = map[string]string{}
		}
		for k, v := range Labels(crd.Spec.Group) {
			crd.Labels[k] = v
		}
		out = append(out, crd)
	}
	return out, nil
}

// StandaloneOnlyPolicies names the admission policies (and their bindings)
// that only a standalone manager installs: they refuse what mpool does not
// serve but upstream Cluster API does, beside it.
var StandaloneOnlyPolicies = []string{"mpool-machinehealthcheck-remediation"}

// RetiredPolicies names the admission policies (and their bindings) that
// earlier releases installed and a manager removes: the two that judged a
// Flexible AzureMachinePool's Kubernetes version by taking the objects of the
// other kind as parameters, each creation costing one evaluation per pool of
// the namespace (a validating webhook does it now,
// internal/admission/flexibleversion).
var RetiredPolicies = []string{"mpool-machinepool-azure-flexible-version", "mpool-azuremachinepool-flexible-version"}

// AdmissionPolicies returns the ValidatingAdmissionPolicies of config/crd/policies and
// their bindings, policies first, each file's in order, files sorted by name. They check
// what the CRDs' own rules cannot (upstream's CRDs stay as upstream ships them; a
// MachineHealthCheck remediating a pool's Machines); install them after the CRDs. Each
// call returns fresh objects.
func AdmissionPolicies() ([]*admissionregistrationv1.ValidatingAdmissionPolicy, []*admissionregistrationv1.ValidatingAdmissionPolicyBinding, error) {
	names, err := fs.Glob(policies, "policies/*.yaml")
	if err != nil {
		return nil, nil, fmt.Errorf("listing embedded admission policies: %w", err)
	}
	sort.Strings(names)
	var pols []*admissionregistrationv1.ValidatingAdmissionPolicy
	var binds []*admissionregistrationv1.ValidatingAdmissionPolicyBinding
	for _, name := range names {
		b, err := policies.ReadFile(name)
		if err != nil {
			return nil, nil, fmt.Errorf("reading embedded %s: %w", path.Base(name), err)
		}
		err = Documents(b, func(kind string, doc []byte) error {
			switch kind {
			case "ValidatingAdmissionPolicy":
				p := &admissionregistrationv1.ValidatingAdmissionPolicy{}
				if err := yaml.UnmarshalStrict(doc, p); err != nil {
					return err
				}
				pols = append(pols, p)
			case "ValidatingAdmissionPolicyBinding":
				bd := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{}
				if err := yaml.UnmarshalStrict(doc, bd); err != nil {
					return err
				}
				binds = append(binds, bd)
			default:
				return fmt.Errorf("holds a %s, want admission policies and bindings only", kind)
			}
			return nil
		})
		if err != nil {
			return nil, nil, fmt.Errorf("embedded %s: %w", path.Base(name), err)
		}
	}
	return pols, binds, nil
}

// Documents calls each with the kind and the bytes of every document of a
// multi-document YAML manifest, skipping documents that hold comments only;
// the first error stops it and is returned.
func Documents(manifest []byte, each func(kind string, doc []byte) error) error {
	dec := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(manifest)))
	for {
		doc, err := dec.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		var head struct {
			Kind string `json:"kind"`
		}
		if err := yaml.Unmarshal(doc, &head); err != nil {
			return err
		}
		if head.Kind == "" {
			continue // comments only
		}
		if err := each(head.Kind, doc); err != nil {
			return err
		}
	}
}
