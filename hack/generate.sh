#!/usr/bin/env bash
# Regenerates the deepcopy functions and the CRD manifests from the Go types in api/.
# Run from anywhere; the generated files are committed and checked by api/apitest.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

go tool controller-gen object:headerFile=hack/boilerplate.go.txt paths=./api/...
go tool controller-gen crd paths=./api/... output:crd:artifacts:config=config/crd/bases
go tool controller-gen rbac:roleName=manager-role paths=./internal/... output:rbac:artifacts:config=config/rbac
