#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0-only
# Guest /init of "vm-ulp.sh iser": the kernel's iSCSI target (LIO,
# iser-lib.sh) with ib_isert on a RAM-backed LUN (rd_mcp), and the
# kernel's iSER initiator - Debian's stock ib_iser or the one converted to
# mrkit (/ulp/ib_iser.ko; mrkit_fence=1 for mrkit's rkey fence instead of
# iSER's lazy invalidation) - driven by open-iscsi (iscsid + iscsiadm,
# iface iser), over rxe or siw on a dummy netdev with a guest-only address.
# fio (over 9p) drives the SCSI disk /dev/sdX.
#   mrkit_mode=check  mrkit driver: a short verify run and its read-back,
#                     the target portal removed and re-added under load,
#                     over rxe the RDMA link deleted and added under load
#                     (iser_faults; iser_drv, or each driver of
#                     mrkit_drivers)
#   mrkit_mode=demo   verify runs: 256 MiB for mrkit, 32 MiB for mrkit
#                     with the fence and for stock (iser_verify and
#                     iser_verify_other from scripts/host/ulp-iser.sh);
#                     logout+login, the portal fault and over rxe the
#                     link's deletion under load (mrkit, or iser_drv)
#   mrkit_mode=pi     (over rxe-pi) T10-PI end to end: the RAM LUN with
#                     DIF type 1 protection information, the TPG with
#                     t10_pi, ib_iser with pi_enable=1; for both drivers,
#                     fio verify on the disk with the block layer
#                     generating and checking the protection information,
#                     its read-back, and single writes and reads sent
#                     corrupt by rdma_rxe_pi, which must fail
#   mrkit_mode=bench  A/B: sequential 512 KiB write and read, 4 KiB random
#                     read; stock, mrkit, mrkit+fence interleaved, the
#                     order reversed from round to round (iser_ab_rounds)
# Sizes arrive as iser_verify, iser_verify_other, iser_fault, iser_pi_mib
# (MiB), iser_ab_secs, iser_ab_rounds, iser_faults.
# Facts go to the console as "MRKIT-VM ISER ..." lines and fio's JSON;
# scripts/mrkit_report/iser.py turns them into VERIFY/FAULT/AB/PI/PIERR
# lines.
. /base-lib.sh
. /ulp-lib.sh
. /iser-lib.sh
IP=10.99.0.1

BSSPLIT=512/10:4k/30:16k/20:64k/15:128k/15:512k/10
vmib=${iser_verify:-32}
fmib=${iser_fault:-16}

fabric "$t"
ulp_fio_mount
modprobe mrkit || fail "modprobe mrkit"

# LIO keeps established connections when a portal goes; disabling the TPG
# drops its sessions.  So the portal fault is: iSER turned off and the
# portal deleted (no new connection reaches the target), the TPG disabled
# (the session drops), then all of it back.  On siw, LIO's session release
# with the target's RDMA READs in flight did not finish within minutes
# (seen with Debian's stock ib_iser as well): there the portal goes under
# load and the TPG is disabled once fio has finished.
np_del() {
	lio_portal_del || return 1
	mark "portal deleted"
}

tpg_off() {
	lio_tpg_off
	mark "TPG disabled"
}

# A RAM LUN large enough for the biggest region used, no ACLs, no CHAP;
# mode pi: beyond the verify region, 16 MiB for the corruption runs.
lun_mib=$((vmib > 2 * fmib ? vmib : 2 * fmib))
pimib=${iser_pi_mib:-32}
if [ "$mode" = pi ]; then
	lun_mib=$((pimib + 16))
	# shellcheck disable=SC2034  # iser-lib.sh reads them
	LIO_PI=1 ISER_PI=1
fi
[ $lun_mib -ge 64 ] || lun_mib=64
lio_up $IP rd $lun_mib
iscsi_up 8

iser_login() {
	iscsiadm -m discovery -t st -p $IP:3260 -I iser > /tmp/disc.log 2>&1 ||
		{ cat /tmp/disc.log; return 1; }
	iscsiadm -m node -T $LIO_IQN -p $IP:3260 -I iser --login > /tmp/login.log 2>&1 ||
		{ cat /tmp/login.log; return 1; }
	ulp_wait 300 find_dev
}

iser_logout() {
	iscsiadm -m node -T $LIO_IQN -p $IP:3260 --logout > /tmp/logout.log 2>&1 ||
		cat /tmp/logout.log
	ulp_wait 300 no_session && ulp_wait 100 no_disk
}

drv_unload() {
	ulp_wait 100 rmmod ib_iser 2> /dev/null || fail "rmmod ib_iser ($1)"
}

# MRs the initiator still has registered once everything is idle (the
# PD's owner is ib_iser; ib_isert's own MRs on iWARP go when the target
# has torn its side down, which may take longer).
mrs_left() {
	ulp_wait 50 ulp_zero ini_mrs
	ini_mrs
}

# mrkit's counters for the pools of the current connection.
mrkit_stats() {
	say "ISER stats $t $1 remote_inv=$(ulp_mrkit_stat remote_inv)" \
	    "local_inv=$(ulp_mrkit_stat local_inv) bogus_inv=$(ulp_mrkit_stat bogus_inv)" \
	    "high_water=$(ulp_mrkit_stat high_water) stale_replaced=$(ulp_mrkit_stat stale_replaced)" \
	    "in_use=$(ulp_mrkit_stat in_use)"
}

logged_in() { grep -q LOGGED_IN /sys/class/iscsi_session/session*/state 2> /dev/null; }
gone() { ! kill -0 "$1" 2> /dev/null; }
recovered() { [ "$(recoveries)" -gt "$1" ]; }

# What the target, the initiator and iscsid said lately.
diag() {
	dmesg | grep -iE 'iser|isert|iscsi|siw|rdma|conn error|session' |
		tail -n 25 | sed 's/^/MRKIT-VM   dmesg: /'
	tail -n 10 /tmp/iscsid.log | sed 's/^/MRKIT-VM   iscsid: /'
	cat /sys/class/iscsi_session/session*/state 2> /dev/null |
		sed 's/^/MRKIT-VM   session: /'
}
written_mib() { awk '{ print int($7 / 2048) }' "/sys/block/${DEV#/dev/}/stat"; }
wrote_some() { [ "$(written_mib)" -ge "$1" ]; }

# fio's verify job: random writes, block sizes 512 B..512 KiB, iodepth 32,
# two jobs on disjoint halves of the region, crc32c in every block.
verify_args() {	# MiB-per-job offset-MiB
	echo "--name=verify --filename=$DEV --direct=1 --ioengine=libaio" \
	     "--rw=randwrite --bssplit=$BSSPLIT --iodepth=32 --numjobs=2" \
	     "--offset=${2}m --size=${1}m --offset_increment=${1}m" \
	     "--verify=crc32c --randrepeat=1 --verify_fatal=0"
}

# Phases on the console (not MRKIT-VM lines), for timing.
mark() { echo "ISER-TIME $(cut -d' ' -f1 /proc/uptime) $*"; }

# Write and verify a region, then read it all back in a second pass.
run_verify() {	# driver MiB
	mark "verify $1 $2"
	drv_load "$1"
	iser_login || fail "login ($1)"
	l0=$(ulp_mrkit_leaks)
	mark "login done"
	# The owner of the initiator's MRs, as mrs_left() counts them.
	say "ISER mrs $t $1 initiator=$(ini_mrs) all=$(rdma res show mr | grep -c mrn)"
	# shellcheck disable=SC2046
	ulp_fio "verify-$t-$1" $(verify_args $(($2 / 2)) 0) --do_verify=1
	# shellcheck disable=SC2046
	ulp_fio "readback-$t-$1" $(verify_args $(($2 / 2)) 0) --verify_only=1
	[ "$1" = stock ] || mrkit_stats "$1"
	mark "logout"
	iser_logout || fail "logout ($1)"
	drv_unload "$1"
	mark "unloaded"
	say "ISER verify $t $1 leaks=$(($(ulp_mrkit_leaks) - l0 + $(mrs_left)))"
}

# A fault under load.  Region A (the first MiB) is written and verified
# before; fio writes region B while the fault hits.  Afterwards region A
# must read back intact, and region B: for the portal fault (the session
# recovers by itself, I/O resumes) fio's own verification of what it
# wrote, running behind the writes, and a read-back; for logout (the disk
# goes away under fio: reads of a deleted disk end early, which fio would
# report as bad headers) a fresh write and verify on the new session.
run_fault() {	# driver fault MiB
	mark "fault $1 $2"
	drv_load "$1"
	iser_login || fail "login ($1, $2)"
	s0=$(ulp_splats)
	l0=$(ulp_mrkit_leaks)
	r0=$(recoveries)
	h=$(($3 / 2))
	# shellcheck disable=SC2046
	ulp_fio "fault-$t-$2-$1-pre" $(verify_args $h 0) --do_verify=1
	behind="--do_verify=1 --verify_backlog=32"
	[ "$2" = logout ] && behind=--do_verify=0
	# shellcheck disable=SC2046,SC2086
	ulp_fio "fault-$t-$2-$1" $(verify_args $h "$3") $behind \
		--continue_on_error=all &
	pid=$!
	w0=$(written_mib)
	ulp_wait 600 wrote_some $((w0 + h / 2 + 1)) ||
		say "ISER note: little progress before the fault"
	relog=0
	case $2 in
	logout)
		iser_logout || fail "logout under load ($1)"
		wait $pid
		iser_login || fail "login after logout ($1)"
		relog=1
		# shellcheck disable=SC2046
		ulp_fio "fault-$t-$2-$1-after-b" $(verify_args $h "$3") --do_verify=1
		;;
	portal)
		rm -f /tmp/portal.done
		if [ "$t" = siw ]; then
			np_del || fail "portal removal ($1)"
			wait $pid
			tpg_off && touch /tmp/portal.done &
		else
			np_del && tpg_off && touch /tmp/portal.done &
		fi
		ulp_wait 1800 test -e /tmp/portal.done ||
			{ diag; fail "portal removal ($1) did not finish"; }
		sleep 2
		lio_portal_add || fail "portal re-add ($1)"
		echo 1 > $LIO_G/enable || fail "TPG re-enable ($1)"
		ulp_wait 600 logged_in || { diag; fail "no session recovery ($1)"; }
		wait $pid
		ulp_wait 300 find_dev || fail "no disk after recovery ($1)"
		# shellcheck disable=SC2046
		ulp_fio "fault-$t-$2-$1-after-b" $(verify_args $h "$3") --verify_only=1
		;;
	linkdel)
		# The RDMA device goes under load: RDMA/CM tells the
		# initiator's connection and the target's portal
		# DEVICE_REMOVAL, and each frees its resources from that
		# event, what tasks still hold included.  The deletion returns
		# once every client let the device go.
		rdma link delete mrkd0 &
		lpid=$!
		ulp_wait 1200 gone "$lpid" ||
			{ diag; fail "rdma link delete did not return ($1)"; }
		rdma link add mrkd0 type "$t" netdev dummy0 || fail "rdma link add ($1)"
		np_del || fail "portal removal after the link ($1)"
		lio_portal_add || fail "portal re-add after the link ($1)"
		ulp_wait 1800 recovered "$r0" ||
			{ diag; fail "no session recovery after the link ($1)"; }
		wait $pid
		ulp_wait 300 find_dev || fail "no disk after recovery ($1)"
		# shellcheck disable=SC2046
		ulp_fio "fault-$t-$2-$1-after-b" $(verify_args $h "$3") --verify_only=1
		;;
	esac
	# shellcheck disable=SC2046
	ulp_fio "fault-$t-$2-$1-after" $(verify_args $h 0) --verify_only=1
	[ "$1" = stock ] || mrkit_stats "$1"
	rc=$(($(recoveries) - r0 + relog))
	iser_logout || fail "logout after $2 ($1)"
	drv_unload "$1"
	left=$(mrs_left)
	l1=$(ulp_mrkit_leaks)
	say "ISER fault $t $2 $1 reconnects=$rc leaks=$((l1 - l0 + left)) splats=$(($(ulp_splats) - s0))"
}

# A/B: sequential 512 KiB write and read, 4 KiB random read, iodepth 32.
run_ab() {	# driver round seconds
	mark "ab $1 $2"
	drv_load "$1"
	iser_login || fail "login ($1)"
	common="--filename=$DEV --direct=1 --ioengine=libaio --iodepth=32 --time_based --runtime=$3 --size=48m"
	# shellcheck disable=SC2086
	ulp_fio "ab-$t-seqwrite-$1-$2" --name=seqwrite $common --rw=write --bs=512k
	# shellcheck disable=SC2086
	ulp_fio "ab-$t-seqread-$1-$2" --name=seqread $common --rw=read --bs=512k
	# shellcheck disable=SC2086
	ulp_fio "ab-$t-randread4k-$1-$2" --name=randread4k $common --rw=randread --bs=4k
	[ "$1" = stock ] || mrkit_stats "$1"
	iser_logout || fail "logout ($1)"
	drv_unload "$1"
}

# T10-PI end to end: the block layer generates the protection information
# on writes and checks it on reads, the initiator's and the target's
# integrity MRs (rdma_rxe_pi) carry it between memory and the wire, the
# LUN keeps it.  fio verify, its read-back, then the corruption runs.
run_pi() {	# driver MiB
	local fmt pools f
	mark "pi $1 $2"
	drv_load "$1"
	iser_login || { diag; fail "login ($1)"; }
	fmt=$(cat /sys/block/${DEV#/dev/}/integrity/format 2> /dev/null)
	say "ISER note: pi ($1, $t) on $DEV: integrity ${fmt:-none}," \
	    "LUN pi_prot_type $(cat $LIO_BK/attrib/pi_prot_type)"
	# shellcheck disable=SC2046
	ulp_fio "pi-$t-$1" $(verify_args $(($2 / 2)) 0) --do_verify=1
	# shellcheck disable=SC2046
	ulp_fio "pireadback-$t-$1" $(verify_args $(($2 / 2)) 0) --verify_only=1
	# Beyond the verify region.
	ulp_pi_errors ISER "$1" $((pimib * 256))
	pools=
	if [ "$1" != stock ]; then
		for f in in_use sig_checks sig_errors; do
			pools="$pools $f=$(ulp_mrkit_stat $f)"
		done
	fi
	say "ISER pi $t $1 integrity=${fmt:-none} pools:$pools"
	iser_logout || fail "logout ($1)"
	drv_unload "$1"
}

mark "setup done"
s_start=$(ulp_splats)
faults=$(echo "${iser_faults:-}" | tr ',' ' ')
case $mode in
check)
	for drv_ in $(ulp_drivers "${iser_drv:-mrkit}"); do
		run_verify "$drv_" "$vmib"
		for f in $faults; do
			run_fault "$drv_" "$f" "$fmib"
		done
	done
	;;
demo)
	run_verify mrkit "$vmib"
	run_verify fence "${iser_verify_other:-64}"
	run_verify stock "${iser_verify_other:-64}"
	for f in $faults; do
		run_fault "${iser_drv:-mrkit}" "$f" "$fmib"
	done
	;;
pi)
	[ "$t" = rxe-pi ] || fail "mode pi needs rxe-pi"
	run_pi stock "$pimib"
	run_pi mrkit "$pimib"
	dmesg | grep -iE 'PI error|DIF|guard|ref.?tag|sense' | tail -n 12 |
		sed 's/^/MRKIT-VM   dmesg: /'
	;;
bench)
	# stock and mrkit, and mrkit and fence, neighbours in every round.
	ulp_ab_alternate "${iser_ab_secs:-4}" "${iser_ab_rounds:-6}" stock mrkit fence
	;;
*)
	fail "unknown mode $mode"
	;;
esac

kill $ISCSID_PID 2> /dev/null
ulp_finish iser
