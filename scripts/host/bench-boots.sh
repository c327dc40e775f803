#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# bench-boots.sh REV [BOOTS]: does a change make the guest's benchmark
# faster or slower?  The guest's figures (W1 smp_*, W3SMP: vm-samples.sh
# bench) of this tree against those of commit REV, from boots of the two
# modules taken in turn - old then new, new then old, ... (BOOTS of each,
# default 6) - so that what drifts on the host over the run falls on both.
# Boot k of one is compared with boot k of the other; for every figure a
# BOOTS line (scripts/mrkit_report/bench.py boots) gives each build's
# median ratio to its baseline and the change from REV to this tree, with
# a 95% interval over the boots (from their order statistics: 6 boots
# at least), and says slower, faster or undecided.
# Two runs of make bench do not decide a change of a few percent in the
# guest: a figure moves that much from one boot to the next.
# Logs: .check/boots-old.log, .check/boots-new.log; REV is checked out in
# .check/boots-old.  The commit checked out is REV's, this tree's is as it
# stands (uncommitted changes included).  BENCH_ITERS as for make bench.
set -euo pipefail

proj=$(cd "$(dirname "$0")/../.." && pwd)
rev=${1:?usage: bench-boots.sh REV [BOOTS]}
boots=${2:-6}
out=$proj/.check
old=$out/boots-old
mkdir -p "$out"
git -C "$proj" rev-parse --verify -q "$rev^{commit}" > /dev/null ||
	{ echo "bench-boots: $rev is not a commit of $proj"; exit 1; }
rm -rf "$old"
git clone -q "$proj" "$old"
git -C "$old" checkout -q --detach "$rev"
: > "$out/boots-old.log"
: > "$out/boots-new.log"
for ((k = 1; k <= boots; k++)); do
	order="old new"
	((k % 2)) || order="new old"
	for side in $order; do
		tree=$proj
		[ "$side" = old ] && tree=$old
		BENCH_SMP_ITERS=${BENCH_ITERS:-100000} nice -n 10 \
			"$tree/scripts/host/vm-samples.sh" bench > "$out/boots-$side.out" 2>&1 ||
			{ tail -n 30 "$out/boots-$side.out"; echo "bench-boots: $side boot $k failed"; exit 1; }
		{ echo "BENCH BOOT $k"; cat "$tree/.check/vm-bench.log"; } >> "$out/boots-$side.log"
		echo "bench-boots: boot $k of $side ($(git -C "$tree" describe --always --dirty)) done"
	done
done
PYTHONPATH="$proj/scripts" python3 -m mrkit_report.bench boots \
	"$out/boots-old.log" "$out/boots-new.log"
