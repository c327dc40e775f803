#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0-only
# Guest /init: mrkit_stress_smp, the pool's races that need two CPUs
# (puts racing with destroy, growth under contention, a sleeper in
# mrkit_pool_wait() across a destroy), on an rxe device,
# Debian's kernel booted with slub_debug=FZPU: any write to freed memory
# is reported by SLUB and fails the run, as does any other splat.
. /base-lib.sh

say "online CPUs: $(cat /sys/devices/system/cpu/online)"
fabric rxe
modprobe mrkit || fail "modprobe mrkit"
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
