#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0-only
# Guest /init: load mrkit into Debian's stock kernel and unload it.
. /base-lib.sh
ok=1
# busybox modprobe ignores softdeps: the CRC provider goes first.
modprobe crct10dif_generic
if modprobe mrkit; then
	say "loaded: $(cat /sys/module/mrkit/taint 2>/dev/null) $(uname -r)"
else
	say "FAIL: modprobe mrkit"; ok=0
fi
n=$(grep ' mrkit_' /proc/kallsyms | grep -c '\[mrkit\]')
say "mrkit symbols in kallsyms: $n"
[ "$n" -gt 20 ] || ok=0
rmmod mrkit || { say "FAIL: rmmod mrkit"; ok=0; }
[ -d /sys/module/mrkit ] && { say "FAIL: still loaded"; ok=0; }
if dmesg | grep -E 'BUG:|WARNING:|Oops|general protection'; then
	say "FAIL: kernel splat"; ok=0
fi
dmesg | grep -i mrkit | sed 's/^/MRKIT-VM dmesg: /'
[ $ok = 1 ] && say "PASS load/unload" || say "FAIL"
poweroff -f
