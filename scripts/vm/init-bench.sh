#!/bin/busybox sh
# Guest /init: the W1 contention benchmark (mrkit_bench_smp) on an rxe
# device on a dummy netdev, two vCPUs; get on CPU 0, put on CPU 1.
. /init-lib.sh

say "online CPUs: $(cat /sys/devices/system/cpu/online)"
for m in crc32_generic crc32c_generic crct10dif_generic dummy rdma_rxe mrkit; do
	modprobe $m || fail "modprobe $m"
done
ip link set dummy0 up
ip addr add 10.99.0.1/24 dev dummy0
rdma link add mrkd0 type rxe netdev dummy0 || fail "rdma link add rxe"
modprobe mrkit_bench_smp iters=${mrkit_bench_iters:-100000} reps=5 ||
	say "FAIL: modprobe mrkit_bench_smp"
dmesg | grep -o 'MRKIT-VM .*'
rmmod mrkit_bench_smp 2>/dev/null
rmmod mrkit || fail "rmmod mrkit"
if dmesg | grep -E 'BUG:|WARNING:|Oops|general protection'; then
	fail "kernel splat"
fi
poweroff -f
