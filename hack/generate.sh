#!/usr/bin/env bash
# Regenerates the deepcopy functions and the CRD manifests from the Go types in api/, and
# adds Cluster API Provider AWS's own v1beta2 versions to the AWS CRDs (hack/capaversions), and
# copies upstream Cluster API's own CRDs for the core and kubeadm bootstrap kinds mpool serves
# (from the pinned sigs.k8s.io/cluster-api module). Run from anywhere; the generated files are
# committed and checked by api/apitest.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

go tool controller-gen object:headerFile=hack/boilerplate.go.txt paths=./api/...
go tool controller-gen crd paths=./api/... output:crd:artifacts:config=config/crd/bases
# CAPA's own served versions (v1beta2) of the AWS kinds it defines too, from the pinned module.
go run ./hack/capaversions config/crd/bases
go tool controller-gen rbac:roleName=manager-role paths=./internal/... output:rbac:artifacts:config=config/rbac

capi="$(go list -m -f '{{.Dir}}' sigs.k8s.io/cluster-api)"
for f in clusters machines machinepools machinesets machinedeployments machinehealthchecks; do
	install -m 0644 "${capi}/core/config/crd/bases/cluster.x-k8s.io_${f}.yaml" config/crd/core/
done
for f in kubeadmconfigs kubeadmconfigtemplates; do
	install -m 0644 "${capi}/bootstrap/kubeadm/config/crd/bases/bootstrap.cluster.x-k8s.io_${f}.yaml" config/crd/bootstrap/
done
