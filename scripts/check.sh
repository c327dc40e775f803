#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make check: every mrkit test, from a fresh Debian 12 machine.
#  1. installs what it needs (apt)
#  2. static checks and the out-of-tree build (scripts/static.sh)
#  3. KUnit under UML: a normal build and a KASAN/lockdep/UBSAN build
#     (scripts/kunit.sh); failures, skips, missing suites and kernel
#     splats all fail the run
#  4. mrkit.ko loaded into Debian's stock kernel under qemu and unloaded,
#     and the NVMe/RDMA demo over rxe and siw, without target-side
#     invalidation, and with the target's port removed mid-I/O
#     (scripts/vm/run.sh), the two-CPU pool benchmark with a tiny
#     count, and the two-CPU stress of the review's races
#  5. nvme-rdma, ib_iser and rpcrdma with their registration code on mrkit
#     (built at build time from linux-source-6.1), each over rxe and siw
#     against the kernel's target: a short fio verify and one fault
#     (scripts/vm/ulp.sh ULP TRANSPORT check)
#  6. two guests on a private wire: nvme-rdma on mrkit, one short fault of
#     each kind, over rxe and siw (scripts/vm/pair.sh nvme T check; make
#     faults runs the whole schedule, the stock driver and iSER and NFS too)
# Ends with one "N passed, N failed" line.
set -uo pipefail

proj=$(cd "$(dirname "$0")/.." && pwd)
cd "$proj"
start=$(date +%s)
"$proj/scripts/deps.sh" check || exit 1
rm -rf .check
mkdir -p .check

steps_ok=0
steps_bad=0
run() {
	local name=$1
	shift
	echo "=== $name"
	if "$@"; then
		steps_ok=$((steps_ok + 1))
	else
		steps_bad=$((steps_bad + 1))
		echo "=== $name: FAILED"
	fi
}

run static scripts/static.sh
run "kunit normal" scripts/kunit.sh normal
run "kunit debug (KASAN, PROVE_LOCKING, UBSAN)" scripts/kunit.sh debug
# Every VM scenario builds mrkit against Debian's headers, checks that its
# exports are in the MRKIT namespace, loads it into the stock kernel and
# unloads it with no splat.
run "demo over rxe, then Reads without target-side invalidation" scripts/vm/run.sh demo rxe plusnoinv
run "demo: NVMe/RDMA initiator on mrkit vs nvmet-rdma over siw" scripts/vm/run.sh demo siw
run "demo: target port removed with I/Os in flight (rxe)" scripts/vm/run.sh demo rxe portdown
run "demo: target port removed with I/Os in flight (siw)" scripts/vm/run.sh demo siw portdown
# make bench's guest variants (W1, W3) with a tiny count, so they cannot rot.
run "bench: W1 and W3 SMP variants, 2 vCPUs (tiny count)" env BENCH_SMP_ITERS=2000 scripts/vm/run.sh bench
# The review's races that need two CPUs, with SLUB poisoning on.
run "stress: puts after destroy and growth on 2 vCPUs (slub_debug)" scripts/vm/run.sh stress
# The kernel's own initiators on mrkit against the kernel's targets, short:
# fio verify=crc32c and one fault under load each (make demo runs them long).
for ulp in nvme iser nfs; do
	for t in rxe siw; do
		run "ulp: $ulp on mrkit over $t, short verify and one fault" \
			scripts/vm/ulp.sh "$ulp" "$t" check
	done
done
# Issue M: two guests on a private wire, nvme-rdma on mrkit against
# nvmet-rdma in the other guest, one short fault of each kind (5% loss,
# the link down past the keep-alive, the target killed and booted again,
# the controller deleted) under fio verify, over both providers; make
# faults runs them all, with the stock driver too.
for t in rxe siw; do
	run "pair: nvme on mrkit over $t, two guests, one fault of each kind" \
		scripts/vm/pair.sh nvme "$t" check
done

passed=0
failed=0
for c in .check/kunit-*.json.counts; do
	[ -f "$c" ] || continue
	read -r p f < "$c"
	passed=$((passed + p))
	failed=$((failed + f))
done
echo "=== summary: $steps_ok of $((steps_ok + steps_bad)) steps ok, $(( $(date +%s) - start )) s"
echo "$((passed + steps_ok)) passed, $((failed + steps_bad)) failed"
[ "$steps_bad" -eq 0 ]
