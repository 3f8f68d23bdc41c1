#!/usr/bin/env bash
# The test suite: formatting, vet, generated files, then the packages' tests against
# the embedded kube-apiserver (built from source on first use).
#
#   hack/test.sh                 every package (what CI runs, through .ci/run)
#   hack/test.sh ./api/...       only these packages' tests (gofmt and vet still cover
#                                the whole module)
#
# It proves on every run that the repository stands alone: it copies the repository
# (the files git tracks plus untracked files that are not ignored, as they are in the
# working tree; without git, the whole tree but .git) into a temporary directory that
# has no sibling folders, and runs the steps there. The copy is kept in a stable place,
# printed at the start, so Go's build cache stays warm (it keys compiled packages on
# their source directory); it is wiped and refilled on every run.
#
# Tests that compare the examples with the upstream documents they come from (the
# seeds, outside the repository) find them through MPOOL_SEEDS_DIR; when it is unset
# and ../shared/seeds exists beside the checkout, it is passed on to the copy. Where
# CI=true they are required; elsewhere they skip without them.
#
# MPOOL_TEST_IN_COPY=1 runs the steps in place; the copy's own run is started so.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)

# ---------------------------------------------------------------------------------
# Stage 1: copy the repository to a directory with no siblings and run there.

# copy_files copies the repository at $1 into the empty directory $2.
copy_files() {
  local src=$1 dst=$2
  if command -v git >/dev/null 2>&1 &&
    [ "$(git -C "$src" rev-parse --show-toplevel 2>/dev/null)" = "$src" ]; then
    # Files git tracks (as they are in the working tree; deleted ones skipped) and
    # untracked files that are not ignored: what a commit of the tree would hold.
    git -C "$src" ls-files -z --cached --others --exclude-standard |
      while IFS= read -r -d '' f; do
        if [ -e "$src/$f" ] || [ -L "$src/$f" ]; then printf '%s\0' "$f"; fi
      done |
      tar -C "$src" --null -T - -cf - | tar -C "$dst" -xf -
  else
    echo "    (git is not available or this is not the top of a git checkout: copying the whole tree but .git)"
    tar -C "$src" --exclude=./.git -cf - . | tar -C "$dst" -xf -
  fi
}

# path_key prints a short, stable key for a path.
path_key() { printf '%s' "$1" | cksum | cut -d' ' -f1; }

if [ -z "${MPOOL_TEST_IN_COPY:-}" ]; then
  tmp=${TMPDIR:-/tmp}
  tmp=${tmp%/}
  root="$tmp/mpool-standalone/$(path_key "$repo")"
  cleanup=""
  mkdir -p "$tmp/mpool-standalone"
  # One run at a time owns the stable copy; a concurrent run of the same checkout
  # takes a throwaway directory instead of wiping the copy under the first one.
  if command -v flock >/dev/null 2>&1; then
    exec 9>"$root.lock"
    if ! flock -n 9; then
      root=$(mktemp -d "$tmp/mpool-standalone/run.XXXXXX")
      cleanup=$root
      echo "==> the stable copy is in use by another run; using $root (cold build cache)"
    fi
  fi
  case $root in
    "$tmp"/mpool-standalone/?*) ;;
    *) echo "refusing to wipe unexpected path $root" >&2; exit 1 ;;
  esac
  rm -rf "$root"
  copy="$root/mpool"
  mkdir -p "$copy"
  echo "==> standalone copy: $copy (no sibling folders)"
  copy_files "$repo" "$copy"

  # The seeds: an explicit MPOOL_SEEDS_DIR (made absolute), else the sibling directory.
  if [ -n "${MPOOL_SEEDS_DIR:-}" ]; then
    case $MPOOL_SEEDS_DIR in /*) ;; *) MPOOL_SEEDS_DIR="$PWD/$MPOOL_SEEDS_DIR" ;; esac
    export MPOOL_SEEDS_DIR
  elif [ -d "$repo/../shared/seeds" ]; then
    MPOOL_SEEDS_DIR=$(cd "$repo/../shared/seeds" && pwd -P)
    export MPOOL_SEEDS_DIR
  fi
  echo "    seeds: ${MPOOL_SEEDS_DIR:-none (MPOOL_SEEDS_DIR unset, no $repo/../shared/seeds): the tests comparing with them skip, or fail where CI=true}"

  # Package paths into this checkout become paths into the copy.
  args=()
  for a in "$@"; do
    case $a in
      "$repo") args+=(".") ;;
      "$repo"/*) args+=("./${a#"$repo"/}") ;;
      *) args+=("$a") ;;
    esac
  done

  status=0
  MPOOL_TEST_IN_COPY=1 bash "$copy/hack/test.sh" ${args[@]+"${args[@]}"} || status=$?
  if [ -n "$cleanup" ]; then rm -rf "$cleanup"; fi
  exit "$status"
fi

# ---------------------------------------------------------------------------------
# Stage 2: the steps, in the copy (or in place with MPOOL_TEST_IN_COPY=1).
cd "$repo"

# The copy stands alone only if nothing sits beside it.
case $repo in
  */mpool-standalone/*)
    siblings=$(ls -A "$(dirname "$repo")" | grep -vxF "$(basename "$repo")" || true)
    if [ -n "$siblings" ]; then
      echo "the standalone copy $repo has siblings: $siblings" >&2; exit 1
    fi ;;
esac

if [ "$#" -gt 0 ]; then pkgs=("$@"); else pkgs=(./...); fi

step_gofmt() {
  local unformatted
  unformatted=$(find . -name '*.go' -not -path './.git/*' -print0 | xargs -0 gofmt -l)
  if [ -n "$unformatted" ]; then
    echo "gofmt would change:"; echo "$unformatted"; return 1
  fi
}

step_vet() { go vet ./...; }

step_prepare() { go run ./cmd/mpool prepare; }

# 60 minutes: on a cold Go build cache a test binary may first build upstream
# managers from source in its TestMain (test/peer: Cluster API's and CAPA's).
step_test() { go test -p 2 -timeout 60m -count=1 "${pkgs[@]}"; }

# Every benchmark once at a small size, so a benchmark that no longer runs fails
# the build. Skipped when only some packages are tested.
step_bench() {
  if [ "${pkgs[*]}" != "./..." ]; then
    echo "    (skipped: only ${pkgs[*]} tested)"
    return 0
  fi
  bash hack/bench-smoke.sh
}

# The steps, in order: "name|what it does". To add one, write step_<name> above and
# list it here.
steps=(
  "gofmt|gofmt"
  "vet|go vet"
  "prepare|control-plane binaries (built from source and cached on first use)"
  "test|go test ${pkgs[*]} (the import rules in hack/layers included)"
  "bench|every benchmark once at a small size (hack/bench-smoke.sh)"
)

for step in "${steps[@]}"; do
  echo "==> ${step#*|}"
  "step_${step%%|*}"
done
