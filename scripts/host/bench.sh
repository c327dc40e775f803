#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make bench: mrkit against what a ULP would otherwise use, side by side.
# Method: each comparison runs mrkit and its baseline in short bursts of the
# same number of operations, taking turns in rotating order (A B, B A, ...);
# every pair of neighbouring bursts is printed raw, and the host
# (scripts/mrkit_report/bench.py, statistics in mrkit_report/stats.py)
# takes the ratio pair by pair: the median of the paired ratios, its 95%
# bootstrap interval, and the extra ns per operation (median of the paired
# differences).  A goal is met only when the interval's upper bound is.
#  - the mrkit_bench and mrkit_bench_rdma KUnit suites in the UML kernel
#    (one CPU), run with every other suite so that all of them pass in the
#    non-debug build too (verdict as make check's): W1 pool get+put vs
#    ib_mr_pool, W2 map vs bare ib_map_mr_sg (fake device, rxe, siw), W3
#    the full registration cycle on rxe vs the nvme-rdma-style path (local
#    and remote invalidation, list DMA-mapped by mrkit or by the caller),
#    memory per descriptor; and the instructions one W3 cycle executes,
#    per function, counted under gdb (scripts/host/icount.sh, W3ICOUNT);
#    then every suite from linux-source-6.12, non-debug and sanitizer
#    builds;
#  - the qemu guest (Debian's kernel, 2 vCPUs, TCG): W1 with get and put on
#    one CPU and across CPUs (bench/bench_smp.c), and W3 on a loopback RC
#    connection on rxe, completions on the submitting CPU and across CPUs
#    (bench/bench_w3_smp.c), where locks and LOCK prefixes are real; in
#    BENCH_BOOTS (default 10) boots, each one's pairs marked "BENCH BOOT k"
#    in the log, so that the interval resamples boots, then pairs
#    (mrkit_report.stats): a figure moves from one boot to the next more
#    than within one;
#  - end to end, A/B: the stock ULP modules against the kernel's ULPs
#    converted to mrkit (nvme-rdma, NFS/RDMA, iSER, SRP), one guest boot
#    per transport (rxe, siw), interleaved.
# Prints PARITY, ICOUNT, MEMORY, ATOMICS (the sanitizer build's counts), the goals
# and a COST line for each goal not met;
# writes .check/bench-results.json (machine, kernels, date, commit, every
# figure with its interval); make bench-table turns such a file into the
# documentation's table.
# BENCH_ITERS (operations per implementation and figure, default 100000)
# makes runs short; BENCH_PARTS (default "uml vm ab") picks the parts
# (a part left out is read from the last run's log); BENCH_FILTER (a KUnit
# suite glob, default mrkit*: all) runs fewer suites, and then neither the
# verdict nor linux-source-6.12's builds.
set -euo pipefail

proj=$(cd "$(dirname "$0")/../.." && pwd)
"$proj/scripts/host/deps.sh" need check
cache=${MRKIT_CACHE:-/var/cache/mrkit}
out=$proj/.check
mkdir -p "$out"
iters=${BENCH_ITERS:-100000}
parts=" ${BENCH_PARTS:-uml vm ab} "
filter=${BENCH_FILTER:-mrkit*}

if [[ $parts == *" uml "* ]]; then
	ver=$(dpkg-query -W -f='${Version}' linux-source-6.1)
	tree=$("$proj/scripts/host/prep-tree.sh")
	# shellcheck source=scripts/host/uml-lock.sh
	. "$proj/scripts/host/uml-lock.sh"
	uml_lock "$tree"
	build=$(uml_build_dir normal "$proj/kunit/.kunitconfig")
	mkdir -p "$build"
	(cd "$tree" && nice -n 10 python3 tools/testing/kunit/kunit.py run \
		--kunitconfig="$proj/kunit/.kunitconfig" --build_dir="$build" \
		--jobs="$(nproc)" --timeout=1800 \
		--kernel_args="mrkit_kunit.bench_iters=$iters" \
		--kernel_args="mrkit_kunit.bench_pools=${BENCH_POOLS:-1000}" \
		--kernel_args=ib_core.force_mr=1 --json="$out/kunit-bench.json" "$filter") \
		> "$out/bench.log" 2>&1 || { tail -n 30 "$out/bench.log"; exit 1; }
	cp "$build/test.log" "$out/bench-uml.log"
	uml_unlock
	# Atomic read-modify-writes per I/O are counted only in the sanitizer
	# build (CONFIG_MRKIT_COUNT_RMW), never in a timed one.
	MRKIT_KUNIT_FILTER='mrkit_bench*' nice -n 10 "$proj/scripts/host/kunit.sh" debug \
		> "$out/bench-atomics.out" 2>&1 || { tail -n 30 "$out/bench-atomics.out"; exit 1; }
	# The same build's cycles counted instruction by instruction.
	"$proj/scripts/host/icount.sh" "$out/bench-icount.log" || exit 1
	grep -q ' PAIR W3 ' "$out/bench-uml.log" ||
		{ echo "bench: no W3 figure in the UML log (.check/bench-uml.log)"; exit 1; }
	# Every suite ran in this non-debug build (make check runs them in the
	# KASAN/lockdep/UBSAN one): the same verdict as make check's.
	if [ "$filter" = "mrkit*" ]; then
		PYTHONPATH="$proj/scripts" python3 -m mrkit_report.kunit normal \
			"$out/kunit-bench.json" "$out/bench-uml.log" "$proj"/kunit/*.c || exit 1
		# Every suite from linux-source-6.12, in the non-debug and in the
		# sanitizer build (make check runs 6.1's).
		for v in normal debug; do
			nice -n 10 "$proj/scripts/host/kunit.sh" $v 6.12 > "$out/bench-kunit-$v-6.12.out" 2>&1 ||
				{ tail -n 30 "$out/bench-kunit-$v-6.12.out"; exit 1; }
			tail -n 1 "$out/bench-kunit-$v-6.12.out"
		done
	else
		echo "bench: KUnit suites $filter only: no verdict"
	fi
fi

if [[ $parts == *" vm "* ]]; then
	: > "$out/vm-bench-boots.log"
	for ((boot = 1; boot <= ${BENCH_BOOTS:-10}; boot++)); do
		BENCH_SMP_ITERS=$iters nice -n 10 "$proj/scripts/host/vm-samples.sh" bench \
			> "$out/bench-vm.out" 2>&1 || { cat "$out/bench-vm.out"; exit 1; }
		{ echo "BENCH BOOT $boot"; cat "$out/vm-bench.log"; } >> "$out/vm-bench-boots.log"
	done
fi

# One converted ULP's A/B over rxe and siw: ab_ulp ULP TITLE LEGEND LINES
# (LINES: a grep -E alternation of the report lines to show besides AB).
ab_ulp() {
	local ulp=$1 t ab=0
	echo
	echo "$2"
	echo "$3"
	for t in rxe siw; do
		"$proj/scripts/host/vm-ulp.sh" "$ulp" "$t" bench > "$out/bench-$ulp-$t.out" 2>&1 || ab=1
		grep -E "^(AB |$4|$ulp-report|ulp: $ulp over)" "$out/bench-$ulp-$t.out" || true
	done
	[ $ab = 0 ] || { echo "bench: $ulp A/B failed (see .check/bench-$ulp-*.out)"; exit 1; }
}

# The four reports take their AB (and FENCE) lines round by round.
if [[ $parts == *" ab "* ]]; then
	legend="(metric, MiB/s or IOPS: medians of the rounds; ratio: median of the per-round ratios mrkit/stock, lo and hi its 95% interval)"
	ab_ulp nvme "nvme-rdma A/B: stock nvme-rdma.ko vs nvme-rdma on mrkit, one boot per transport, interleaved rounds" \
		"$legend" "AB "
	ab_ulp nfs "NFS/RDMA A/B: stock rpcrdma.ko vs rpcrdma with frwr_ops.c on mrkit, one boot per transport, interleaved rounds" \
		"$legend" "AB "
	ab_ulp iser "iSER A/B: stock ib_iser.ko vs ib_iser on mrkit (AB), and mrkit lazy vs its rkey fence (FENCE), one boot per transport, interleaved rounds" \
		"$legend" "FENCE "
	ab_ulp srp "SRP A/B: stock ib_srp.ko vs ib_srp on mrkit, one boot per transport, interleaved rounds" \
		"$legend" "LOC "
fi

# The report: every figure, the goals (the A/B one from the ULPs' AB
# lines and the rounds in their console logs), what is left of each goal
# not met; a part left out is read from the last run's logs.
PYTHONPATH="$proj/scripts" python3 -m mrkit_report.bench parse --uml "$out/bench-uml.log" \
	--vm "$out/vm-bench-boots.log" --atomics "$out/kunit-debug-kernel.log" \
	--icount "$out/bench-icount.log" --ab "$out"/bench-{nvme,nfs,iser,srp}-{rxe,siw}.out \
	--ab-logs "$out"/ulp-{nvme,nfs,iser,srp}-{rxe,siw}-bench.log \
	--out "$out/bench-results.json"
