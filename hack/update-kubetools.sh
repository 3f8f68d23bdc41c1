#!/usr/bin/env bash
# Re-tidies the embedded module that builds kube-apiserver and etcd, after a
# version bump in internal/kubeenv/kubetools/go.mod.txt (and the constants in
# internal/kubeenv/binaries.go). Its files carry .txt so that it is not a
# nested module of mpool's own.
set -euo pipefail
cd "$(dirname "$0")/../internal/kubeenv/kubetools"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/etcd"
cp go.mod.txt "$tmp/go.mod"; cp go.sum.txt "$tmp/go.sum"; cp etcd/main.go.txt "$tmp/etcd/main.go"
(cd "$tmp" && GOWORK=off go mod tidy)
cp "$tmp/go.mod" go.mod.txt; cp "$tmp/go.sum" go.sum.txt
