#!/bin/busybox sh
# Guest /init: mrkit_stress_smp, the review's races that need two CPUs
# (puts racing after destroy, growth under contention), on an rxe device,
# Debian's kernel booted with slub_debug=FZPU: any write to freed memory
# is reported by SLUB and fails the run, as does any other splat.
. /init-lib.sh

say "online CPUs: $(cat /sys/devices/system/cpu/online)"
for m in crc32_generic crc32c_generic crct10dif_generic dummy rdma_rxe mrkit; do
	modprobe $m || fail "modprobe $m"
done
ip link set dummy0 up
ip addr add 10.99.0.1/24 dev dummy0
rdma link add mrkd0 type rxe netdev dummy0 || fail "rdma link add rxe"
ok=1
modprobe mrkit_stress_smp rounds=${mrkit_stress_rounds:-500} || ok=0
dmesg | grep -o 'MRKIT-VM .*'
rmmod mrkit_stress_smp 2>/dev/null
rmmod mrkit || fail "rmmod mrkit"
if dmesg | grep -E 'BUG|WARNING:|Oops|general protection|Poison overwritten|Redzone'; then
	fail "kernel splat"
fi
[ $ok = 1 ] || fail "mrkit_stress_smp"
say "PASS stress: puts after destroy and growth on two CPUs, no splat"
poweroff -f
