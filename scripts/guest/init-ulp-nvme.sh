#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0-only
# Guest /init of "vm-ulp.sh nvme": the kernel's nvmet-rdma target on a
# RAM-backed null_blk namespace, and the kernel's nvme-rdma host, either
# Debian's stock module or the one converted to mrkit (/ulp/nvme-rdma.ko),
# connected through /dev/nvme-fabrics over rxe or siw on a dummy netdev
# with a guest-only address.  fio (over 9p) drives /dev/nvmeXnY.
#   mrkit_mode=check  mrkit driver: a short verify run, its read-back, and
#                     the target's port removed and re-added under load
#                     (each driver of mrkit_drivers: ulp-lib.sh ulp_drivers)
#   mrkit_mode=demo   mrkit driver: 256 MiB verify run and read-back; then,
#                     for both drivers, the port fault and the controller
#                     deleted under load (fio verify running)
#   mrkit_mode=pi     (over rxe-pi) a third namespace with T10-PI: a
#                     scsi_debug disk with DIF type 1 and DIX, the port
#                     with pi_enable; for each driver of mrkit_drivers
#                     (default both), fio verify on it
#                     with the block layer generating and checking the
#                     protection information, and its read-back
#   mrkit_mode=bench  A/B: the same jobs with the stock and the mrkit driver
#                     interleaved (stock, mrkit, stock, mrkit, ...:
#                     mrkit_ab_rounds rounds of mrkit_ab_secs s per job)
# Facts go to the console as "MRKIT-VM NVME ..." lines and fio's JSON;
# scripts/mrkit_report/nvme.py turns them into the VERIFY/FAULT/AB lines.
. /base-lib.sh
. /ulp-lib.sh
. /nvme-lib.sh
NQN=nqn.2014-08.org.example:mrkit-ulp
BSSPLIT=512/10:4k/30:16k/20:64k/15:256k/15:1m/10

fabric "$t"
for m in nvme-core nvme-fabrics; do
	modprobe $m || fail "modprobe $m"
done
# Two RAM-backed namespaces: 1 (nullb0, 1 GiB) completes at once; 2
# (nullb1, 256 MiB) completes each command 2 ms late, so that a fault finds
# commands in flight at the target (their requests are then cancelled by
# the host's error recovery, registrations still live).
modprobe null_blk nr_devices=0 || fail null_blk
N=/sys/kernel/config/nullb
nullb() {	# name (= the disk's name) MiB irqmode completion_nsec
	mkdir $N/$1 && echo $2 > $N/$1/size && echo 1 > $N/$1/memory_backed &&
		echo $3 > $N/$1/irqmode && echo $4 > $N/$1/completion_nsec &&
		echo 1 > $N/$1/power || fail "null_blk $1"
}
nullb nullb0 1024 1 0
nullb nullb1 256 2 2000000
PIDEV=
if [ "$mode" = pi ]; then
	for m in sd_mod "scsi_debug dif=1 dix=1 dev_size_mb=256"; do
		# shellcheck disable=SC2086
		modprobe $m || fail "modprobe $m"
	done
	ulp_wait 100 ulp_sd_dev || fail "no scsi_debug disk"
	PIDEV=$DEV
	NVMET_PI=1
fi
nvmet_up $NQN 10.99.0.1 /dev/nullb0 /dev/nullb1 $PIDEV
ulp_fio_mount
modprobe mrkit || fail "modprobe mrkit"

# DEV: namespace 1 of the controller; SLOW: namespace 2.
find_dev() {
	local b
	for b in /sys/block/nvme*n2; do
		[ -b "/dev/${b##*/}" ] || continue
		SLOW=/dev/${b##*/}
		DEV=${SLOW%2}1
		[ -b "$DEV" ] && return 0
	done
	return 1
}

nvme_connect() {
	echo "transport=rdma,traddr=10.99.0.1,trsvcid=4420,nqn=$NQN,reconnect_delay=1,ctrl_loss_tmo=60" \
		> /dev/nvme-fabrics || fail "connect ($1)"
	ulp_wait 200 find_dev || fail "no namespace block device ($1)"
}

nvme_disconnect() {
	delete_ctrls
	ulp_wait 300 no_ctrl || fail "controller not gone"
}

# mrkit's tracepoints over a fault: descriptors retired (a flushed or
# failed REG_MR/LOCAL_INV) and replaced, failed posts, and the pools
# destroyed with the descriptors they still had out.
T=/sys/kernel/tracing
trace_on() {
	local e
	echo > $T/trace
	for e in mrkit_mr_stale mrkit_mr_replaced mrkit_pool_destroy mrkit_post_err; do
		echo 1 > $T/events/mrkit/$e/enable
	done
}
trace_off() {
	echo 0 > $T/events/mrkit/enable
	TRACED="retired=$(grep -c 'mrkit_mr_stale:' $T/trace)"
	TRACED="$TRACED replaced=$(grep -c 'mrkit_mr_replaced:' $T/trace)"
	TRACED="$TRACED post_errors=$(grep -c 'mrkit_post_err:' $T/trace)"
	TRACED="$TRACED pools_destroyed=$(grep -c 'mrkit_pool_destroy:' $T/trace)"
	TRACED="$TRACED out_at_destroy=$(sed -n 's/.*mrkit_pool_destroy:.* count=\([0-9]*\).*/\1/p' $T/trace |
		awk '{ s += $1 } END { print s + 0 }')"
}

# mrkit's counters summed over the live pools (debugfs).
pools() {
	local f
	POOLS=
	for f in in_use stale stale_replaced remote_inv local_inv bogus_inv exhausted \
		 sig_checks sig_errors; do
		POOLS="$POOLS $f=$(ulp_mrkit_stat $f)"
	done
}

# fio's verify job: random writes, block sizes 512 B..1 MiB, iodepth 32, two
# jobs on disjoint halves, crc32c in every block; $1 = MiB per job.
verify_args() {
	echo "--name=verify --filename=$DEV --direct=1 --ioengine=libaio" \
	     "--rw=randwrite --bssplit=$BSSPLIT --iodepth=32 --numjobs=2" \
	     "--size=${1}m --offset_increment=${1}m --verify=crc32c" \
	     "--randrepeat=1 --verify_fatal=0"
}

# Write, verify, then read everything back in a second pass; with pi, on
# namespace 3 (T10-PI end to end: the block layer generates the
# protection information on writes and checks it on reads, the HCA,
# rdma_rxe_pi, carries it between memory and the wire).
run_verify() {	# driver MiB-per-job [pi]
	local v=verify rb=readback fmt=
	drv_load "$1"
	nvme_connect "$1"
	if [ "${3:-}" = pi ]; then
		v=pi rb=pireadback
		ulp_wait 200 find_pi_dev || fail "no namespace with PI ($1)"
		fmt=$(cat /sys/block/${DEV#/dev/}/integrity/format)
		say "NVME note: pi ($1, $t) on $DEV, the target's disk $PIDEV: integrity $(cat /sys/block/${PIDEV#/dev/}/integrity/format)"
	fi
	# shellcheck disable=SC2046
	ulp_fio "$v-$t-$1" $(verify_args "$2") --do_verify=1
	# shellcheck disable=SC2046
	ulp_fio "$rb-$t-$1" $(verify_args "$2") --verify_only=1
	[ -z "$fmt" ] || ulp_pi_errors NVME "$1" 51200
	pools
	if [ -n "$fmt" ]; then
		say "NVME pi $t $1 integrity=$fmt pools:$POOLS"
	else
		say "NVME note: verify ($1, $t) pools:$POOLS"
	fi
	nvme_disconnect
	rmmod nvme_rdma || fail "rmmod nvme_rdma ($1)"
}

# A fault under load: fio writes with verification running behind it.
run_fault() {	# driver fault MiB-per-job
	local r0 s0 l0 l1 pid at rc left c state
	drv_load "$1"
	nvme_connect "$1"
	r0=$(reconnects)
	s0=$(ulp_splats)
	trace_on
	l0=$(ulp_mrkit_leaks)
	DEV=$SLOW
	# shellcheck disable=SC2046
	rm -f /*-verify.state
	ulp_fio "fault-$t-$2-$1" $(verify_args "$3") --do_verify=1 \
		--verify_backlog=32 --verify_state_save=1 &
	pid=$!
	ulp_wait 600 wrote_some $(($3 / 4 + 1)) || say "NVME note: little progress before the fault"
	at=$(written_mib)
	case $2 in
	portcycle)
		nvmet_port_del
		sleep 2
		nvmet_port_add
		;;
	ctrldelete)
		for c in /sys/class/nvme/nvme*; do
			echo 1 > "$c/delete_controller"
		done
		;;
	esac
	wait $pid
	rc=$(reconnects)
	if [ "$2" = ctrldelete ]; then
		# A new controller: every write fio saw complete before the
		# deletion must read back (fio saved how far it got; the
		# writes in flight at the error are not checked).
		nvme_connect "$1"
		DEV=$SLOW
	fi
	state=
	ls /*-verify.state > /dev/null 2>&1 && state=--verify_state_load=1
	# shellcheck disable=SC2046
	ulp_fio "fault-$t-$2-$1-readback" $(verify_args "$3") --verify_only=1 $state
	pools
	say "NVME note: $2 ($1, $t) injected after $at MiB written; pools before teardown:$POOLS"
	nvme_disconnect
	rmmod nvme_rdma || fail "rmmod nvme_rdma after $2 ($1)"
	left=$(mrs_left)
	trace_off
	say "NVME note: $2 ($1, $t) mrkit trace: $TRACED"
	[ "$left" = 0 ] || rdma res show mr | grep 'comm \[nvme_rdma\]' |
		head -n 3 | sed 's/^/MRKIT-VM   left: /'
	l1=$(ulp_mrkit_leaks)
	say "NVME fault $t $2 $1 reconnects=$((rc - r0)) leaks=$((l1 - l0 + left)) splats=$(($(ulp_splats) - s0))"
}

# A/B: sequential 1 MiB write and read, 4 KiB random read, iodepth 32, on
# 128 MiB of namespace 1.  Verified too: every write carries a crc32c
# header per 4 KiB, every read checks the ones it reads (written by the
# prefill or a seqwrite run, either driver).
ab_args() {
	echo "--filename=$DEV --direct=1 --ioengine=libaio --iodepth=32" \
	     "--size=128m --verify=crc32c --verify_interval=4k"
}
ab_up() {
	drv_load "$1"
	nvme_connect "$1"
}
ab_down() {
	nvme_disconnect
	rmmod nvme_rdma || fail "rmmod nvme_rdma ($1)"
}

# PIDEV's namespace (3) on the host, once there.
find_pi_dev() {
	local b
	# By its nsid: 6.12 may name the disks out of nsid order.
	for b in /sys/block/nvme*n*; do
		[ "$(cat "$b/nsid" 2>/dev/null)" = 3 ] || continue
		[ -b "/dev/${b##*/}" ] || continue
		DEV=/dev/${b##*/}
		return 0
	done
	return 1
}

s_start=$(ulp_splats)
if [ "$mode" = pi ]; then
	say "NVME pi_drivers $(ulp_drivers stock,mrkit | tr ' ' ,)"
	for d in $(ulp_drivers stock,mrkit); do
		run_verify "$d" "${nvme_pi_mib:-8}" pi
	done
else
	ulp_run_mode 8 8 128 32 portcycle ctrldelete
fi

rmmod mrkit || fail "rmmod mrkit"
sp=$(($(ulp_splats) - s_start))
[ $sp = 0 ] || ulp_show_splats
say "NVME end splats=$sp"
[ $sp = 0 ] && say "PASS nvme $mode over $t (verdict on the numbers: mrkit_report.nvme)"
poweroff -f
