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
# MRKIT_KUNIT_BUILD_ONLY=1 builds the UML kernel and runs nothing;
# MRKIT_KUNIT_W1=0 leaves out the W=1/sparse pass over mrkit's directory.
# debug adds KASAN, PROVE_LOCKING, UBSAN, DEBUG_LIST, DEBUG_OBJECTS, ...
# and, unless filtered, a second kernel for the suite rxe_pi alone: the
# same build with rdma_rxe_pi (rxe with integrity MRs) in place of rxe
# (kunit/rxe-pi.config, scripts/host/kunit-rxe-pi.sh); its logs are
# .check/kunit-debug-rxe-pi.*, and it prints the SIGCONF and SIGMR lines.
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

# The kernel of the suite rxe_pi (debug only, unless filtered): the same
# build with kunit/rxe-pi.config, rdma_rxe_pi (rxe with integrity MRs) in
# place of rxe (scripts/host/kunit-rxe-pi.sh puts it into the tree).  Its
# build directory starts as a copy of this one: only rxe_pi and the tests
# compile.  Sets cfg and build for it.
rxe_pi_kernel() {
	"$proj/scripts/host/kunit-rxe-pi.sh" "$tree" "$series" \
		> "$out/kunit-$label-rxe-pi-src.log" 2>&1 ||
		{ tail -n 30 "$out/kunit-$label-rxe-pi-src.log"
		  echo "kunit ($label): rdma_rxe_pi's sources could not be made"
		  return 1; }
	cfg+=(--kunitconfig="$proj/kunit/rxe-pi.config")
	cfgfiles+=("$proj/kunit/rxe-pi.config")
	build=$(uml_build_dir "$variant-pi" "${cfgfiles[@]}")
	mkdir -p "$build"
}
rxe_pi=
[ "$variant" = debug ] && [ -z "${MRKIT_KUNIT_FILTER:-}" ] && rxe_pi=1

log=$out/kunit-$label.log
if [ -n "${MRKIT_KUNIT_BUILD_ONLY:-}" ]; then
	for k in main ${rxe_pi:+rxe_pi}; do
		[ "$k" = main ] || rxe_pi_kernel || exit 1
		if ! (cd "$tree" && python3 tools/testing/kunit/kunit.py build "${cfg[@]}" \
			--build_dir="$build" --jobs="$(nproc)") > "$log" 2>&1; then
			tail -n 40 "$log"
			echo "kunit ($label): the UML kernel does not build; see $log"
			exit 1
		fi
		echo "kunit ($label): UML kernel built in $build"
	done
	exit 0
fi
json=$out/kunit-$label.json
klog=$out/kunit-$label-kernel.log
rm -f "$json" "$json.counts" "$build/test.log" "$klog"
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

# W=1 and sparse over mrkit's own directory, tests included, in this tree;
# MRKIT_KUNIT_W1=0 leaves it out (make check's 6.12 run: its static step
# builds mrkit W=1/sparse against 6.12, and the tests in 6.1's run).
wlog=$out/w1-$label.log
if [ "${MRKIT_KUNIT_W1:-1}" != 0 ]; then
	(cd "$tree" && make ARCH=um O="$build" W=1 C=2 -j"$(nproc)" \
		drivers/infiniband/ulp/mrkit/) > "$wlog" 2>&1 || { cat "$wlog"; exit 1; }
	if grep -E 'warning:|error:' "$wlog" | grep 'ulp/mrkit/'; then
		echo "kunit ($label): W=1/sparse warnings in the UML build"
		exit 1
	fi
fi

# Summary lines tests print for the record (e.g. the fault matrix).
grep -ho '# [a-z_]*: fault matrix: .*' "$klog" | sed "s/^/kunit ($label): /" || true

verdict=0
env PYTHONPATH="$proj/scripts" python3 -m mrkit_report.kunit "$label" "$json" \
	"$klog" "$proj"/kunit/*.c || verdict=1
[ -n "$rxe_pi" ] || exit "$verdict"

# The suite rxe_pi alone, in its own kernel (rxe_pi_kernel).  The SIGCONF
# and SIGMR lines end with kernel=SERIES on another kernel than 6.1, as
# the guests' do.
rxe_pi_kernel || exit 1
json=$out/kunit-$label-rxe-pi.json
klog=$out/kunit-$label-rxe-pi-kernel.log
rm -f "$json" "$json.counts" "$build/test.log" "$klog"
(cd "$tree" && python3 tools/testing/kunit/kunit.py run "${cfg[@]}" \
	--build_dir="$build" --jobs="$(nproc)" --timeout=900 --json="$json" \
	--kernel_args=ib_core.force_mr=1 'rxe_pi*') \
	> "$out/kunit-$label-rxe-pi.log" 2>&1 || true
cp "$build/test.log" "$klog" 2>/dev/null || true
k=
[ "$series" = 6.1 ] || k=" kernel=$series"
grep -ao 'SIG\(CONF\|MR\) rxe-pi [a-z]*=[0-9]*.* failed=[0-9]*' "$klog" |
	sed "s/\$/$k/" || true
if [ ! -s "$json" ]; then
	echo "kunit ($label): the rxe_pi kernel produced no results; see $out/kunit-$label-rxe-pi.log"
	tail -n 40 "$out/kunit-$label-rxe-pi.log"
	exit 1
fi
# W=1 and sparse over the two files only this kernel builds.
wlog=$out/w1-$label-rxe-pi.log
(cd "$tree" && make ARCH=um O="$build" W=1 C=2 \
	drivers/infiniband/ulp/mrkit/provider/sigconf.o \
	drivers/infiniband/ulp/mrkit/kunit/rxe_pi_test.o) > "$wlog" 2>&1 ||
	{ cat "$wlog"; exit 1; }
if grep -E 'warning:|error:' "$wlog" | grep 'ulp/mrkit/'; then
	echo "kunit ($label): W=1/sparse warnings in the rxe_pi kernel's build"
	exit 1
fi
MRKIT_KUNIT_FILTER='rxe_pi*' PYTHONPATH="$proj/scripts" python3 -m mrkit_report.kunit \
	"$label-rxe-pi" "$json" "$klog" "$proj"/kunit/*.c || verdict=1
exit "$verdict"
