#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0-only
# Guest /init of "vm-pair.sh nvme": one of two guests on a private wire.
#   pair_role=target     the kernel's nvmet-rdma on 10.98.0.1, one namespace
#                        on /dev/vda (the host keeps it in RAM, so that it
#                        outlives a killed target); fixed identifiers, so
#                        that a rebooted target is the same subsystem and
#                        namespace to the host; serves until the host's stop,
#                        then tears down and unloads nvmet
#   pair_role=initiator  10.98.0.2: for each step of pair_steps (DRIVER:FAULT,
#                        comma-separated; DRIVER stock = Debian's nvme-rdma,
#                        mrkit = /ulp/nvme-rdma.ko), load the driver,
#                        connect, run fio verify=crc32c, inject FAULT while
#                        it runs, read everything fio reports written back,
#                        tear down, unload, and print "MRKIT-VM PAIR fault
#                        ..." with what it measured
# Faults: loss1 loss5 delay reorder dup (netem on the initiator's egress),
# linkflap (the wire down 1 s), linkdown (down pair_down s, longer than
# keep-alive, so error recovery and reconnect run), targetkill (the target
# guest killed and booted again), ctrldelete (the controller deleted).
. /base-lib.sh
. /ulp-lib.sh
. /nvme-lib.sh
. /pair-lib.sh
NQN=nqn.2014-08.org.example:mrkit-pair
TADDR=10.98.0.1
pair_delete=ctrldelete

# Fixed identifiers: a target booted again is the same subsystem and
# namespace to the host.
NVMET_SERIAL=4d524b49542d50414952
NVMET_UUID=6d726b69-742d-7061-6972-2d6e73303031
NVMET_NGUID=6d726b69742d70616972000000000001

target() {
	pair_target_up $TADDR
	nvmet_up $NQN $TADDR /dev/vda
	s_start=$(ulp_splats)
	say "PAIR target ready"
	pair_serve_until_stop
	nvmet_down
	pair_log_check
	say "PAIR target end splats=$(($(ulp_splats) - s_start)) unload=$NVMET_DOWN"
	poweroff -f
}

# DEV: the namespace's block device (the multipath head).
find_ns() {
	local b
	for b in /sys/block/nvme*n1; do
		DEV=/dev/${b##*/}
		[ -b "$DEV" ] && return 0
	done
	return 1
}

# Keep-alive 5 s (the fabrics default), a reconnect attempt every second
# for up to 120 s: a target boot under TCG fits in it.
connect_opts="transport=rdma,traddr=$TADDR,trsvcid=4420,nqn=$NQN"
connect_opts="$connect_opts,keep_alive_tmo=5,reconnect_delay=1,ctrl_loss_tmo=120"
connect() {
	local n=0
	until echo "$connect_opts" > /dev/nvme-fabrics; do
		n=$((n + 1))
		[ $n -lt 10 ] || fail "connect ($1)"
		sleep 2
	done
	ulp_wait 200 find_ns || fail "no namespace block device ($1)"
}

# fio: random writes of 512 B..1 MiB, iodepth 16, two jobs on disjoint
# halves, a crc32c header in every block, verified behind the writes
# (backlog) and again at the end; pair_mib MiB per job, pair_rt s at most.
fio_args() {
	echo "--name=pair --filename=$DEV --direct=1 --ioengine=libaio" \
	     "--rw=randwrite --bssplit=512/10:4k/30:16k/20:64k/15:256k/15:1m/10" \
	     "--iodepth=16 --numjobs=2 --size=${pair_mib:-8}m" \
	     "--offset_increment=${pair_mib:-8}m --verify=crc32c --randrepeat=1" \
	     "--verify_fatal=0"
}

# why_recovery LINE: error recoveries in dmesg after line LINE, and what the
# host logged as their cause: work-request errors (by status), failed
# keep-alives, I/O timeouts, unexpected CM events (a disconnect by the
# target is logged at debug level only: the rest).
why_recovery() {
	dmesg | tail -n +$(($1 + 1)) | awk '
		/starting error recovery/ { n["error recoveries"]++ }
		/failed with status/ { sub(/.*failed with status /, ""); sub(/ \([0-9]+\)$/, ""); n[$0]++ }
		/failed nvme_keep_alive_end_io/ { n["keep-alive failed"]++ }
		/ QID [0-9]+ timeout/ { n["I/O timeout"]++ }
		/Unexpected RDMA CM event/ { n["unexpected CM event"]++ }
		END { for (k in n) printf "%s x%d; ", k, n[k] }'
}

# on_disk_now: the first bytes now on the namespace at the first read-back
# failures inside completed writes (a fio header starts with magic acca):
# zeros mean the write never reached the target; a header means the
# read-back's read got other bytes than the disk holds.
on_disk_now() {
	local o n=0
	for o in $(sed -n 's/.*read-back failures inside completed writes://p' /tmp/fwh.out); do
		o=${o#*@}	# FILE@OFFSET+LENGTH (pair_fail_hits)
		n=$((n + 1))
		[ $n -le 6 ] || break
		say "PAIR note: on the disk now at ${o%+*}: $(dd if="$DEV" bs=512 \
			skip=$((${o%+*} / 512)) count=1 iflag=direct 2> /dev/null |
			od -A n -t x1 -N 8 | tr -s ' ')"
	done
}

# For pair-lib.sh's pair_stuck / pair_fio_bounded: the controllers'
# states, and the deletion that fails what is queued.
drv_state() {
	local c
	for c in /sys/class/nvme/nvme*; do
		[ -e "$c/state" ] && echo "${c##*/} $(cat "$c/state")"
	done
}
drv_delete() { delete_ctrls; }

inject() {	# fault
	case $1 in
	loss1 | loss5 | delay | reorder | dup) pair_netem "$1" ;;
	linkflap) pair_req link-down 1 ;;
	linkdown) pair_req link-down "${pair_down:-10}" ;;
	targetkill) pair_req target-kill ;;
	ctrldelete) delete_ctrls ;;
	*) fail "unknown fault $1" ;;
	esac
}

step() {	# driver fault
	local d=$1 f=$2 name="pair-$t-$2-$1" r0 s0 ts0 l0 pid at rc left state t0 k0 rb0 w0
	t0=$(cut -d. -f1 /proc/uptime)
	k0=$(dmesg | wc -l)
	drv_load "$d"
	connect "$d"
	pair_req mark "$f-$d-begin"
	ts0=$(pair_tsplats)
	r0=$(reconnects)
	s0=$(ulp_splats)
	l0=$(ulp_mrkit_leaks)
	pair_trace_on
	rm -f /*-verify.state
	# fio's read-back accepts any block of the same layout: an earlier
	# step's identical data would hide a write that never landed.
	dd if=/dev/zero of="$DEV" bs=1M count=$((2 * ${pair_mib:-8})) \
		oflag=direct 2> /dev/null || fail "zeroing $DEV before $f ($d)"
	w0=$(written_mib)
	# shellcheck disable=SC2046
	ulp_fio "$name" $(fio_args) --do_verify=1 --verify_backlog=32 \
		--verify_state_save=1 --runtime="${pair_rt:-90}" \
		--write_lat_log=/tmp/done-$name --log_offset=1 --log_avg_msec=0 \
		> /tmp/step.out &
	pid=$!
	ulp_wait 600 wrote_some $((w0 + ${pair_mib:-8} / 2)) ||
		say "PAIR note: little progress before $f"
	at=$(($(written_mib) - w0))
	inject "$f"
	# fio ends by itself (runtime cap); I/O held across a reconnect ends
	# by ctrl_loss_tmo at the latest.  Past that, fio is stuck.
	if ! pair_wait_pid $pid $((${pair_rt:-90} + 150)); then
		pair_stuck "fio still running after $f ($d); deleting the controller"
		delete_ctrls
		pair_wait_pid $pid 60 || fail "fio stuck after $f ($d)"
	fi
	pair_netem_off
	cat /tmp/step.out
	say "PAIR note: $f ($d, $t) what started error recovery: $(why_recovery "$k0")"
	k0=$(dmesg | wc -l)
	rb0=$(cut -d. -f1 /proc/uptime)
	# After a deletion, a new controller: every write fio saw complete
	# before it must read back (fio's saved state says how far it got).
	no_ctrl && connect "$d"
	find_ns || fail "namespace gone after $f ($d)"
	state=
	ls /*-verify.state > /dev/null 2>&1 && state=--verify_state_load=1
	# shellcheck disable=SC2046
	pair_fio_bounded "$name-readback" "${pair_rb:-300}" $(fio_args) \
		--verify_only=1 $state || fail "read-back stuck after $f ($d)"
	say "PAIR note: $f ($d, $t) read-back: $(($(cut -d. -f1 /proc/uptime) - rb0)) s; error recovery in it: $(why_recovery "$k0")"
	rc=$(($(reconnects) - r0))
	pair_pools
	say "PAIR note: $f ($d, $t) after $at MiB written; pools before teardown:$POOLS"
	pair_fail_hits "$name"
	on_disk_now
	delete_ctrls
	ulp_wait 300 no_ctrl || fail "controller not gone after $f ($d)"
	rmmod nvme_rdma || fail "rmmod nvme_rdma after $f ($d)"
	left=$(mrs_left)
	pair_trace_off
	pair_req mark "$f-$d-end"
	pair_log_check
	say "PAIR fault $t $f $d reconnects=$rc $TRACED leaks=$(($(ulp_mrkit_leaks) - l0 + left)) splats=$(($(ulp_splats) - s0)) tsplats=$(($(pair_tsplats) - ts0)) verify_at_failed_writes=$FWH verify_at_eof=$FEOF verify_inside=$FINSIDE secs=$(($(cut -d. -f1 /proc/uptime) - t0))"
}

initiator() {
	local s m
	pair_net "$t" 10.98.0.2
	ulp_fio_mount
	for m in nvme-core nvme-fabrics mrkit; do
		modprobe $m || fail "modprobe $m"
	done
	s_start=$(ulp_splats)
	pair_req target-ready || fail "the target did not come up"
	say "PAIR schedule $t $pair_steps"
	for s in $(echo "$pair_steps" | tr , ' '); do
		step "${s%%:*}" "${s#*:}"
	done
	pair_req target-stop
	say "PAIR target $PAIR_ACK"
	ulp_finish pair
}

pair_role_run
