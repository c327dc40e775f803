#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# icount.sh [OUT]: W3ICOUNT, the instructions one registration cycle
# executes in each function, for every W3 variant at one and 16 pages and
# the local invalidation at 256, mrkit's three implementations and the
# nvme-rdma-style baseline.
# Builds the UML kernel of the bench (the normal KUnit build of make
# bench), runs the KUnit case mrkit_bench_rdma.bench_w3_icount_test under
# gdb with scripts/host/icount.py, and writes its ICOUNT lines to OUT
# (default .check/bench-icount.log); scripts/mrkit_report/bench.py adds
# the ratios to the baseline.  Deterministic: the same build counts the
# same, so a change's effect on the I/O path shows exactly.
set -euo pipefail

proj=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$proj/.check/bench-icount.log}
mkdir -p "$(dirname "$out")"
command -v gdb > /dev/null || { echo "icount: gdb missing (make deps)"; exit 1; }
# shellcheck disable=SC2034  # uml-lock.sh reads it
cache=${MRKIT_CACHE:-/var/cache/mrkit}
tree=$("$proj/scripts/host/prep-tree.sh")
ver=$(basename "$(dirname "$tree")")
ver=${ver#src-}
# shellcheck source=scripts/host/uml-lock.sh
. "$proj/scripts/host/uml-lock.sh"
uml_lock "$tree"
build=$(uml_build_dir normal "$proj/kunit/.kunitconfig")
mkdir -p "$build"
case=mrkit_bench_rdma.bench_w3_icount_test
# Build, and run the case once without the debugger: it must pass.
(cd "$tree" && nice -n 10 python3 tools/testing/kunit/kunit.py run \
	--kunitconfig="$proj/kunit/.kunitconfig" --build_dir="$build" \
	--jobs="$(nproc)" --timeout=600 --kernel_args=ib_core.force_mr=1 "$case") \
	> "$out.build" 2>&1 || { tail -n 30 "$out.build"; echo "icount: $case failed"; exit 1; }
# The command line kunit.py gives the UML kernel, and the case alone.
ICOUNT_VMLINUX=$build/vmlinux timeout 1200 gdb -q -batch -nx \
	-x "$proj/scripts/host/icount.py" --args "$build/vmlinux" mem=1G \
	console=tty kunit_shutdown=halt kunit.enable=1 \
	kunit.filter_glob="$case" ib_core.force_mr=1 > "$out.gdb" 2>&1 || true
uml_unlock
grep -E '^ICOUNT' "$out.gdb" > "$out" || true
n=$(grep -c '^ICOUNT W3 ' "$out" || true)
if [ "$n" != 36 ] || grep -q '^ICOUNT-ERROR' "$out"; then
	tail -n 20 "$out.gdb"
	echo "icount: $n of 36 cycles counted (.check/$(basename "$out").gdb): FAILED"
	exit 1
fi
echo "icount: 36 cycles counted: $out"
