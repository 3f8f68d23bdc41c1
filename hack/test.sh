#!/usr/bin/env bash
# The test suite: formatting, vet, generated files, then every package's tests
# against the embedded kube-apiserver (built from source on first use).
set -euo pipefail
cd "$(dirname "$0")/.."

echo "==> gofmt"
unformatted=$(gofmt -l $(find . -name '*.go' -not -path './.git/*'))
if [ -n "$unformatted" ]; then
  echo "gofmt would change:"; echo "$unformatted"; exit 1
fi

echo "==> go vet"
go vet ./...

echo "==> control-plane binaries (built from source and cached on first use)"
go run ./cmd/mpool prepare

echo "==> go test"
go test -p 2 -timeout 45m -count=1 ./...
