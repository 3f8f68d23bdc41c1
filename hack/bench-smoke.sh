#!/usr/bin/env bash
# Benchmark smoke run: every Go benchmark of the repository once
# (-benchtime 1x) at a small size (MPOOL_BENCH_SMALL=1), so that a benchmark
# that no longer runs fails CI. The figures it prints mean nothing.
#
# Fails when go test fails (a benchmark failed, panicked or did not build, or
# a package's control plane did not start), when a benchmark or
# sub-benchmark skipped itself, or when a `func Benchmark...` of the
# repository printed no result. Prints the elapsed time.
#
# The same build flags as hack/test.sh's go test, so after it nothing is
# compiled again (go test still links each test binary again). Only the
# packages that have benchmarks run (-run '^$': no tests), two at a time
# (-p 2, as the tests do: 6m11s where one at a time took 6m49s). Run on its
# own it takes about 5 minutes on the 2-core machine.
set -euo pipefail
cd "$(dirname "$0")/.."

start=$(date +%s)
elapsed() {
	local s=$(($(date +%s) - start))
	printf '%dm%02ds' $((s / 60)) $((s % 60))
}

module=$(go list -m)

# Every benchmark function, as "<import path> <name>" lines.
expected=$(
	find . \( -name .git -o -name vendor -o -name testdata -o -name '_*' \) -prune -o -name '*_test.go' -print0 |
		{ xargs -0 grep -HE '^func Benchmark([^a-z(][A-Za-z0-9_]*)?\(' || true; } |
		sed -E 's#^\./##; s#^([^:]*)/[^/:]*:func (Benchmark[A-Za-z0-9_]*)\(.*#'"$module"'/\1 \2#; s#^[^/:]*:func (Benchmark[A-Za-z0-9_]*)\(.*#'"$module"' \1#' |
		sort -u
)
if [ -z "$expected" ]; then
	echo "bench-smoke: no benchmarks found" >&2
	exit 1
fi
pkgs=$(echo "$expected" | cut -d' ' -f1 | sort -u)
echo "==> benchmark smoke run: $(echo "$expected" | wc -l) benchmarks in $(echo "$pkgs" | wc -l) packages (MPOOL_BENCH_SMALL=1, -benchtime 1x)"

log=$(mktemp)
trap 'rm -f "$log"' EXIT

# -v prints "--- SKIP" for skipped benchmarks, which are silent otherwise;
# with pipefail, status is go test's.
status=0
# shellcheck disable=SC2086 # one word per package
MPOOL_BENCH_SMALL=1 go test -p 2 -count=1 -timeout 20m -run '^$' -bench . -benchtime 1x -v $pkgs 2>&1 | tee "$log" || status=$?

failed=0
if [ "$status" != 0 ]; then
	echo "bench-smoke: go test failed (exit $status)" >&2
	failed=1
fi
if skipped=$(grep -E '^[[:space:]]*--- SKIP: Benchmark' "$log"); then
	echo "bench-smoke: benchmarks skipped themselves:" >&2
	echo "$skipped" >&2
	failed=1
fi

# The benchmarks that printed a result, as "<import path> <name>": a result
# line is the name (with sub-benchmark and -GOMAXPROCS suffixes) and a tab,
# printed once the benchmark's run succeeded. Packages start with "pkg: ".
ran=$(awk '
	/^pkg: / { pkg = $2; next }
	/^Benchmark[^ \t]*[ ]*\t/ { name = $1; sub(/[\/-].*/, "", name); print pkg " " name }
' "$log" | sort -u)
if missing=$(comm -23 <(echo "$expected") <(echo "$ran") | grep .); then
	echo "bench-smoke: benchmarks that printed no result:" >&2
	echo "$missing" | sed 's/^/  /' >&2
	failed=1
fi

if [ "$failed" != 0 ]; then
	echo "bench-smoke: FAIL after $(elapsed)" >&2
	exit 1
fi
echo "bench-smoke: all $(echo "$expected" | wc -l) benchmarks ran, in $(elapsed)"
