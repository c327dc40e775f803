# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=dash
# Sourced by the guest /init of the two-guest fault scenarios
# (scripts/host/vm-pair.sh), after /base-lib.sh and /ulp-lib.sh (busybox
# sh).  The pair: a target (10.98.0.1) and an initiator (10.98.0.2), each
# with one virtio-net NIC (eth0) on a wire that only the other guest is on.
#   pair_net T ADDR     eth0 up with ADDR/24, the rxe or siw device T on it
#                       (fabric), sch_netem, and the host's control
#                       share (read-only, written by vm-pair.sh) on /ctl
#   pair_req ACTION ARG...
#                       ask the host for ACTION: prints "MRKIT-PAIR REQ SEQ
#                       ACTION ARG..." and waits (bounded) for the host's
#                       answer /ctl/ack-SEQ; PAIR_ACK is its text ("ok
#                       tsplats=N ..." or "fail ...").  Actions: link-down
#                       SECS (both NICs off, from outside), target-kill
#                       (power cut, boot again, wait until it serves),
#                       target-ready, mark NAME (nothing; the answer
#                       carries the target's splat count), target-stop
#   pair_tsplats        the target's splats so far, from the last answer
#   pair_tknown         the known warnings in this guest's kernel log (the
#                       #PAIR-HOST line's tknown, see vm-pair.sh)
#   pair_netem NAME     netem profile NAME on eth0's egress (iproute2's tc,
#                       not busybox's): loss1 loss5 delay reorder dup
#   pair_netem_off      remove it
#   pair_wait_pid P S   wait at most S seconds for process P to end
#                       (0.1 s steps)
#   pair_trace_on       mrkit's descriptor trace for one step (stale,
#                       replaced, every REG_MR, pool teardown, failed posts)
#   pair_trace_off      TRACED="stale=N replaced=N reused=N ...": reused
#                       counts REG_MRs of an MR (restrack id) after it was
#                       marked stale (must be 0); overrun: events the ring
#                       lost (reused is then not proven)
#   pair_pools          POOLS: mrkit's debugfs counters over the live pools
#   pair_log_check      fail the run if the kernel log has wrapped: the
#                       reconnect, splat and leak counts read dmesg
#   pair_serve_until_stop
#                       (target) wait for the host's /ctl/stop, bounded

PAIR_SEQ=0
PAIR_ACK=
T=/sys/kernel/tracing

pair_net() {
	local m
	for m in virtio_pci virtio_net 9pnet_virtio 9p sch_netem; do
		modprobe $m || fail "modprobe $m"
	done
	fabric "$1" eth0 "$2/24"
	mkdir -p /ctl
	mount -t 9p -o trans=virtio,version=9p2000.L,ro ctl /ctl ||
		fail "9p mount of the control share"
}

# pair_tknown: the target's known warnings in the kernel log (vm-pair.sh's
# tknown, from this /init's #PAIR-HOST line; 0 without one).
pair_tknown() {
	local k
	k=$(sed -n 's/^#PAIR-HOST //p' /init | tr ' ' '\n' | sed -n 's/^tknown=//p')
	[ -n "$k" ] || { echo 0; return; }
	dmesg | grep -E 'WARNING:' | grep -cE "$k"
}

pair_log_check() {
	ulp_log_intact ||
		fail "the kernel log wrapped (log_buf_len): its counts are not to be trusted"
}

pair_req() {
	PAIR_SEQ=$((PAIR_SEQ + 1))
	echo "MRKIT-PAIR REQ $PAIR_SEQ $*"
	# The host answers within the request's own bound (a target boot
	# under TCG takes the longest); 600 s is beyond every one of them.
	if ! ulp_wait 6000 test -e /ctl/ack-$PAIR_SEQ; then
		PAIR_ACK="fail no answer to request $PAIR_SEQ ($*)"
		say "PAIR note: $PAIR_ACK"
		return 1
	fi
	PAIR_ACK=$(cat /ctl/ack-$PAIR_SEQ)
	case $PAIR_ACK in
	ok*) return 0 ;;
	esac
	say "PAIR note: request $PAIR_SEQ ($*): $PAIR_ACK"
	return 1
}

pair_tsplats() {
	echo "$PAIR_ACK" | sed -n 's/.*tsplats=\([0-9]*\).*/\1/p' | grep . || echo 0
}

pair_netem() {
	local a
	case $1 in
	loss1) a="loss 1%" ;;
	loss5) a="loss 5%" ;;
	delay) a="delay 10ms 5ms" ;;
	reorder) a="delay 10ms reorder 25% 50%" ;;
	dup) a="duplicate 5%" ;;
	*) fail "no netem profile $1" ;;
	esac
	# shellcheck disable=SC2086
	/usr/bin/tc qdisc add dev eth0 root netem $a || fail "tc netem $a"
}

pair_netem_off() {
	/usr/bin/tc qdisc del dev eth0 root 2> /dev/null || true
}

pair_ended() { ! kill -0 "$1" 2> /dev/null; }
pair_wait_pid() { ulp_wait $(($2 * 10)) pair_ended "$1"; }

pair_trace_on() {
	local e
	echo 0 > $T/tracing_on
	echo 16384 > $T/buffer_size_kb
	echo > $T/trace
	for e in mr_stale mr_replaced reg pool_destroy post_err; do
		echo 1 > $T/events/mrkit/mrkit_$e/enable
	done
	echo 1 > $T/tracing_on
}

pair_trace_off() {
	echo 0 > $T/events/mrkit/enable
	TRACED=$(awk '
		{ id = "" }
		match($0, /mr\.id=[-0-9]+/) { id = substr($0, RSTART + 6, RLENGTH - 6) }
		/ mrkit_mr_stale:/ { n["stale"]++; dead[id] = 1 }
		/ mrkit_mr_replaced:/ { n["replaced"]++ }
		/ mrkit_reg:/ { n["regs"]++; if (id in dead) n["reused"]++ }
		/ mrkit_post_err:/ { n["post_errors"]++ }
		/ mrkit_pool_destroy:/ {
			n["pools_destroyed"]++
			if (match($0, /count=[0-9]+/))
				n["out_at_destroy"] += substr($0, RSTART + 6, RLENGTH - 6)
		}
		END {
			split("stale replaced reused regs post_errors pools_destroyed out_at_destroy", k, " ")
			for (i = 1; i <= 7; i++)
				printf "%s=%d ", k[i], n[k[i]]
		}' $T/trace)
	TRACED="${TRACED}overrun=$(cat $T/per_cpu/cpu*/stats |
		awk '/^overrun:/ { s += $2 } END { print s + 0 }')"
}

pair_pools() {
	local f
	POOLS=
	for f in in_use stale stale_replaced remote_inv local_inv exhausted; do
		POOLS="$POOLS $f=$(ulp_mrkit_stat $f)"
	done
}

pair_serve_until_stop() {
	local n=3600
	while [ ! -e /ctl/stop ]; do
		n=$((n - 1))
		[ $n -gt 0 ] || fail "no stop from the host in an hour"
		sleep 1
	done
}

# The shared step of the ULPs whose /init defines these hooks (iSER, NFS,
# SRP; nvme-rdma has its own step in init-pair-nvme.sh):
#   drv_up D           load driver D (stock|mrkit), connect / log in /
#                      mount; set PAIR_FIO (fio's file arguments and size);
#                      what fio is to write holds zeros (fio's read-back
#                      accepts any block of the same job layout, so a
#                      previous step's data would hide a lost write)
#   drv_ready D        after a fault: connected again (a new session or
#                      mount if the fault removed it), PAIR_FIO current
#   drv_delete         the deletion fault ($pair_delete): the session or
#                      mount removed under fio
#   drv_linkdel        (a ULP with the linkdel fault) the initiator's RDMA
#                      link deleted under fio, its QPs forced to error and
#                      its device gone, then added again
#   drv_down D         disconnect, unload the driver (bounded)
#   drv_reconnects     reconnects so far (a running count)
#   drv_written_mib    MiB written through it so far
#   drv_mrs            the driver's MRs on the RDMA device now
#   drv_state          what the ULP says about its connection (diagnosis)
# and the variables pair_delete (the deletion fault's name), PAIR_TMO (the
# ULP's own timeout, s: linkdown lasts pair_down s longer), PAIR_BSSPLIT
# (fio's block sizes), PAIR_FIO_MORE (more fio arguments for both runs),
# PAIR_FIO_SEQ (a job that the write run ends with: pair_disk_fio's)
# and PAIR_MRS (1: a step of mrkit's driver also prints "MRKIT-VM PAIR mrs
# T FAULT mrkit per_request_max=N multi_mr_requests=N maps=N", ulp-lib.sh's
# ulp_mrs_off over the step's fio runs, from after drv_up to the logout).
#   pair_step D FAULT  one step: drv_up, fio verify=crc32c (verified behind
#                      the writes, state saved) with FAULT injected once a
#                      quarter is written, fio's end (bounded), drv_ready,
#                      a read-back of everything fio reported written
#                      (bounded), pool counters, drv_down, and the line
#                      "MRKIT-VM PAIR fault T FAULT D reconnects=N
#                      stale=N ... leaks=N splats=N known=N tsplats=N
#                      verify_at_failed_writes=N stuck=0|1 target_resets=N
#                      secs=N" (mrkit_report.pair; target_resets: the
#                      target power-cycled because it took no new session,
#                      PAIR_RESETS counted by the hooks);
#                      returns 1 when fio could not be ended (stuck=1 in
#                      the line: the rest of the schedule is not run)
#   pair_schedule      the initiator's loop over pair_steps, then the
#                      target's stop and ulp_finish
#   pair_role_run      the /init's target or initiator, as pair_role says
# For a ULP whose initiator gives a SCSI disk (iSER, SRP), once DEV names
# it:
#   pair_disk_up D     drv_up's steps for such a disk: driver D loaded, the
#                      /init's login (which finds DEV), PAIR_FIO, zeros
#   pair_disk_fio      PAIR_FIO for the disk; with PAIR_SEQ_BS, also
#                      PAIR_FIO_SEQ: a job that writes (and verifies) one
#                      more region behind the random writes' in blocks of
#                      PAIR_SEQ_BS, in sequence, so that requests as large
#                      as fio's blocks reach the driver (fio cuts a random
#                      write short at the first block an earlier write of
#                      its run took: in a region of a few MiB, hardly a
#                      large random write keeps its size)
#   pair_disk_zero     zeros where fio is to write, and the disk's written
#                      count from then on
#   pair_disk_written_mib
#                      MiB written to the disk since pair_disk_zero
PAIR_TMO=10
PAIR_RESETS=0
PAIR_BSSPLIT=4k/30:16k/20:64k/20:256k/20:1m/10

pair_fio_args() {
	echo "$PAIR_FIO --ioengine=libaio --direct=1 --rw=randwrite" \
	     "--bssplit=$PAIR_BSSPLIT --iodepth=16 --numjobs=2 ${PAIR_FIO_MORE:-}" \
	     "--verify=crc32c --randrepeat=1 --verify_fatal=0"
}

pair_wrote() { [ "$(drv_written_mib)" -ge "$1" ]; }

# pair_fail_hits RUN: fio run RUN's read-back verify failures, sorted
# (/fail-hits.awk: where each fell against the writes fio saw complete,
# its output kept in /tmp/fwh.out); prints the notes, and sets FWH (the
# failures outside every completed write), FEOF (those at reads that
# returned 0 bytes) and FINSIDE (those inside completed writes).
pair_fail_hits() {
	awk -F', ' -f /fail-hits.awk /tmp/done-$1_clat.*.log "/tmp/fio-$1.err" \
		"/tmp/fio-$1-readback.err" > /tmp/fwh.out 2> /dev/null
	sed '/^eof /d; $d' /tmp/fwh.out
	FWH=$(tail -n 1 /tmp/fwh.out)
	FEOF=$(sed -n 's/^eof //p' /tmp/fwh.out)
	FINSIDE=$(sed -n 's/.*read-back failures inside completed writes://p' /tmp/fwh.out | wc -w)
}

# pair_stuck WHAT: the state of an I/O that does not end, on the console.
pair_stuck() {
	say "PAIR stuck: $1"
	drv_state | sed 's/^/MRKIT-VM PAIR stuck: /'
	pair_pools
	say "PAIR stuck: pools:$POOLS"
	echo w > /proc/sysrq-trigger
	dmesg | tail -n 120 | sed 's/^/MRKIT-VM PAIR stuck: /'
}

# pair_fio_bounded NAME SECS ARG...: ulp_fio in the background, its
# output on the console once it ends; at most SECS s, then the deletion
# fault (which fails what is queued) and 60 s more.  Returns 1 if fio
# still did not end (left behind, uninterruptible).
pair_fio_bounded() {
	local n=$1 s=$2 pid
	shift 2
	ulp_fio "$n" "$@" > /tmp/$n.out &
	pid=$!
	if ! pair_wait_pid $pid "$s"; then
		pair_stuck "fio $n still running after $s s"
		drv_delete
		if ! pair_wait_pid $pid 60; then
			say "PAIR note: fio $n did not end after $pair_delete either"
			return 1
		fi
	fi
	cat /tmp/$n.out
}

pair_inject() {	# fault
	case $1 in
	loss1 | loss5 | delay | reorder | dup) pair_netem "$1" ;;
	linkflap) pair_req link-down 1 ;;
	linkdown) pair_req link-down $((PAIR_TMO + ${pair_down:-10})) ;;
	targetkill) pair_req target-kill ;;
	"$pair_delete" | ctrldelete) drv_delete ;;
	linkdel) drv_linkdel ;;
	*) fail "unknown fault $1" ;;
	esac
}

pair_step() {	# driver fault
	local d=$1 f=$2 name="pair-$t-$2-$1" t0 k0 ts0 r0 s0 n0 l0 at rc state
	local stuck=0 mib=${pair_mib:-8} x0 mrs
	t0=$(cut -d. -f1 /proc/uptime)
	k0=$(dmesg | wc -l)
	x0=$PAIR_RESETS
	# Leaks and splats from before the driver's load: a descriptor a
	# live pool holds at any time is not a leak until the pool's end.
	s0=$(ulp_splats)
	n0=$(ulp_known)
	l0=$(ulp_mrkit_leaks)
	drv_up "$d" || fail "$d: no session before $f"
	mrs=
	[ "${PAIR_MRS:-0}" = 1 ] && [ "$d" = mrkit ] && mrs=1 && ulp_mrs_on
	pair_req mark "$f-$d-begin"
	ts0=$(pair_tsplats)
	r0=$(drv_reconnects)
	pair_trace_on
	rm -f /*-verify.state
	# PAIR_FIO_SEQ last: fio seeds a job's random numbers by its number,
	# and the read-back (without it) must replay the same writes.
	# shellcheck disable=SC2046,SC2086
	ulp_fio "$name" $(pair_fio_args) --do_verify=1 --verify_backlog=32 \
		--verify_state_save=1 --runtime="${pair_rt:-90}" \
		--write_lat_log=/tmp/done-$name --log_offset=1 --log_avg_msec=0 \
		${PAIR_FIO_SEQ:-} > /tmp/$name.out &
	echo $! > /tmp/step.pid
	ulp_wait 600 pair_wrote $((mib / 2)) ||
		say "PAIR note: little progress before $f"
	at=$(drv_written_mib)
	pair_inject "$f" || say "PAIR note: $f ($d) not injected: $PAIR_ACK"
	if ! pair_wait_pid "$(cat /tmp/step.pid)" $((${pair_rt:-90} + 150)); then
		pair_stuck "fio still running after $f ($d)"
		drv_delete
		pair_wait_pid "$(cat /tmp/step.pid)" 60 || stuck=1
		[ $stuck = 0 ] || pair_stuck "fio still running 60 s after the deletion fault ($d)"
	fi
	pair_netem_off
	[ $stuck = 1 ] || cat /tmp/$name.out
	rc=$(($(drv_reconnects) - r0))
	# More than one reconnect: the kernel's words on them, from the step.
	[ "$rc" -le 1 ] || dmesg | tail -n +$((k0 + 1)) |
		grep -iE 'reconnect|DREQ|disconnect|reset|failed' | tail -n 16 |
		sed 's/^/MRKIT-VM PAIR note: reconnects: /'
	if [ $stuck = 0 ]; then
		drv_ready "$d" || fail "$d: no session after $f"
		state=
		ls /*-verify.state > /dev/null 2>&1 && state=--verify_state_load=1
		# shellcheck disable=SC2046
		pair_fio_bounded "$name-readback" "${pair_rb:-300}" $(pair_fio_args) \
			--verify_only=1 $state || stuck=1
		# A read-back that failed: the kernel's words on it.
		grep -qE 'MRKIT-FIO-BEGIN .* (rc|io_errors)=[1-9]' "/tmp/$name-readback.out" 2> /dev/null &&
			dmesg | grep -iE 'error|fail|reconnect|srp|nvme|iscsi|iser|rpcrdma' | tail -n 20 |
			sed 's/^/MRKIT-VM PAIR note: read-back: /' || true
	fi
	pair_pools
	say "PAIR note: $f ($d, $t) after $at MiB written; pools before teardown:$POOLS"
	pair_fail_hits "$name"
	[ $stuck = 1 ] || drv_down "$d" || say "PAIR note: teardown after $f ($d) failed"
	[ -z "$mrs" ] || say "PAIR mrs $t $f $d $(ulp_mrs_off)"
	pair_trace_off
	pair_req mark "$f-$d-end"
	pair_log_check
	say "PAIR fault $t $f $d reconnects=$rc $TRACED leaks=$(($(ulp_mrkit_leaks) - l0 + $(drv_mrs))) splats=$(($(ulp_splats) - s0)) known=$(($(ulp_known) - n0)) tsplats=$(($(pair_tsplats) - ts0)) verify_at_failed_writes=$FWH verify_at_eof=$FEOF verify_inside=$FINSIDE stuck=$stuck target_resets=$((PAIR_RESETS - x0)) secs=$(($(cut -d. -f1 /proc/uptime) - t0))"
	[ $stuck = 0 ]
}

# pair_target_up ADDR MOD...: the target's start: the wire (pair_net),
# warnings and worse on the console (the host counts splats there), the
# stacks of hung tasks too (pair_hung_watch), the modules MOD, and the
# host's disk /dev/vda.
pair_target_up() {
	local m a=$1
	shift
	pair_net "$t" "$a"
	echo 5 > /proc/sys/kernel/printk
	pair_hung_watch
	for m in virtio_blk "$@"; do
		modprobe "$m" || fail "modprobe $m"
	done
	ulp_wait 100 test -b /dev/vda || fail "no /dev/vda"
}

# pair_hung_watch: in the background, every 10 s for at most 3 hours
# (longer than any schedule), the lines that follow each new "blocked for
# more than" report in the kernel log, up to the end of its stack, on the
# console as "MRKIT-VM PAIR hung: ...": the report's first line is an
# error, but the stack is printed at the info level, below the console's.
# The report's first line is not repeated (the host counts it once, as a
# splat).
pair_hung_watch() {
	(
		n=0 i=0
		while [ "$i" -lt 1080 ] && sleep 10; do
			i=$((i + 1))
			m=$(dmesg | grep -c 'blocked for more than')
			[ "$m" -gt "$n" ] || continue
			dmesg | awk -v n="$n" '
				/blocked for more than/ { r++; if (r > n) p = 1; next }
				p { print }
				p && /<\/TASK>/ { p = 0 }' |
				sed 's/^/MRKIT-VM PAIR hung: /'
			n=$m
		done
	) &
}

pair_disk_up() {
	drv_load "$1"
	login || return 1
	pair_disk_fio
	# Zeros where fio writes (see drv_up above).
	pair_disk_zero
}

pair_disk_fio() {
	local mib=${pair_mib:-8}
	PAIR_FIO="--name=pair --filename=$DEV --size=${mib}m"
	PAIR_FIO="$PAIR_FIO --offset_increment=${mib}m"
	[ -n "${PAIR_SEQ_BS:-}" ] || return 0
	PAIR_FIO_SEQ="--name=pairseq --filename=$DEV --offset=$((2 * mib))m"
	PAIR_FIO_SEQ="$PAIR_FIO_SEQ --size=${mib}m --rw=write --bs=$PAIR_SEQ_BS"
	PAIR_FIO_SEQ="$PAIR_FIO_SEQ --ioengine=libaio --direct=1 --iodepth=2"
	PAIR_FIO_SEQ="$PAIR_FIO_SEQ --verify=crc32c --verify_fatal=0 ${PAIR_FIO_MORE:-}"
}

# Sectors written to the disk (0 while it is gone).
pair_disk_sectors() {
	[ -e "/sys/block/${DEV#/dev/}/stat" ] || { echo 0; return; }
	awk '{ print $7 }' "/sys/block/${DEV#/dev/}/stat"
}

pair_disk_zero() {
	local n=2
	[ -z "${PAIR_SEQ_BS:-}" ] || n=3
	dd if=/dev/zero of="$DEV" bs=1M count=$((n * ${pair_mib:-8})) \
		conv=fsync 2> /dev/null
	PAIR_W0=$(pair_disk_sectors)
}

pair_disk_written_mib() {
	local w
	w=$(($(pair_disk_sectors) - ${PAIR_W0:-0}))
	[ $w -gt 0 ] || w=0
	echo $((w / 2048))
}

pair_role_run() {
	case ${pair_role:-} in
	target) target ;;
	initiator) initiator ;;
	*) fail "pair_role=${pair_role:-} (target or initiator)" ;;
	esac
}

pair_schedule() {
	local s stop=
	s_start=$(ulp_splats)
	say "PAIR schedule $t $pair_steps"
	for s in $(echo "$pair_steps" | tr , ' '); do
		pair_step "${s%%:*}" "${s#*:}" && continue
		stop=$s
		break
	done
	pair_req target-stop
	say "PAIR target $PAIR_ACK"
	[ -z "$stop" ] || fail "the schedule stopped at $stop: fio could not be ended"
	ulp_finish pair
}
