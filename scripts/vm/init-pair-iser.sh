#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0-only
# Guest /init of "pair.sh iser": one of two guests on a private wire.
#   pair_role=target     the kernel's iSCSI target (LIO, configfs) with
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
#                        /init-pair-lib.sh: log in, fio verify=crc32c on the
#                        SCSI disk with FAULT injected, read-back, log out,
#                        unload, "MRKIT-VM PAIR fault ..."
# Faults: loss1 loss5 delay reorder dup linkflap targetkill as for nvme;
# linkdown lasts pair_down s past iSCSI's NOP-Out timeout (5 s interval +
# 5 s), so the connection fails and iscsid recovers the session; logout:
# iscsiadm --logout under fio (the disk goes, queued I/O fails).
# pair.sh reads the next line (host side: extra modules, deletion fault).
#PAIR-HOST mods=target_core_iblock delete=logout
. /init-lib.sh
. /init-ulp-lib.sh
. /init-pair-lib.sh
t=${mrkit_transport:-rxe}
mode=${mrkit_mode:-check}
TADDR=10.98.0.1
IQN=iqn.2003-01.org.example.mrkit:pair
INI=iqn.2003-01.org.example.mrkit:pair-initiator
TC=/sys/kernel/config/target
G=$TC/iscsi/$IQN/tpgt_1
NP=$G/np/$TADDR:3260
BK=$TC/core/iblock_0/ns
pair_delete=logout
PAIR_TMO=10
PAIR_BSSPLIT=512/10:4k/30:16k/20:64k/15:256k/15:1m/10

# The portal: LIO always opens a TCP listener first.  On siw that would
# hold TADDR:3260 against siw's own listener, so it is created from a
# throwaway network namespace (iscsit binds in the caller's, isert always
# in init_net).
portal_add() {
	if [ "$t" = siw ]; then
		unshare -n sh -c "echo 1 > /proc/sys/net/ipv4/ip_nonlocal_bind; mkdir $NP" ||
			return 1
	else
		mkdir $NP || return 1
	fi
	echo 1 > $NP/iser
}

lio_down() {
	echo 0 > $G/enable
	echo 0 > $NP/iser
	rmdir $NP
	rm $G/lun/lun_0/ns
	# The fabric's and the HBA's directories hold their modules.
	rmdir $G/lun/lun_0 $G $TC/iscsi/$IQN $TC/iscsi $BK $TC/core/iblock_0 &&
		touch /tmp/lio.down
}

target() {
	local m
	pair_target_up $TADDR target_core_mod target_core_iblock iscsi_target_mod ib_isert
	mkdir -p $BK || fail "iblock configfs"
	echo udev_path=/dev/vda > $BK/control
	echo 4d524b49542d50414952 > $BK/wwn/vpd_unit_serial
	echo 1 > $BK/enable || fail "iblock backstore"
	mkdir -p $G/lun/lun_0
	ln -s $BK $G/lun/lun_0/ns || fail "LUN link"
	portal_add || fail "iSER portal"
	echo 0 > $G/attrib/authentication
	echo 1 > $G/attrib/generate_node_acls
	echo 1 > $G/attrib/cache_dynamic_acls
	echo 0 > $G/attrib/demo_mode_write_protect
	echo 1 > $G/enable || fail "TPG enable"
	s_start=$(ulp_splats)
	say "PAIR target ready"
	pair_serve_until_stop
	# Bounded: LIO's session release can hang on siw (see README).
	lio_down &
	m=failed
	if ulp_wait 600 test -e /tmp/lio.down; then
		for m in ib_isert iscsi_target_mod target_core_iblock target_core_mod; do
			ulp_wait 100 rmmod $m 2> /dev/null || break
		done
		[ -e /sys/module/target_core_mod ] && m=failed || m=ok
	else
		say "PAIR note: LIO teardown did not finish in 60 s"
	fi
	pair_log_check
	say "PAIR target end splats=$(($(ulp_splats) - s_start)) unload=$m"
	poweroff -f
}

# --- the initiator's hooks (see init-pair-lib.sh) ---

drv_load() {	# stock | mrkit
	if [ "$1" = stock ]; then
		modprobe ib_iser || fail "modprobe ib_iser (stock)"
		[ ! -e /sys/module/ib_iser/parameters/mrkit_fence ] ||
			fail "stock ib_iser expected"
	else
		insmod /ulp/ib_iser.ko mrkit_fence=0 || fail "insmod /ulp/ib_iser.ko"
	fi
}

find_dev() {
	local b
	for b in /sys/block/sd*; do
		DEV=/dev/${b##*/}
		[ -b "$DEV" ] && return 0
	done
	return 1
}
no_session() { ! ls /sys/class/iscsi_session/session* > /dev/null 2>&1; }
no_disk() { ! ls /sys/block/sd* > /dev/null 2>&1; }

# Every iscsiadm call bounded (the target side may be recovering).
adm() { timeout 60 iscsiadm "$@" > /tmp/iscsiadm.log 2>&1; }

login_tries() {
	local n=0
	until adm -m node -T $IQN -p $TADDR:3260 -I iser --login; do
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

set_fio() {
	PAIR_FIO="--name=pair --filename=$DEV --size=${pair_mib:-8}m"
	PAIR_FIO="$PAIR_FIO --offset_increment=${pair_mib:-8}m"
}

drv_up() {
	drv_load "$1"
	login || return 1
	set_fio
	# Zeros where fio writes (see init-pair-lib.sh: drv_up).
	dd if=/dev/zero of="$DEV" bs=1M count=$((2 * ${pair_mib:-8})) \
		conv=fsync 2> /dev/null
	W0=$(dev_written)
}

drv_ready() {
	if no_session; then
		login || return 1
	fi
	ulp_wait 300 find_dev || return 1
	set_fio
}

drv_delete() {
	adm -m node -T $IQN -p $TADDR:3260 --logout ||
		sed 's/^/MRKIT-VM PAIR note: logout: /' /tmp/iscsiadm.log
}

drv_down() {
	adm -m node -T $IQN -p $TADDR:3260 --logout
	ulp_wait 300 no_session && ulp_wait 100 no_disk || return 1
	ulp_wait 100 rmmod ib_iser 2> /dev/null
}

drv_reconnects() { grep -c 'operational after recovery' /tmp/iscsid.log; }
# Sectors written to the disk; fio's MiB since drv_up's zeros (W0).
dev_written() {
	[ -e "/sys/block/${DEV#/dev/}/stat" ] || { echo 0; return; }
	awk '{ print $7 }' "/sys/block/${DEV#/dev/}/stat"
}
drv_written_mib() {
	local w
	w=$(($(dev_written) - ${W0:-0}))
	[ $w -gt 0 ] || w=0
	echo $((w / 2048))
}
ini_mrs() { rdma res show mr | grep -c 'comm \[ib_iser\]'; }
drv_mrs() {
	ulp_wait 50 test "$(ini_mrs)" = 0
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
	for m in libiscsi scsi_transport_iscsi sd_mod mrkit; do
		modprobe $m || fail "modprobe $m"
	done
	mkdir -p /etc/iscsi /var/lib/iscsi /run/lock/iscsi /var/lock
	echo "root:x:0:0:root:/:/bin/sh" > /etc/passwd
	echo "InitiatorName=$INI" > /etc/iscsi/initiatorname.iscsi
	# A target boot under TCG fits in the 120 s replacement timeout: I/O
	# waits for the session's recovery rather than failing.
	cat > /etc/iscsi/iscsid.conf <<-EOF
		node.startup = manual
		node.session.timeo.replacement_timeout = 120
		node.conn[0].timeo.login_timeout = 15
		node.conn[0].timeo.logout_timeout = 15
		node.conn[0].timeo.noop_out_interval = 5
		node.conn[0].timeo.noop_out_timeout = 5
		node.session.initial_login_retry_max = 2
	EOF
	/usr/bin/iscsid -f > /tmp/iscsid.log 2>&1 &
	pair_req target-ready || fail "the target did not come up"
	# Discovery (SendTargets) over iSER itself, once, with the stock
	# driver: the node record for every later login.
	drv_load stock
	adm -m discovery -t st -p $TADDR:3260 -I iser ||
		{ cat /tmp/iscsiadm.log; fail "discovery"; }
	ulp_wait 100 rmmod ib_iser 2> /dev/null || fail "rmmod ib_iser after discovery"
	pair_schedule
}

case ${pair_role:-} in
target) target ;;
initiator) initiator ;;
*) fail "pair_role=${pair_role:-} (target or initiator)" ;;
esac
