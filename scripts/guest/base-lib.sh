# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=dash
# Sourced first by every guest /init (busybox sh): tools, mounts, and
#   say TEXT...         a "MRKIT-VM TEXT" line, the line the host reads
#   fail TEXT...        say "FAIL: TEXT", power off
#   fabric T [NETDEV ADDR/LEN]
#                       the CRC modules (busybox modprobe ignores softdeps),
#                       configfs, debugfs and tracefs mounted, loopback up,
#                       NETDEV (a dummy netdev by default) up with ADDR (by
#                       default 10.99.0.1/24, an address only this guest
#                       has), and an rxe or siw device (T) on it, mrkd0;
#                       T rxe-pi: rxe with integrity MRs (/pi/rdma_rxe_pi.ko,
#                       scripts/host/vm-rxe-pi.sh), never the stock rxe
/bin/busybox --install -s /bin
ln -s /bin/busybox /sbin/modprobe
export PATH=/bin:/sbin:/usr/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
say() { echo "MRKIT-VM $*"; }
fail() { say "FAIL: $*"; poweroff -f; }

fabric() {
	local m
	for m in crc32_generic crc32c_generic crct10dif_generic configfs \
		 dummy rdma_cm rdma_ucm; do
		modprobe $m || fail "modprobe $m"
	done
	mount -t configfs none /sys/kernel/config
	mount -t debugfs none /sys/kernel/debug
	mount -t tracefs none /sys/kernel/tracing
	ip link set lo up
	ip link set "${2:-dummy0}" up
	ip addr add "${3:-10.99.0.1/24}" dev "${2:-dummy0}"
	if [ "$1" = siw ]; then
		modprobe libcrc32c
		insmod /lib/modules/$(uname -r)/extra/siw.ko || fail "insmod siw"
	elif [ "$1" = rxe-pi ]; then
		for m in ib_core ip6_udp_tunnel udp_tunnel crc-t10dif; do
			modprobe $m || fail "modprobe $m"
		done
		insmod /pi/rdma_rxe_pi.ko || fail "insmod rdma_rxe_pi"
	else
		modprobe rdma_rxe || fail "modprobe rdma_rxe"
	fi
	rdma link add mrkd0 type "${1%-pi}" netdev "${2:-dummy0}" || fail "rdma link add $1"
}
