#!/bin/busybox sh
# Guest /init: the W1 contention benchmark (mrkit_bench_smp) on an rxe
# device on a dummy netdev, two vCPUs; get on CPU 0, put on CPU 1.  Then
# W3's SMP variant (mrkit_bench_w3_smp): the full registration cycle on a
# loopback RC connection on the same rxe device (10.99.0.1), completions
# on the submitting CPU and on the other one; ib_core is loaded with
# force_mr=1 so that rdma_rw registers.  A failed W3 load fails the boot.
. /base-lib.sh

say "online CPUs: $(cat /sys/devices/system/cpu/online)"
modprobe ib_core force_mr=1 || fail "modprobe ib_core force_mr=1"
for m in crc32_generic crc32c_generic crct10dif_generic dummy rdma_rxe mrkit; do
	modprobe $m || fail "modprobe $m"
done
ip link set dummy0 up
ip addr add 10.99.0.1/24 dev dummy0
rdma link add mrkd0 type rxe netdev dummy0 || fail "rdma link add rxe"
modprobe mrkit_bench_smp iters=${mrkit_bench_iters:-100000} reps=5 ||
	say "FAIL: modprobe mrkit_bench_smp"
# W3: half W1's count at 1 page (the module takes a quarter of that at 16,
# 1/16 at 256, a tenth across CPUs, 1/100 on the wire), 11 repetitions.
w3=0
modprobe mrkit_bench_w3_smp addr=10.99.0.1 \
	iters=$((${mrkit_bench_iters:-100000} / 2)) reps=11 || w3=1
if [ $w3 = 1 ]; then
	dmesg | grep -o 'MRKIT-VM .*' | grep -v 'MRKIT-VM PASS'
	fail "modprobe mrkit_bench_w3_smp"
fi
dmesg | grep -o 'MRKIT-VM .*'
rmmod mrkit_bench_smp 2>/dev/null
rmmod mrkit_bench_w3_smp 2>/dev/null
rmmod mrkit || fail "rmmod mrkit"
if dmesg | grep -E 'BUG:|WARNING:|Oops|general protection'; then
	fail "kernel splat"
fi
poweroff -f
