#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0-only
# Guest /init of "vm-ulp.sh srp": LIO's SRP target (ib_srpt, srp-lib.sh)
# on a RAM-backed LUN (rd_mcp; for the abort fault one that can hold
# commands, srp-lib.sh's hold:), and the kernel's SRP initiator - Debian's
# stock ib_srp or the one converted to mrkit (/ulp/ib_srp.ko) - logged in
# over RDMA/CM through ib_srp's sysfs add_target, over rxe or siw on a
# dummy netdev with a guest-only address.  fio (over 9p) drives the SCSI
# disk /dev/sdX with verify=crc32c: random writes of 256 KiB..4 MiB blocks
# from buffers 512 bytes past a page boundary (4 MiB commands, so that a
# request spans several MRs: 512 pages per MR on rxe, 256 on siw), then
# 4 KiB random writes (one MR each); each region is read back and checked
# in a second pass.
#   mrkit_mode=check  the mrkit driver: a short verify run, and the first
#                     fault of srp_faults under load (each driver of
#                     mrkit_drivers: ulp-lib.sh ulp_drivers)
#   mrkit_mode=demo   verify runs for both drivers; for both, each fault of
#                     srp_faults under load: tpg (TPG off and on: ib_srp
#                     reconnects), rport (the initiator's target port
#                     deleted, then added again), link (the RDMA link
#                     deleted and added again: every QP goes to error),
#                     abort (the target holds commands until the SCSI
#                     error handler's aborts have failed: see run_fault)
#   mrkit_mode=bench  A/B: stock and mrkit interleaved (ulp_ab_rounds)
# Sizes arrive as srp_verify and srp_verify4k (MiB of the two verify jobs)
# and srp_fault (MiB of a fault run).  Facts go to the console as
# "MRKIT-VM SRP ..." lines and fio's JSON; scripts/mrkit_report/srp.py
# turns them into VERIFY/FAULT/MRS/AB lines.
. /base-lib.sh
. /ulp-lib.sh
. /srp-lib.sh
IP=10.99.0.1
BSSPLIT=256k/10:1m/20:2m/30:4m/40
vmib=${srp_verify:-24}
v4k=${srp_verify4k:-4}
fmib=${srp_fault:-16}
faults=$(echo "${srp_faults:-}" | tr ',' ' ')

# Over siw, both ends in this guest, a login now and then fails with an
# RDMA/CM connect error after ib_srpt took it (Debian's ib_srp as mrkit's,
# right after the logout of the login before): one more try.
[ "$t" != siw ] || SRP_LOGIN_RETRY=1
fabric "$t"
ulp_fio_mount
ulp_fio_copy
modprobe mrkit || fail "modprobe mrkit"
lun_mib=$((vmib + v4k > 2 * fmib ? vmib + v4k : 2 * fmib))
[ $lun_mib -ge 64 ] || lun_mib=64
# bench: 128 MiB of A/B jobs (ab_args).
[ "$mode" != bench ] || lun_mib=160
# abort: a LUN that can hold commands (srp-lib.sh's hold:).
case " $faults " in
*" abort "*) srpt_up $IP hold:$lun_mib ;;
*) srpt_up $IP $lun_mib ;;
esac

# Phases on the console (not MRKIT-VM lines), for timing.
mark() { echo "SRP-TIME $(cut -d' ' -f1 /proc/uptime) $*"; }

# fio's jobs, random writes with a crc32c (and the block's offset) in
# every 4 KiB: large blocks (iodepth 4) on MIB MiB at OFFSET and, with
# SMALL, 4 KiB blocks (iodepth 32) on SMALL MiB behind them, side by side.
# OPTS (e.g. --do_verify=1 or --verify_only=1) are for both.
verify_args() {	# OPTS MIB OFFSET-MiB [SMALL-MiB]
	echo "--filename=$DEV --direct=1 --ioengine=libaio --verify=crc32c" \
	     "--verify_interval=4k --randrepeat=1 --verify_fatal=0" \
	     "--rw=randwrite $1 --name=large --bssplit=$BSSPLIT" \
	     "--iomem_align=512 --iodepth=4 --offset=${3}m --size=${2}m"
	[ "${4:-0}" = 0 ] ||
		echo "--name=rand4k --bs=4k --iodepth=32 --offset=$(($3 + $2))m --size=${4}m"
}

# The large blocks read again in 3 MiB pieces from page-aligned buffers:
# other requests, split into MRs elsewhere, than those that wrote and read
# them in the verify runs (the same wrong mapping on both ways would go
# unseen there).  Each 4 KiB must carry its own offset and crc32c.
cross_args() {	# MIB OFFSET-MiB
	echo "--name=cross --filename=$DEV --direct=1 --ioengine=libaio" \
	     "--rw=read --bs=3m --iodepth=4 --offset=${2}m --size=${1}m" \
	     "--verify=crc32c --verify_interval=4k --verify_fatal=0"
}

# MRs the initiator still has registered, given 5 s to reach 0.
mrs_left() {
	ulp_wait 50 ulp_zero ini_mrs
	ini_mrs
}

written_mib() { awk '{ print int($7 / 2048) }' "/sys/block/${DEV#/dev/}/stat"; }
wrote_some() { [ "$(written_mib)" -ge "$1" ]; }
more_reconnects() { [ "$(reconnects)" -gt "$1" ]; }

diag() {
	dmesg | grep -iE 'srp|rdma|siw|rxe|scsi' | tail -n 25 |
		sed 's/^/MRKIT-VM   dmesg: /'
}

# The SCSI error handler's steps so far, from dmesg: each abort that
# failed (scsi_logging_level's error recovery at level 4 says "cmd abort
# failed"), ib_srp's LUN resets and host resets, and the task management
# responses ib_srp got after it had stopped waiting (its own messages).
EH_ABORT_FAILED='cmd abort failed'
EH_LUN_RESET='SRP reset_device called'
EH_HOST_RESET='SRP reset_host called'
EH_LATE='tsk mgmt response too late'
eh_count() { dmesg | grep -c "$1"; }
eh_more() { [ "$(eh_count "$1")" -gt "$2" ]; }
eh_counts() {
	echo "$(eh_count "$EH_ABORT_FAILED") $(eh_count "$EH_LUN_RESET")" \
	     "$(eh_count "$EH_HOST_RESET") $(eh_count "$EH_LATE")"
}
# eh_since COUNTS...: the steps since eh_counts said COUNTS.
eh_since() {
	# shellcheck disable=SC2046
	set -- "$@" $(eh_counts)
	echo "aborts_failed=$(($5 - $1)) lun_resets=$(($6 - $2))" \
	     "host_resets=$(($7 - $3)) late_responses=$(($8 - $4))"
}

# hold_until MESSAGE: the target holds the commands it gets until the
# error handler's step MESSAGE shows once more (bounded), then serves
# them again.
hold_until() {
	local n
	n=$(eh_count "$1")
	srpt_hold || fail "the target's hold (dmsetup suspend)"
	ulp_wait 1800 eh_more "$1" "$n" || say "SRP note: no '$1' within 180 s"
	srpt_release || fail "the target's release (dmsetup resume)"
}

# Write and verify both regions, then read them back in a second pass.
run_verify() {	# driver MiB
	local l0
	mark "verify $1"
	drv_load "$1"
	srp_login || { diag; fail "login ($1)"; }
	l0=$(ulp_mrkit_leaks)
	[ "$1" = stock ] || ulp_mrs_on
	# shellcheck disable=SC2046
	ulp_fio "verify-$t-$1" $(verify_args --do_verify=1 "$2" 0 "$v4k")
	# shellcheck disable=SC2046
	ulp_fio "readback-$t-$1" $(verify_args --verify_only=1 "$2" 0 "$v4k")
	# shellcheck disable=SC2046
	ulp_fio "crossread-$t-$1" $(cross_args "$2" 0)
	[ "$1" = stock ] || say "SRP mrs $t $1 $(ulp_mrs_off)"
	mark "logout"
	srp_logout || fail "logout ($1)"
	drv_unload "$1"
	say "SRP verify $t $1 leaks=$(($(ulp_mrkit_leaks) - l0 + $(mrs_left)))"
}

# A fault under load.  Region A is written and verified first; fio writes
# region B while the fault hits (after tpg, checking behind its writes).
# Afterwards A must read back intact, and B: after tpg (the connection
# comes back, the I/O resumes) a read-back of everything fio wrote; after
# rport and link (the disk goes away under fio) a fresh write and verify on
# the new disk.
# abort: SCSI commands time out after 10 s, and fio waits 1 s after each
# I/O (so that it still runs after the first round).  Twice the target
# holds what it gets; ib_srp's srp_abort() sends an ABORT TASK for each
# command that timed out, which LIO answers only once the command is done,
# so each waits its 5 s and fails; the error handler sends a LUN reset.
# The first time the target serves again as soon as ib_srp sent it: the
# reset is answered and the error handler retries the commands on the
# same connection (the driver on mrkit gives back what a failed abort left
# registered when the request is used again: srp_mrkit_drop(), counted by
# the pools' lazy_released, read before the second round).  The second time it holds
# on until ib_srp's host reset: ib_srp reconnects (what failed aborts left
# goes back with the old connection's pool).  The fault's line counts the
# failed aborts and the resets of both rounds (mrkit_report.srp: none, no
# pass).
run_fault() {	# driver fault MiB
	local s0 l0 r0 h pid rc relog=0 left behind e0 d0 eh= fio_more= lz=
	mark "fault $1 $2"
	drv_load "$1"
	srp_login || { diag; fail "login ($1, $2)"; }
	s0=$(ulp_splats)
	l0=$(ulp_mrkit_leaks)
	r0=$(reconnects)
	h=$(($3 / 2))
	# shellcheck disable=SC2046
	ulp_fio "fault-$t-$2-$1-pre" $(verify_args --do_verify=1 $h 0)
	behind="--do_verify=1 --verify_backlog=8"
	# The disk goes away under fio: reads of a deleted disk end early,
	# which fio would report as bad headers.
	[ "$2" = tpg ] || [ "$2" = abort ] || behind=--do_verify=0
	if [ "$2" = abort ]; then
		fio_more=--thinktime=1s
		echo 10 > "/sys/block/${DEV#/dev/}/device/timeout"
		echo 4 > /proc/sys/dev/scsi/logging_level
		e0=$(eh_counts)
		d0=$(dmesg | wc -l)
	fi
	# shellcheck disable=SC2046
	ulp_fio "fault-$t-$2-$1" $(verify_args "$behind --continue_on_error=all $fio_more" $h $h) &
	pid=$!
	ulp_wait 600 wrote_some $(($(written_mib) + 1)) ||
		say "SRP note: little progress before the fault"
	mark "inject $2"
	case $2 in
	tpg)
		srpt_tpg_off || fail "TPG disable ($1)"
		sleep 3
		srpt_tpg_on || fail "TPG enable ($1)"
		ulp_wait 1200 more_reconnects "$r0" ||
			{ diag; fail "no reconnect after the TPG came back ($1)"; }
		wait $pid
		# shellcheck disable=SC2046
		ulp_fio "fault-$t-$2-$1-after-b" $(verify_args --verify_only=1 $h $h)
		;;
	rport)
		srp_logout || fail "target port removal under load ($1)"
		wait $pid
		srp_login || { diag; fail "login after removal ($1)"; }
		relog=1
		# shellcheck disable=SC2046
		ulp_fio "fault-$t-$2-$1-after-b" $(verify_args --do_verify=1 $h $h)
		;;
	abort)
		hold_until "$EH_LUN_RESET"
		ulp_wait 600 wrote_some $(($(written_mib) + 1)) ||
			say "SRP note: no write after the LUN reset"
		# Before any reconnect only srp_mrkit_drop() releases lazily.
		[ "$1" = stock ] || lz=" lazy_released=$(ulp_mrkit_stat lazy_released)"
		hold_until "$EH_HOST_RESET"
		ulp_wait 1200 more_reconnects "$r0" ||
			{ diag; fail "no reconnect after the host reset ($1)"; }
		wait $pid
		echo 0 > /proc/sys/dev/scsi/logging_level
		# shellcheck disable=SC2086
		eh="$(eh_since $e0)$lz"
		# The error handler's own words, on the console.
		dmesg | tail -n +$((d0 + 1)) |
			grep -E "$EH_ABORT_FAILED|$EH_LUN_RESET|$EH_HOST_RESET|$EH_LATE|reconnect succeeded" |
			head -n 12 | sed "s/^/MRKIT-VM SRP note: abort ($1): /"
		# shellcheck disable=SC2046
		ulp_fio "fault-$t-$2-$1-after-b" $(verify_args --verify_only=1 $h $h)
		;;
	link)
		rdma link delete mrkd0 || fail "rdma link delete ($1)"
		ulp_wait 300 no_rport || { diag; fail "target port left after the link went ($1)"; }
		wait $pid
		rdma link add mrkd0 type "$t" netdev dummy0 || fail "rdma link add ($1)"
		srpt_unconfig || fail "ib_srpt's old port not removed ($1)"
		srpt_config
		srp_login || { diag; fail "login after the link came back ($1)"; }
		relog=1
		# shellcheck disable=SC2046
		ulp_fio "fault-$t-$2-$1-after-b" $(verify_args --do_verify=1 $h $h)
		;;
	esac
	# shellcheck disable=SC2046
	ulp_fio "fault-$t-$2-$1-after" $(verify_args --verify_only=1 $h 0)
	rc=$(($(reconnects) - r0 + relog))
	srp_logout || fail "logout after $2 ($1)"
	drv_unload "$1"
	left=$(mrs_left)
	[ "$left" = 0 ] || rdma res show mr | grep 'comm \[ib_srp\]' | head -n 3 |
		sed 's/^/MRKIT-VM   left: /'
	say "SRP fault $t $2 $1 reconnects=$rc leaks=$(($(ulp_mrkit_leaks) - l0 + left)) splats=$(($(ulp_splats) - s0))${eh:+ $eh}"
}

# A/B (bench): sequential 1 MiB write and read and 4 KiB random read on
# 128 MiB, verified (ulp_ab_jobs).
ab_args() {
	echo "--filename=$DEV --direct=1 --ioengine=libaio --iodepth=32" \
	     "--size=128m --verify=crc32c --verify_interval=4k"
}
ab_up() {
	drv_load "$1"
	srp_login || { diag; fail "login ($1)"; }
}
ab_down() {
	srp_logout || fail "logout ($1)"
	drv_unload "$1"
}

mark "setup done"
s_start=$(ulp_splats)
# The stock driver's verify run first in demo mode, then mrkit's schedule.
[ "$mode" != demo ] || run_verify stock "$vmib"
# shellcheck disable=SC2086
ulp_run_mode "$vmib" "$fmib" "$vmib" "$fmib" $faults
ulp_finish srp
