#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0-only
# Guest /init of "vm-pair.sh srp": one of two guests on a private wire.
#   pair_role=target     LIO's SRP target (ib_srpt, srp-lib.sh) listening
#                        for RDMA/CM on 10.98.0.1, one LUN on /dev/vda
#                        (iblock; the host keeps the disk in RAM, so that it
#                        outlives a killed target) with a fixed serial, an
#                        ACL named as ib_srpt names an RDMA/CM session (by
#                        the connection's local address: the target's own);
#                        serves until the host's
#                        stop, then tears the target down and unloads it
#   pair_role=initiator  10.98.0.2: Debian's stock ib_srp or the one on
#                        mrkit (/ulp/ib_srp.ko), logged in through
#                        add_target; for each step of pair_steps
#                        (DRIVER:FAULT,...) pair_step of /pair-lib.sh: log
#                        in, fio verify=crc32c on the SCSI disk with FAULT
#                        injected, read-back, log out, unload,
#                        "MRKIT-VM PAIR fault ..."
# Faults: loss1 loss5 delay reorder dup linkflap targetkill as for nvme;
# linkdown lasts pair_down s past PAIR_TMO: the SCSI command timeout
# (10 s here) and the 5 s that ib_srp waits for each task management
# response, so that the error handler's aborts and LUN reset run while
# the wire is down; ib_srp has no keep-alive and its RC connection
# outlives the outage, so they are answered on it once the wire is back
# (a reconnect is needed only when the target went away).  Over siw each
# driver's linkdown is followed at once by its targetkill (siwkill below,
# check's order too): after that outage ib_srpt over siw can leave a
# channel's commands unfinished for good, with Debian's ib_srp as with
# mrkit's; its channel release or a LUN reset then waits past the
# hung-task timeout and its unload never ends, so a target that lives on
# fails the next step or the run's end; rportdelete:
# the initiator's target port deleted through sysfs under fio (the disk
# goes, queued I/O fails); linkdel: the initiator's RDMA link deleted
# under fio (its QPs forced to error, ib_srp's device removal takes its
# target ports and the disk with it), added again and logged in to anew,
# followed over siw by the target's killing like linkdown.  Buffers 512 bytes past a page boundary, and
# besides the random writes a job that writes 4 MiB blocks in sequence
# (pair-lib.sh's PAIR_SEQ_BS), so that requests take several MRs: 1025
# pages, on rxe 3 MRs of 512 pages, on siw 5 of 256.  Each step of
# mrkit's driver prints how many MRs its requests took (PAIR_MRS; the MRS
# line of mrkit_report.pair).
# Both guests boot without IPv6: ib_srpt listens on IPv6's wildcard
# address when it can, and siw hands such a listener IPv4 connections
# with v4-mapped addresses, which RDMA/CM refuses (siw_reject() before
# ib_srpt sees the login); without IPv6 ib_srpt listens on IPv4's.
# The target's warnings in ib_srpt's own completion handlers are counted
# apart (tknown, both sides): when ib_srp reconnects a channel that
# already runs (after a target's reboot the SCSI error handler's host
# reset and the transport layer's reconnect work each reconnect), the
# target's completions of RDMA Reads and responses of a command it
# already released arrive and it warns on its own bookkeeping.  A
# disconnect is the initiator's right at any time, and the target's state
# of its commands is its own: any other splat on the target fails.
# vm-pair.sh reads the next line (host side: extra modules, deletion
# fault, faults followed by the target's killing over siw, kernel
# arguments, the target's known warnings).
#PAIR-HOST mods=target_core_iblock delete=rportdelete extra=linkdel siwkill=linkdown,linkdel cmdline=ipv6.disable=1 tknown=ib_srpt\.c:[0-9]+.srpt_(rdma_read|send)_done\+
. /base-lib.sh
. /ulp-lib.sh
. /srp-lib.sh
. /pair-lib.sh
TADDR=10.98.0.1
IADDR=10.98.0.2
pair_delete=rportdelete
PAIR_TMO=20
CMD_TMO=10
PAIR_BSSPLIT=512/10:4k/30:16k/20:64k/15:256k/10:1m/10:2m/5
PAIR_FIO_MORE=--iomem_align=512
PAIR_SEQ_BS=4m
PAIR_MRS=1
# Reconnect every 2 s; I/O fails after 15 s without a connection; the
# disk stays for 10 minutes (a target boots again in less).
SRP_PARAMS="reconnect_delay=2 fast_io_fail_tmo=15 dev_loss_tmo=600"

target() {
	pair_target_up $TADDR
	srpt_up $TADDR /dev/vda
	s_start=$(($(ulp_splats) - $(pair_tknown)))
	say "PAIR target ready"
	pair_serve_until_stop
	srpt_down ||
		dmesg | grep -iE 'srp|target' | tail -n 15 |
			sed 's/^/MRKIT-VM PAIR note: target: /'
	pair_log_check
	say "PAIR target end splats=$(($(ulp_splats) - $(pair_tknown) - s_start)) unload=$SRPT_DOWN known=$(pair_tknown)"
	poweroff -f
}

# --- the initiator's hooks (see pair-lib.sh) ---

# A login, a few times: the target may still be booting or recovering,
# and over siw a channel's connection now and then fails at once
# (ib_srpt sends a zero-length RDMA Write the moment siw reports the
# connection established; siw's initiator resets a connection whose MPA
# reply it reads with that Write already behind it), which fails
# add_target when it is the first channel's.  How often depends on how
# busy the host is (the initiator reads the MPA reply late when its vCPU
# waited), so that several attempts in a row can fail: up to 12, 3 s
# apart, and a note says how many a login took.
# A login that connected but gave no disk (seen right after a target port
# was deleted with I/O in flight: a command of the SCSI scan went
# unanswered, and LIO had no such task when it was aborted) leaves its
# target port behind: it is logged out before the next attempt, which
# ib_srp would otherwise refuse as already connected.
login() {
	local n=0
	SRP_ADDR=$TADDR
	until srp_login && cmd_timeout; do
		n=$((n + 1))
		if [ $n -ge 12 ]; then
			dmesg | grep -iE 'srp|REJ|rdma|siw|rxe' | tail -n 15 |
				sed 's/^/MRKIT-VM PAIR note: login: /'
			return 1
		fi
		if ! no_rport; then
			say "PAIR note: login: connected with no disk, logged out to log in again"
			srp_logout || return 1
		fi
		sleep 3
	done
	[ $n = 0 ] || say "PAIR note: login: connected at attempt $((n + 1))"
}

# SCSI commands time out after CMD_TMO s (the disk's error handling).
cmd_timeout() {
	echo $CMD_TMO > "/sys/block/${DEV#/dev/}/device/timeout"
}

drv_up() { pair_disk_up "$1"; }

# After a target's reboot ib_srp may reconnect more than once (the SCSI
# error handler's host reset and the transport layer's reconnect work
# each reconnect), and each failed attempt fails the queued I/O at once
# (scsi_transport_srp's fast failure after a failed reconnect).  The
# read-back waits until every target port has run for 6 s with no
# reconnect, succeeded or failed.
srp_events() { dmesg | grep -cE 'reconnect succeeded|reconnect attempt'; }
srp_steady() {
	local n
	n=$(srp_events)
	rports_running && sleep 6 && rports_running && [ "$(srp_events)" = "$n" ]
}

drv_ready() {
	# After rportdelete: the old disk gone first (bounded), so that the
	# login's find_dev takes the new one.
	if no_rport; then
		ulp_wait 300 no_disk || say "PAIR note: the deleted target port's disk is still there"
		login || return 1
	fi
	ulp_wait 600 find_dev && cmd_timeout || return 1
	ulp_wait 20 srp_steady ||
		say "PAIR note: srp: reconnects still under way after 2 minutes"
	pair_disk_fio
}

drv_delete() {
	local p
	for p in /sys/class/srp_remote_ports/port-*; do
		[ -e "$p/delete" ] && echo 1 > "$p/delete"
	done
}

drv_linkdel() {
	rdma link delete mrkd0 || { say "PAIR note: rdma link delete failed"; return 1; }
	ulp_wait 300 no_rport || say "PAIR note: srp: a target port left after the link went"
	rdma link add mrkd0 type "$t" netdev eth0 || { say "PAIR note: rdma link add failed"; return 1; }
}

drv_down() {
	srp_logout || return 1
	ulp_wait 100 rmmod ib_srp 2> /dev/null
}

# Reconnects so far, once every target port ib_srp still has is running
# again (bounded): after a target came back, ib_srp reconnects in its own
# time (every reconnect_delay s), after fio has ended.
rports_running() {
	local s
	for s in /sys/class/srp_remote_ports/port-*/state; do
		[ -e "$s" ] || continue
		[ "$(cat "$s")" = running ] || return 1
	done
}
# The count on stdout (pair-lib.sh computes with it), the note on stderr:
# both reach the console.
drv_reconnects() {
	ulp_wait 600 rports_running ||
		say "PAIR note: srp: a target port not running after 60 s: $(cat /sys/class/srp_remote_ports/port-*/state)" >&2
	reconnects
}
drv_written_mib() { pair_disk_written_mib; }
drv_mrs() {
	ulp_wait 50 ulp_zero ini_mrs
	ini_mrs
}
drv_state() {
	grep . /sys/class/srp_remote_ports/port-*/state 2> /dev/null |
		sed 's/^/rport /'
	dmesg | grep -iE 'srp|scsi' | tail -n 10
}

initiator() {
	pair_net "$t" $IADDR
	ulp_fio_mount
	modprobe mrkit || fail "modprobe mrkit"
	pair_req target-ready || fail "the target did not come up"
	pair_schedule
}

pair_role_run
