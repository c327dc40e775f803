# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=dash
# Sourced by the guest /init of the two-guest fault scenarios
# (scripts/vm/pair.sh), after /init-lib.sh and /init-ulp-lib.sh (busybox
# sh).  The pair: a target (10.98.0.1) and an initiator (10.98.0.2), each
# with one virtio-net NIC (eth0) on a wire that only the other guest is on.
# Helpers:
#   pair_net T ADDR     eth0 up with ADDR/24, the rxe or siw device T on it
#                       (ulp_fabric), sch_netem, and the host's control
#                       share (read-only, written by pair.sh) on /ctl
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
	ulp_fabric "$1" eth0 "$2/24"
	mkdir -p /ctl
	mount -t 9p -o trans=virtio,version=9p2000.L,ro ctl /ctl ||
		fail "9p mount of the control share"
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
