#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make check: every mrkit test (after make deps on a fresh Debian 12).
#  1. checks that every package it needs is installed (scripts/host/deps.sh)
#  2. static checks against the 6.1 and the 6.12 tree, the report
#     parsers' unit tests, the process-word check, the ULPs as patch
#     series and the out-of-tree build against 6.1 and 6.12
#     (scripts/host/static.sh); the cross build for arm64 with W=1 and
#     sparse (scripts/host/cross-arm64.sh) runs after step 3
#  3. KUnit under UML in a KASAN/lockdep/UBSAN build (compiled beside
#     step 2), with W=1 and sparse over mrkit and its tests
#     (scripts/host/kunit.sh debug), and the suite rxe_pi in the same
#     build with rxe with integrity MRs in place of rxe; failures, skips,
#     missing suites and kernel splats all fail the run.  Then mrkit's
#     suites in linux-source-6.12's KASAN/lockdep/UBSAN build (kunit.sh
#     debug 6.12, compiled after 6.1's, beside the first guests; without
#     the W=1/sparse pass, which step 2 makes against 6.12).  The
#     non-debug UML builds (6.1 and 6.12) and 6.12's rxe_pi kernel run in
#     make bench, which needs the first for its figures.
#  4. what the guests share, built once beside step 3's build
#     (scripts/host/vm-prep.sh); then two lanes of guest scenarios side
#     by side, whose first steps run beside step 3's suites:
#     mrkit.ko loaded into Debian's stock kernel under qemu and unloaded,
#     and the NVMe/RDMA demo over rxe and siw, over rxe also without
#     target-side invalidation, and with the target's port removed mid-I/O
#     (scripts/host/vm-samples.sh), the two-CPU benchmarks (W1, W3) with a
#     tiny count, and the two-CPU stress of the pool's races;
#     nvme-rdma, ib_iser and rpcrdma with their registration code on mrkit
#     (built at build time from linux-source-6.1), each over rxe and siw
#     against the kernel's target, and ib_srp over rxe: a short fio verify
#     and one fault (scripts/host/vm-ulp.sh ULP TRANSPORT check); the
#     mrkit-dkms package installed with apt on a clean Debian 12 chroot,
#     built by DKMS for 6.1 and 6.12, a ULP built out of tree against it,
#     and its mrkit.ko running the NVMe/RDMA sample in a guest
#     (scripts/host/dkms-check.sh; its clean root made beside steps 2 and
#     3); the NVMe/RDMA demo on Debian's 6.12 kernel; rxe with integrity
#     MRs (rdma_rxe_pi, spliced into linux-source-6.1's rxe) against the
#     block layer's T10-PI code (scripts/host/vm-rxe-pi.sh), and nvme-rdma
#     with T10-PI end to end over it (vm-ulp.sh nvme rxe-pi pi);
#     each lane ends with two guests on a private wire, one short fault
#     of each kind: nvme-rdma on mrkit over rxe, ib_srp on mrkit over siw
#     (scripts/host/vm-pair.sh ULP T check; make faults runs the whole
#     schedule over both, the stock drivers and iSER and NFS too)
# Every step prints its time and the CPU time it used (the budget is
# two cores' worth); ends with one "N passed, N failed" line.
set -uo pipefail

proj=$(cd "$(dirname "$0")/../.." && pwd)
cd "$proj" || exit 1
start=$(date +%s)
"$proj/scripts/host/deps.sh" need check || exit 1
rm -rf .check
mkdir -p .check

steps_ok=0
steps_bad=0
# cpu_ticks: ticks = the CPU time (user and system, in clock ticks) of
# the processes this shell has reaped, its children and theirs; a step's
# CPU is the difference across it (a background job, such as the KUnit
# build, counts in the step during which it ends).
cpu_ticks() {
	local stat
	read -r stat < "/proc/$BASHPID/stat"
	# shellcheck disable=SC2086 # the fields after "pid (comm) "
	set -- ${stat##*) }
	ticks=$((${14} + ${15}))
}
hz=$(getconf CLK_TCK)
# took T0 C0: spent = "N s, N CPU-s" since SECONDS T0 and ticks C0.
took() {
	cpu_ticks
	spent="$((SECONDS - $1)) s, $(((ticks - $2) / hz)) CPU-s"
}
run() {
	local name=$1 t0=$SECONDS c0
	cpu_ticks
	c0=$ticks
	shift
	echo "=== $name"
	if "$@"; then
		steps_ok=$((steps_ok + 1))
		took "$t0" "$c0"
		echo "=== $name: ok, $spent"
	else
		steps_bad=$((steps_bad + 1))
		took "$t0" "$c0"
		echo "=== $name: FAILED, $spent"
	fi
}
# lrun ID NAME CMD...: a step in a lane (lanes run side by side): its
# output into .check/lane-ID.out, printed in order when the lanes are done.
lrun() {
	local id=$1 name=$2 t0=$SECONDS c0
	cpu_ticks
	c0=$ticks
	shift 2
	{
		echo "=== $name"
		if "$@"; then
			took "$t0" "$c0"
			echo "=== $name: ok, $spent"
		else
			took "$t0" "$c0"
			echo "=== $name: FAILED, $spent"
		fi
	} > ".check/lane-$id.out" 2>&1
}

# The clean Debian 12 root the DKMS check installs into (debootstrap and
# apt: mostly waiting on the network and the disk), made beside the
# static checks and KUnit.
nice -n 10 scripts/host/dkms-check.sh --prepare > .check/dkms-prepare.log 2>&1 &
dkms_prep=$!
dkms_prepared() {
	local rc=0
	wait "$dkms_prep" || rc=$?
	cat .check/dkms-prepare.log
	return $rc
}
# The KASAN/lockdep/UBSAN UML kernels, the longest builds, one after the
# other at a lower priority: linux-source-6.1's beside the static checks
# (mostly one core's work) and the guests' shared build, then
# linux-source-6.12's (mrkit's suites only; rxe_pi's kernel is 6.1's)
# beside the first guests, so that its suites run while the lanes do.
# Each KUnit step waits for its kernel's exit status in
# .check/kunit-build-SERIES.rc, then runs the suites; the build's CPU
# time is in .check/kunit-build-SERIES.cpu.
(
	t0=$SECONDS
	cpu_ticks
	c0=$ticks
	MRKIT_KUNIT_BUILD_ONLY=1 nice -n 10 scripts/host/kunit.sh debug \
		> .check/kunit-build-6.1.out 2>&1
	rc=$?
	took "$t0" "$c0"
	echo "$spent" > .check/kunit-build-6.1.cpu
	echo $rc > .check/kunit-build-6.1.rc
	t0=$SECONDS
	c0=$ticks
	MRKIT_KUNIT_BUILD_ONLY=1 MRKIT_KUNIT_FILTER='mrkit*' nice -n 10 \
		scripts/host/kunit.sh debug 6.12 > .check/kunit-build-6.12.out 2>&1
	rc=$?
	took "$t0" "$c0"
	echo "$spent" > .check/kunit-build-6.12.cpu
	echo $rc > .check/kunit-build-6.12.rc
) &
# kunit_built SERIES: wait (an hour at most) for that kernel's build.
kunit_built() {
	local i
	for ((i = 0; i < 3600; i += 5)); do
		[ -s ".check/kunit-build-$1.rc" ] && break
		sleep 5
	done
	cat ".check/kunit-build-$1.out"
	echo "kunit: the $1 kernel's build took $(cat ".check/kunit-build-$1.cpu" 2> /dev/null)"
	[ "$(cat ".check/kunit-build-$1.rc" 2> /dev/null)" = 0 ]
}
kunit_debug() {
	kunit_built 6.1 || return 1
	env -u MRKIT_KUNIT_FILTER scripts/host/kunit.sh debug
}
# The static step built mrkit W=1/sparse against 6.12, and the tests so in
# 6.1's tree: no W=1/sparse pass here.
kunit_debug_612() {
	kunit_built 6.12 || return 1
	MRKIT_KUNIT_FILTER='mrkit*' MRKIT_KUNIT_W1=0 scripts/host/kunit.sh debug 6.12
}
# What the guests share (the stock kernel image, mrkit.ko, siw.ko, fio, the
# converted ULPs), built once before guests boot side by side, beside the
# KUnit build.
vm_prepared() {
	local rc=0
	wait "$vm_prep" || rc=$?
	cat .check/vm-prep.log
	return $rc
}
run static scripts/host/static.sh
nice -n 10 scripts/host/vm-prep.sh nvme iser nfs srp > .check/vm-prep.log 2>&1 &
vm_prep=$!
run "dkms: a clean Debian 12 root with the 6.1 headers and the 6.12 kernel" dkms_prepared
run "vm: build mrkit.ko, siw.ko and the converted ULPs; fetch the image and fio" vm_prepared
# Two lanes of guest scenarios, side by side (a guest is about one TCG
# thread's work; the machine has two cores).  Every VM scenario loads mrkit.ko,
# checks that its exports are in the MRKIT namespace, and unloads it with
# no splat.  The kernel's own initiators run on mrkit against the kernel's
# targets, short: fio verify=crc32c and one fault under load each (make
# demo runs them long).
# Two guests on a private wire, one short fault of each kind (loss, the
# link down past the ULP's timeout, the target killed and booted again,
# the session deleted) under fio verify: nvme-rdma on mrkit against
# nvmet-rdma over rxe, and ib_srp on mrkit against LIO's ib_srpt over siw
# (b5 runs it over rxe in one guest); make faults runs every fault over
# both providers, with the stock drivers and iSER and NFS too.  A pair
# mostly waits on its wire and its timeouts (about one core's work for its
# two guests), so each ends a lane, and the two mostly run side by side.
pair_nvme() {
	lrun c1 "pair: nvme on mrkit over rxe, two guests, one fault of each kind" \
		scripts/host/vm-pair.sh nvme rxe check
}
pair_srp() {
	lrun c2 "pair: srp on mrkit over siw, two guests, one fault of each kind" \
		scripts/host/vm-pair.sh srp siw check
}
lane_a() {
	lrun a1 "demo over rxe, then Reads without target-side invalidation" scripts/host/vm-samples.sh demo rxe plusnoinv
	lrun a2 "demo: NVMe/RDMA initiator on mrkit vs nvmet-rdma over siw" scripts/host/vm-samples.sh demo siw
	lrun a3 "demo: target port removed with I/Os in flight (rxe)" scripts/host/vm-samples.sh demo rxe portdown
	lrun a4 "demo: target port removed with I/Os in flight (siw)" scripts/host/vm-samples.sh demo siw portdown
	# make bench's guest variants (W1, W3) with a tiny count, so they cannot rot.
	lrun a5 "bench: W1 and W3 SMP variants, 2 vCPUs (tiny count)" env BENCH_SMP_ITERS=2000 scripts/host/vm-samples.sh bench
	# The pool's races that need two CPUs, with SLUB poisoning on.
	lrun a6 "stress: puts after destroy and growth on 2 vCPUs (slub_debug)" scripts/host/vm-samples.sh stress
	lrun a7 "ulp: nfs on mrkit over rxe, short verify and one fault" scripts/host/vm-ulp.sh nfs rxe check
	lrun a8 "ulp: nvme on mrkit over rxe, short verify and one fault" scripts/host/vm-ulp.sh nvme rxe check
	# The package as a user installs it, DKMS building for both kernels.
	lrun a9 "dkms: mrkit-dkms on a clean chroot, built for 6.1 and 6.12, run in a guest" \
		scripts/host/dkms-check.sh
	# rxe with integrity MRs (built here) against the kernel's T10-PI code.
	lrun a10 "rxe-pi: integrity MRs against the kernel's T10-PI code, 2000 cases" scripts/host/vm-rxe-pi.sh 2000
	# Debian's 6.12 kernel in the guest, mrkit.ko built against its headers.
	lrun a11 "demo on Debian's 6.12 kernel: NVMe/RDMA initiator on mrkit over rxe" \
		env MRKIT_KERNEL=6.12 scripts/host/vm-samples.sh demo rxe
	pair_nvme
}
lane_b() {
	lrun b1 "ulp: nfs on mrkit over siw, short verify and one fault" scripts/host/vm-ulp.sh nfs siw check
	lrun b2 "ulp: nvme on mrkit over siw, short verify and one fault" scripts/host/vm-ulp.sh nvme siw check
	lrun b3 "ulp: iser on mrkit over rxe, short verify, the portal fault and the link deleted" scripts/host/vm-ulp.sh iser rxe check
	lrun b4 "ulp: iser on mrkit over siw, short verify and one fault" scripts/host/vm-ulp.sh iser siw check
	lrun b5 "ulp: srp on mrkit over rxe, short verify and one fault" scripts/host/vm-ulp.sh srp rxe check
	# T10-PI end to end over rxe with integrity MRs: mrkit's nvme-rdma
	# against nvmet-rdma with pi_enable (make demo runs the stock one too).
	lrun b6 "pi: nvme-rdma on mrkit with T10-PI over rdma_rxe_pi, short verify" \
		env ULP_DRIVERS=mrkit scripts/host/vm-ulp.sh nvme rxe-pi pi
	pair_srp
}
# The lanes start as soon as what the guests share is built; the KUnit
# suites (one UML CPU) and the arm64 build run beside their first steps.
# Their guests run both vCPUs on one host thread: with a thread per vCPU
# (qemu's default here), two lanes' guests on two cores preempt each
# other's vCPUs, and a vCPU spinning on a lock whose holder's thread is
# not running burns its slice (the steps' CPU figures show the cost).
# The two-CPU stress and benchmarks still run a thread per vCPU.
export VM_ACCEL=tcg,thread=single
t0=$SECONDS
rm -f .check/lane-*.out
lane_a &
lane_a_pid=$!
lane_b &
lane_b_pid=$!
run "kunit debug (KASAN, PROVE_LOCKING, UBSAN), then rxe_pi on rxe with integrity MRs" kunit_debug
run "cross build for arm64 (W=1, sparse)" scripts/host/cross-arm64.sh
run "kunit debug on linux-source-6.12 (KASAN, PROVE_LOCKING, UBSAN)" kunit_debug_612
wait "$lane_a_pid" "$lane_b_pid"
for f in .check/lane-*.out; do
	cat "$f"
	if tail -n 1 "$f" | grep -q '^=== .*: ok, [0-9]* s, [0-9]* CPU-s$'; then
		steps_ok=$((steps_ok + 1))
	else
		steps_bad=$((steps_bad + 1))
	fi
done
echo "=== the two lanes of guest scenarios: $((SECONDS - t0)) s"
passed=0
failed=0
for c in .check/kunit-*.json.counts; do
	[ -f "$c" ] || continue
	read -r p f < "$c"
	passed=$((passed + p))
	failed=$((failed + f))
done
cpu_ticks
echo "=== summary: $steps_ok of $((steps_ok + steps_bad)) steps ok, $(( $(date +%s) - start )) s, $((ticks / hz)) CPU-s"
echo "$((passed + steps_ok)) passed, $((failed + steps_bad)) failed"
[ "$steps_bad" -eq 0 ]
