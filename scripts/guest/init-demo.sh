#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0-only
# Guest /init: the kernel's NVMe/RDMA target (nvmet-rdma, nvme-lib.sh) on a
# RAM-backed namespace, and mrkit's sample initiator against it, over rxe
# or siw on a dummy netdev whose address exists only in this guest (qemu
# -nic none).
. /base-lib.sh
. /nvme-lib.sh
t=${mrkit_transport:-rxe}
say "kernel $(uname -r)"

fabric "$t"
modprobe null_blk nr_devices=1 memory_backed=1 gb=1 || fail null_blk
NQN=nqn.2014-08.org.example:mrkit
nvmet_up $NQN 10.99.0.1 /dev/nullb0

modprobe mrkit || fail "modprobe mrkit"
echo 1 > /sys/kernel/tracing/events/mrkit/enable
if [ "${mrkit_fault:-}" = portdown ]; then
	# The target's port goes away while I/Os are in flight.
	modprobe mrkit_nvme_demo &
	n=0
	while [ $n -lt 400 ] &&
	      [ "$(grep -c mrkit_map /sys/kernel/tracing/trace)" -lt 60 ]; do
		n=$((n + 1)); sleep 0.05
	done
	nvmet_port_del
	say "port removed after $(grep -c mrkit_map /sys/kernel/tracing/trace) registrations"
	wait
else
	modprobe mrkit_nvme_demo no_inv=${mrkit_no_inv:-0} ||
		fail "modprobe mrkit_nvme_demo"
	if [ "${mrkit_also_noinv:-0}" = 1 ]; then
		# A second pass: Reads without the invalidate subtype.
		rmmod mrkit_nvme_demo || fail "rmmod mrkit_nvme_demo"
		modprobe mrkit_nvme_demo no_inv=1 ||
			fail "modprobe mrkit_nvme_demo no_inv=1"
	fi
fi
dmesg | grep 'mrkit_nvme_demo:' | sed 's/^\[[ 0-9.]*\] /MRKIT-VM /'
say "trace: $(grep -c mrkit_ /sys/kernel/tracing/trace) mrkit events captured; the first:"
grep mrkit_ /sys/kernel/tracing/trace | head -n 8 | sed 's/^ */MRKIT-VM   /'
echo 0 > /sys/kernel/tracing/events/mrkit/enable
rmmod mrkit_nvme_demo || fail "rmmod mrkit_nvme_demo"
rmmod mrkit || fail "rmmod mrkit"
if dmesg | grep -E 'BUG:|WARNING:|Oops|general protection'; then
	fail "kernel splat"
fi
if [ "${mrkit_fault:-}" = portdown ]; then
	if dmesg | grep -q 'teardown: 0 descriptors in use, 0 stale' &&
	   ! dmesg | grep 'teardown:' | grep -qv ' 0 descriptors in use, 0 stale' &&
	   dmesg | grep -q 'RESULT FAIL'; then
		say "PASS port removed with I/Os in flight over $t: every descriptor recovered, modules unloaded"
	else
		say "FAIL port removal recovery over $t"
	fi
	poweroff -f
fi
passes=1
[ "${mrkit_also_noinv:-0}" = 1 ] && passes=2
if { [ "${mrkit_no_inv:-0}" = 1 ] || [ $passes = 2 ]; } &&
   ! dmesg | grep -q 'pool q1: registrations remote-invalidated 0, locally invalidated 197'; then
	say "FAIL: reads without remote invalidation were not invalidated locally"
elif [ "$(dmesg | grep -c 'mrkit_nvme_demo: RESULT PASS')" = $passes ]; then
	say "PASS demo over $t"
	[ $passes = 2 ] && say "PASS Reads without target-side invalidation over $t: mrkit invalidated every registration locally"
else
	say "FAIL demo over $t"
fi
poweroff -f
