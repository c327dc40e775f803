#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Run mrkit's KUnit suites under UML with the kernel's own kunit.py.
#   kunit.sh normal|debug [6.1|6.12]
# The tree is Debian's linux-source of that kernel (default 6.1), each
# with its own lock and build directories in the cache; the logs of 6.12
# are .check/kunit-VARIANT-6.12.*, and its report lines say VARIANT-6.12.
# MRKIT_KUNIT_FILTER (a kunit.py suite glob, default mrkit*) runs fewer
# suites while iterating; the verdict then expects only those.
# MRKIT_KUNIT_BUILD_ONLY=1 builds the UML kernel and runs nothing.
# debug adds KASAN, PROVE_LOCKING, UBSAN, DEBUG_LIST, DEBUG_OBJECTS, ...
# Build directories live in the cache next to the tree and are reused, so
# a rerun only rebuilds what changed.  The verdict (failures, skips,
# missing suites, kernel splats) comes from scripts/mrkit_report/kunit.py.
set -euo pipefail

variant=${1:?normal or debug}
series=${2:-6.1}
label=$variant
[ "$series" = 6.1 ] || label=$variant-$series
proj=$(cd "$(dirname "$0")/../.." && pwd)
cache=${MRKIT_CACHE:-/var/cache/mrkit}
tree=$("$proj/scripts/host/prep-tree.sh" "$series")
ver=$(basename "$(dirname "$tree")")
ver=${ver#src-}
# shellcheck source=scripts/host/uml-lock.sh
. "$proj/scripts/host/uml-lock.sh"
uml_lock "$tree"
out=$proj/.check

cfg=(--kunitconfig="$proj/kunit/.kunitconfig")
cfgfiles=("$proj/kunit/.kunitconfig")
if [ "$variant" = debug ]; then
	cfg+=(--kunitconfig="$proj/kunit/debug.config")
	cfgfiles+=("$proj/kunit/debug.config")
	if [ -f "$proj/kunit/debug-$series.config" ]; then
		cfg+=(--kunitconfig="$proj/kunit/debug-$series.config")
		cfgfiles+=("$proj/kunit/debug-$series.config")
	fi
fi
build=$(uml_build_dir "$variant" "${cfgfiles[@]}")
mkdir -p "$build" "$out"

log=$out/kunit-$label.log
if [ -n "${MRKIT_KUNIT_BUILD_ONLY:-}" ]; then
	if (cd "$tree" && python3 tools/testing/kunit/kunit.py build "${cfg[@]}" \
		--build_dir="$build" --jobs="$(nproc)") > "$log" 2>&1; then
		echo "kunit ($label): UML kernel built in $build"
		exit 0
	fi
	tail -n 40 "$log"
	echo "kunit ($label): the UML kernel does not build; see $log"
	exit 1
fi
json=$out/kunit-$label.json
klog=$out/kunit-$label-kernel.log
rm -f "$json" "$build/test.log" "$klog"
rc=0
(cd "$tree" && python3 tools/testing/kunit/kunit.py run "${cfg[@]}" \
	--build_dir="$build" --jobs="$(nproc)" --timeout=900 \
	--json="$json" --kernel_args=ib_core.force_mr=1 \
	"${MRKIT_KUNIT_FILTER:-mrkit*}") > "$log" 2>&1 || rc=$?
# The kernel's log, kept with this checkout (the build directory is shared).
cp "$build/test.log" "$klog" 2>/dev/null || true
# The parsed per-suite results, as kunit.py printed them.
sed -n '/=\+ mrkit/,$p' "$log" | grep -E '^\[|Elapsed|Ran ' | grep -v '^\[[0-9:]*\] *$' | tail -n 200 || true
if [ ! -s "$json" ]; then
	echo "kunit ($label): kunit.py produced no results (exit $rc); see $log"
	tail -n 40 "$log"
	exit 1
fi

# W=1 and sparse over mrkit's own directory, tests included, in this tree.
wlog=$out/w1-$label.log
(cd "$tree" && make ARCH=um O="$build" W=1 C=2 \
	drivers/infiniband/ulp/mrkit/) > "$wlog" 2>&1 || { cat "$wlog"; exit 1; }
if grep -E 'warning:|error:' "$wlog" | grep 'ulp/mrkit/'; then
	echo "kunit ($label): W=1/sparse warnings in the UML build"
	exit 1
fi

# Summary lines tests print for the record (e.g. the fault matrix).
grep -ho '# [a-z_]*: fault matrix: .*' "$klog" | sed "s/^/kunit ($label): /" || true

exec env PYTHONPATH="$proj/scripts" python3 -m mrkit_report.kunit "$label" "$json" \
	"$klog" "$proj"/kunit/*.c
