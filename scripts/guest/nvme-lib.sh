# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=dash
# Sourced by the NVMe/RDMA guests' /init (init-demo.sh, init-ulp-nvme.sh,
# init-pair-nvme.sh) after /base-lib.sh: the kernel's target, nvmet-rdma,
# set up here and nowhere else, and the host's side.
#   nvmet_up NQN ADDR DEV...
#                       nvmet and nvmet-rdma loaded; subsystem NQN (any
#                       host may connect) with namespace N on the Nth block
#                       device DEV, port 1 on ADDR:4420 (RDMA, IPv4)
#                       serving it.  NVMET_SERIAL, NVMET_UUID, NVMET_NGUID,
#                       if set, fix the subsystem's serial and namespace
#                       1's identifiers (a target booted again is then the
#                       same subsystem and namespace to the host);
#                       NVMET_PI=1 enables T10-PI on the subsystem and the
#                       port (namespaces on block devices with integrity
#                       then carry it)
#   nvmet_port_del      the port stops serving the subsystem
#   nvmet_port_add      and serves it again
#   nvmet_down          the subsystem and port removed, the modules
#                       unloaded: NVMET_DOWN=ok|failed
#   drv_load stock|mrkit  Debian's nvme-rdma, or the one on mrkit (/ulp)
#   no_ctrl             no NVMe controller is left
#   delete_ctrls        delete every controller (does not wait)
#   host_mrs            the host's MRs on the RDMA device (restrack names
#                       them after the host's PD: nvme_rdma, both drivers)
#   mrs_left            host_mrs, once given up to 5 s to reach 0
#   written_mib         MiB written through the controllers' path
#                       devices (the multipath head keeps no statistics)
#   wrote_some N        at least N MiB written
#   reconnects          reconnects so far (dmesg)
NVMET=/sys/kernel/config/nvmet

nvmet_up() {
	local m n=0 d ns
	NVMET_S=$NVMET/subsystems/$1
	NVMET_P=$NVMET/ports/1/subsystems/$1
	for m in nvmet nvmet-rdma; do
		modprobe $m || fail "modprobe $m"
	done
	mkdir $NVMET_S || fail "nvmet subsystem $1"
	echo 1 > $NVMET_S/attr_allow_any_host
	[ -z "${NVMET_PI:-}" ] || echo 1 > $NVMET_S/attr_pi_enable ||
		fail "nvmet subsystem: T10-PI"
	[ -z "${NVMET_SERIAL:-}" ] || echo "$NVMET_SERIAL" > $NVMET_S/attr_serial
	mkdir $NVMET/ports/1 || fail "nvmet port"
	echo rdma > $NVMET/ports/1/addr_trtype
	echo ipv4 > $NVMET/ports/1/addr_adrfam
	echo "$2" > $NVMET/ports/1/addr_traddr
	echo 4420 > $NVMET/ports/1/addr_trsvcid
	[ -z "${NVMET_PI:-}" ] || echo 1 > $NVMET/ports/1/param_pi_enable ||
		fail "nvmet port: T10-PI"
	shift 2
	for d in "$@"; do
		n=$((n + 1))
		ns=$NVMET_S/namespaces/$n
		mkdir $ns
		echo -n "$d" > $ns/device_path
		if [ $n = 1 ]; then
			[ -z "${NVMET_UUID:-}" ] || echo "$NVMET_UUID" > $ns/device_uuid
			[ -z "${NVMET_NGUID:-}" ] || echo "$NVMET_NGUID" > $ns/device_nguid
		fi
		echo 1 > $ns/enable || fail "nvmet namespace $n ($d)"
	done
	nvmet_port_add || fail "nvmet port link"
}

nvmet_port_del() { rm $NVMET_P; }
nvmet_port_add() { ln -s $NVMET_S $NVMET_P; }

nvmet_down() {
	local ns
	NVMET_DOWN=failed
	nvmet_port_del
	for ns in $NVMET_S/namespaces/*; do
		echo 0 > $ns/enable
		rmdir $ns
	done
	rmdir $NVMET_S $NVMET/ports/1 || say "note: nvmet configfs teardown failed"
	rmmod nvmet_rdma && rmmod nvmet && NVMET_DOWN=ok
}

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
	ulp_wait 50 ulp_zero host_mrs
	host_mrs
}

written_mib() { cat /sys/block/nvme*/stat | awk '{ s += $7 } END { print int(s / 2048) }'; }
wrote_some() { [ "$(written_mib)" -ge "$1" ]; }
reconnects() { dmesg | grep -c 'Successfully reconnected'; }
