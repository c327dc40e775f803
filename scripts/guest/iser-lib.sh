# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=dash
# Sourced by the iSER guests' /init (init-ulp-iser.sh, init-pair-iser.sh)
# after /base-lib.sh and /ulp-lib.sh: the kernel's iSCSI target (LIO,
# configured through configfs) with ib_isert, set up here and nowhere
# else, and the initiator's side (open-iscsi over ib_iser).  $t is the
# transport (rxe or siw).
#   lio_up ADDR rd MIB | lio_up ADDR iblock DEV
#                       LIO and ib_isert loaded; target LIO_IQN, TPG 1,
#                       LUN 0 on a RAM disk of MIB MiB (rd_mcp) or on the
#                       block device DEV (iblock, with a fixed serial, so
#                       that a target booted again is the same LUN), the
#                       iSER portal ADDR:3260, no ACLs, no CHAP; with
#                       LIO_PI=1 the backstore keeps T10-DIF type 1
#                       protection information (pi_prot_type, set before
#                       the LUN exports it) and the TPG offers it to
#                       ib_isert (t10_pi)
#   lio_portal_add      the iSER portal (again)
#   lio_portal_del      iSER off on the portal, the portal deleted
#   lio_tpg_off         the TPG disabled (its sessions drop)
#   lio_down            (bounded, 60 s) LIO torn down and unloaded:
#                       LIO_DOWN=ok|failed
#   iscsi_up RETRIES    open-iscsi's configuration and iscsid, in the
#                       background (log /tmp/iscsid.log, ISCSID_PID);
#                       RETRIES initial login retries
#   drv_load stock|mrkit|fence
#                       Debian's ib_iser, or the one on mrkit (/ulp) with
#                       iSER's lazy invalidation or (fence) mrkit's rkey
#                       fence; with ISER_PI=1 either with pi_enable=1
#   find_dev            DEV: the SCSI disk, once there
#   no_session, no_disk no iSCSI session, no SCSI disk left
#   ini_mrs             the initiator's MRs on the RDMA device
#   recoveries          sessions iscsid recovered so far
# ULP_KNOWN (ulp-lib.sh's ulp_known) names the iSCSI transport class's
# one known warning (below).
TC=/sys/kernel/config/target
LIO_IQN=iqn.2003-01.org.example.mrkit:lun
INI_IQN=iqn.2003-01.org.example.mrkit:initiator

lio_up() {
	local m
	for m in target_core_mod iscsi_target_mod ib_isert; do
		modprobe $m || fail "modprobe $m"
	done
	LIO_G=$TC/iscsi/$LIO_IQN/tpgt_1
	LIO_NP=$LIO_G/np/$1:3260
	case $2 in
	rd)
		LIO_HBA=$TC/core/rd_mcp_0
		LIO_BK=$LIO_HBA/rd0
		mkdir -p $LIO_BK
		echo rd_pages=$(($3 * 256)) > $LIO_BK/control
		;;
	iblock)
		modprobe target_core_iblock || fail "modprobe target_core_iblock"
		LIO_HBA=$TC/core/iblock_0
		LIO_BK=$LIO_HBA/ns
		mkdir -p $LIO_BK
		echo udev_path=$3 > $LIO_BK/control
		echo 4d524b49542d50414952 > $LIO_BK/wwn/vpd_unit_serial
		;;
	esac
	echo 1 > $LIO_BK/enable || fail "LIO backstore ($2)"
	if [ "${LIO_PI:-0}" = 1 ]; then
		echo 1 > $LIO_BK/attrib/pi_prot_type || fail "LIO backstore PI ($2)"
	fi
	mkdir -p $LIO_G/lun/lun_0
	ln -s $LIO_BK $LIO_G/lun/lun_0/ns || fail "LUN link"
	lio_portal_add || fail "iSER portal"
	echo 0 > $LIO_G/attrib/authentication
	echo 1 > $LIO_G/attrib/generate_node_acls
	echo 1 > $LIO_G/attrib/cache_dynamic_acls
	echo 0 > $LIO_G/attrib/demo_mode_write_protect
	if [ "${LIO_PI:-0}" = 1 ]; then
		echo 1 > $LIO_G/attrib/t10_pi || fail "TPG t10_pi"
	fi
	echo 1 > $LIO_G/enable || fail "TPG enable"
}

# LIO always opens a TCP listener first, then iSER is added.  siw listens
# on real TCP sockets, so on siw the TCP listener is created from a
# throwaway network namespace (iscsit binds in the caller's, isert always
# in init_net), which leaves ADDR:3260 to siw.
lio_portal_add() {
	if [ "$t" = siw ]; then
		unshare -n sh -c "echo 1 > /proc/sys/net/ipv4/ip_nonlocal_bind; mkdir $LIO_NP" ||
			return 1
	else
		mkdir $LIO_NP || return 1
	fi
	echo 1 > $LIO_NP/iser
}

lio_portal_del() { echo 0 > $LIO_NP/iser && rmdir $LIO_NP; }
lio_tpg_off() { echo 0 > $LIO_G/enable; }

lio_teardown() {
	echo 0 > $LIO_G/enable
	echo 0 > $LIO_NP/iser
	rmdir $LIO_NP
	rm $LIO_G/lun/lun_0/ns
	# The fabric's and the HBA's directories hold their modules.
	rmdir $LIO_G/lun/lun_0 $LIO_G $TC/iscsi/$LIO_IQN $TC/iscsi $LIO_BK $LIO_HBA &&
		touch /tmp/lio.down
}

# Bounded: LIO's session release can hang on siw (see README).
lio_down() {
	local m
	LIO_DOWN=failed
	lio_teardown &
	if ! ulp_wait 600 test -e /tmp/lio.down; then
		say "note: LIO teardown did not finish in 60 s"
		return
	fi
	for m in ib_isert iscsi_target_mod target_core_iblock target_core_mod; do
		[ -e /sys/module/$m ] || continue
		ulp_wait 100 rmmod $m 2> /dev/null || return
	done
	[ -e /sys/module/target_core_mod ] || LIO_DOWN=ok
}

# NOP-Out every 5 s with 5 s to answer; 120 s for a session's recovery (a
# target boot under TCG fits in it: I/O waits rather than fails).
iscsi_up() {
	local m
	for m in libiscsi scsi_transport_iscsi sd_mod; do
		modprobe $m || fail "modprobe $m"
	done
	mkdir -p /etc/iscsi /var/lib/iscsi /run/lock/iscsi /var/lock
	echo "root:x:0:0:root:/:/bin/sh" > /etc/passwd
	echo "InitiatorName=$INI_IQN" > /etc/iscsi/initiatorname.iscsi
	cat > /etc/iscsi/iscsid.conf <<-CONF
		node.startup = manual
		node.session.timeo.replacement_timeout = 120
		node.conn[0].timeo.login_timeout = 15
		node.conn[0].timeo.logout_timeout = 15
		node.conn[0].timeo.noop_out_interval = 5
		node.conn[0].timeo.noop_out_timeout = 5
		node.session.initial_login_retry_max = $1
	CONF
	/usr/bin/iscsid -f > /tmp/iscsid.log 2>&1 &
	ISCSID_PID=$!
}

drv_load() {
	local pi=
	[ "${ISER_PI:-0}" = 1 ] && pi=pi_enable=1
	case $1 in
	stock)
		# shellcheck disable=SC2086
		modprobe ib_iser $pi || fail "modprobe ib_iser (stock)"
		[ ! -e /sys/module/ib_iser/parameters/mrkit_fence ] ||
			fail "stock ib_iser expected"
		;;
	mrkit | fence)
		# shellcheck disable=SC2086
		insmod /ulp/ib_iser.ko mrkit_fence=$([ "$1" = fence ] && echo 1 || echo 0) $pi ||
			fail "insmod /ulp/ib_iser.ko"
		[ -e /sys/module/ib_iser/parameters/mrkit_fence ] ||
			fail "converted ib_iser expected"
		;;
	esac
}

find_dev() { ulp_sd_dev; }

no_session() { ! ls /sys/class/iscsi_session/session* > /dev/null 2>&1; }
no_disk() { ulp_no_sd; }
ini_mrs() { rdma res show mr | grep -c 'comm \[ib_iser\]'; }
recoveries() { grep -c 'operational after recovery' /tmp/iscsid.log; }

# One known warning of the iSCSI transport class: when a session is
# unbound, its iscsi_ctrl work (a WQ_MEM_RECLAIM workqueue) removes the
# SCSI target, and removing the target's device flushes its runtime-PM
# work on the pm workqueue (not WQ_MEM_RECLAIM), which
# check_flush_dependency() warns about once per boot whichever initiator
# driver runs (no iSER or mrkit code is on that path).  The work function
# is printed with its module's name when the transport class is a module.
ULP_KNOWN='WQ_MEM_RECLAIM iscsi_ctrl_[0-9:]+__iscsi_unbind_session( \[scsi_transport_iscsi\])? is flushing !WQ_MEM_RECLAIM pm:pm_runtime_work'
