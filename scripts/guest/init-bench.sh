#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0-only
# Guest /init: make bench's two-CPU benchmarks on an rxe device on a dummy
# netdev, two vCPUs.  W1 (mrkit_bench_smp): pool get+put against
# ib_mr_pool, across CPUs and on one.  W3 (mrkit_bench_w3_smp): the full
# registration cycle against the nvme-style path, on a loopback RC
# connection on the same rxe device (10.99.0.1): on the wire, then same CPU
# and cross CPU.  Both print one raw line per round of paired bursts,
# which the host's report turns into ratios with intervals.  A failed load
# fails the boot.
. /base-lib.sh

say "online CPUs: $(cat /sys/devices/system/cpu/online)"
say "KERNEL release=$(uname -r)"
for m in ib_core crc32_generic crc32c_generic crct10dif_generic dummy rdma_rxe mrkit; do
	modprobe $m || fail "modprobe $m"
done
ip link set dummy0 up
ip addr add 10.99.0.1/24 dev dummy0
rdma link add mrkd0 type rxe netdev dummy0 || fail "rdma link add rxe"
bad=0
modprobe mrkit_bench_smp iters=${mrkit_bench_iters:-100000} || bad=1
# W3: half W1's count at 1 page (the module takes a quarter of that at 16,
# 1/16 at 256, a tenth across CPUs, 1/100 on the wire).
modprobe mrkit_bench_w3_smp addr=10.99.0.1 \
	iters=$((${mrkit_bench_iters:-100000} / 2)) || bad=1
# The kernel's log, as the host parses it (booted with a log buffer large
# enough for every round's line).
dmesg | grep -o 'MRKIT-VM .*' | grep -v 'MRKIT-VM PASS'
[ $bad = 0 ] || fail "modprobe mrkit_bench_smp / mrkit_bench_w3_smp"
dmesg | grep -o 'MRKIT-VM PASS.*'
rmmod mrkit_bench_smp 2>/dev/null
rmmod mrkit_bench_w3_smp 2>/dev/null
rmmod mrkit || fail "rmmod mrkit"
if dmesg | grep -E 'BUG:|WARNING:|Oops|general protection'; then
	fail "kernel splat"
fi
poweroff -f
