#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0-only
# Guest /init of "vm-pair.sh iser": one of two guests on a private wire.
#   pair_role=target     the kernel's iSCSI target (LIO, iser-lib.sh) with
#                        ib_isert on 10.98.0.1:3260, one LUN on /dev/vda
#                        (iblock; the host keeps the disk in RAM, so that it
#                        outlives a killed target), fixed names and serial,
#                        so that a rebooted target is the same LUN to the
#                        initiator; serves until the host's stop, then tears
#                        LIO down and unloads it
#   pair_role=initiator  10.98.0.2: open-iscsi (iscsid, iscsiadm, iface
#                        iser) over Debian's stock ib_iser or the one on
#                        mrkit (/ulp/ib_iser.ko); for each step of
#                        pair_steps (DRIVER:FAULT,...) pair_step of
#                        /pair-lib.sh: log in, fio verify=crc32c on the
#                        SCSI disk with FAULT injected, read-back, log out,
#                        unload, "MRKIT-VM PAIR fault ..."
# Faults: loss1 loss5 delay reorder dup linkflap targetkill as for nvme;
# linkdown lasts pair_down s past iSCSI's NOP-Out timeout (5 s interval +
# 5 s), so the connection fails and iscsid recovers the session; logout:
# iscsiadm --logout under fio (the disk goes, queued I/O fails).
# vm-pair.sh reads the next line (host side: extra modules, deletion fault).
#PAIR-HOST mods=target_core_iblock delete=logout
. /base-lib.sh
. /ulp-lib.sh
. /iser-lib.sh
. /pair-lib.sh
TADDR=10.98.0.1
pair_delete=logout
PAIR_TMO=10
PAIR_BSSPLIT=512/10:4k/30:16k/20:64k/15:256k/15:1m/10

target() {
	pair_target_up $TADDR
	lio_up $TADDR iblock /dev/vda
	s_start=$(ulp_splats)
	say "PAIR target ready"
	pair_serve_until_stop
	lio_down
	pair_log_check
	say "PAIR target end splats=$(($(ulp_splats) - s_start)) unload=$LIO_DOWN"
	poweroff -f
}

# --- the initiator's hooks (see pair-lib.sh) ---

# Every iscsiadm call bounded (the target side may be recovering).
adm() { timeout 60 iscsiadm "$@" > /tmp/iscsiadm.log 2>&1; }

login_tries() {
	local n=0
	until adm -m node -T $LIO_IQN -p $TADDR:3260 -I iser --login; do
		n=$((n + 1))
		[ $n -lt 4 ] || return 1
		sleep 3
	done
}

# A target whose session release hangs (LIO on siw, see README) takes no
# new login: after four failed logins the host power-cycles it once
# (PAIR_RESETS counts it, the step's line says so).
login() {
	if ! login_tries; then
		sed 's/^/MRKIT-VM PAIR note: login: /' /tmp/iscsiadm.log
		pair_req target-kill || return 1
		PAIR_RESETS=$((PAIR_RESETS + 1))
		login_tries || return 1
	fi
	ulp_wait 300 find_dev
}

drv_up() { pair_disk_up "$1"; }

drv_ready() {
	if no_session; then
		login || return 1
	fi
	ulp_wait 300 find_dev || return 1
	pair_disk_fio
}

drv_delete() {
	adm -m node -T $LIO_IQN -p $TADDR:3260 --logout ||
		sed 's/^/MRKIT-VM PAIR note: logout: /' /tmp/iscsiadm.log
}

drv_down() {
	adm -m node -T $LIO_IQN -p $TADDR:3260 --logout
	ulp_wait 300 no_session && ulp_wait 100 no_disk || return 1
	ulp_wait 100 rmmod ib_iser 2> /dev/null
}

drv_reconnects() { recoveries; }
drv_written_mib() { pair_disk_written_mib; }
drv_mrs() {
	ulp_wait 50 ulp_zero ini_mrs
	ini_mrs
}
drv_state() {
	cat /sys/class/iscsi_session/session*/state 2> /dev/null | sed 's/^/session /'
	tail -n 10 /tmp/iscsid.log
}

initiator() {
	local m
	pair_net "$t" 10.98.0.2
	ulp_fio_mount
	modprobe mrkit || fail "modprobe mrkit"
	iscsi_up 2
	pair_req target-ready || fail "the target did not come up"
	# Discovery (SendTargets) over iSER itself, once, with the stock
	# driver: the node record for every later login.
	drv_load stock
	adm -m discovery -t st -p $TADDR:3260 -I iser ||
		{ cat /tmp/iscsiadm.log; fail "discovery"; }
	ulp_wait 100 rmmod ib_iser 2> /dev/null || fail "rmmod ib_iser after discovery"
	pair_schedule
}

pair_role_run
