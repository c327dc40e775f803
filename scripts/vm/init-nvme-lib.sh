# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=dash
# Sourced by the nvme-rdma guests' /init (init-ulp-nvme.sh, init-pair-nvme.sh)
# after /init-ulp-lib.sh: the NVMe host's helpers.
#   drv_load stock|mrkit  Debian's nvme-rdma, or the one on mrkit (/ulp)
#   no_ctrl               no NVMe controller is left
#   delete_ctrls          delete every controller (does not wait)
#   host_mrs              the host's MRs on the RDMA device (restrack names
#                         them after the host's PD: nvme_rdma, both drivers)
#   mrs_left              host_mrs, once given up to 5 s to reach 0
#   written_mib           MiB written through the controllers' path
#                         devices (the multipath head keeps no statistics)
#   wrote_some N          at least N MiB written
#   reconnects            reconnects so far (dmesg)

drv_load() {
	if [ "$1" = stock ]; then
		modprobe nvme-rdma || fail "modprobe nvme-rdma (stock)"
	else
		insmod /ulp/nvme-rdma.ko || fail "insmod /ulp/nvme-rdma.ko"
	fi
}

no_ctrl() { ! ls /sys/class/nvme/nvme* > /dev/null 2>&1; }

delete_ctrls() {
	local c
	for c in /sys/class/nvme/nvme*; do
		[ -e "$c/delete_controller" ] && echo 1 > "$c/delete_controller"
	done
}

host_mrs() { rdma res show mr | grep -c 'comm \[nvme_rdma\]'; }
mrs_left() {
	ulp_wait 50 test "$(host_mrs)" = 0
	host_mrs
}

written_mib() { cat /sys/block/nvme*/stat | awk '{ s += $7 } END { print int(s / 2048) }'; }
wrote_some() { [ "$(written_mib)" -ge "$1" ]; }
reconnects() { dmesg | grep -c 'Successfully reconnected'; }
