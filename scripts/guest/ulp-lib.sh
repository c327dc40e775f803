# SPDX-License-Identifier: GPL-2.0-only
# Sourced by the guest /init of the ULP scenarios (scripts/host/vm-ulp.sh,
# vm-pair.sh), after /base-lib.sh (busybox sh):
#   ulp_fio_mount       Debian's fio from the host, read-only over 9p
#   ulp_fio_copy        fio and its libraries copied from the share into
#                       the guest's memory (FIO_DIR), once: under TCG,
#                       loading them over 9p dominates a short fio run
#   ulp_fio NAME ARG... run fio (JSON output); prints it between
#                       MRKIT-FIO-BEGIN/END lines for mrkit_report.fio; sets
#                       FIO_RC, FIO_VERR (verify failures reported) and
#                       FIO_IOERR (I/O errors reported) from its stderr
#   ulp_wait N CMD...   run CMD every 0.1 s until it succeeds, at most N
#                       times; returns CMD's last status
#   ulp_zero CMD...     CMD prints 0 (for ulp_wait, which runs it each try)
#   ulp_sd_dev          DEV: the SCSI disk (iSER, SRP), once there
#   ulp_no_sd           no SCSI disk is left
#   ulp_splats          kernel splats in dmesg so far, less ulp_known
#   ulp_known           those of them that ULP_KNOWN names: warnings of a
#                       known cause outside mrkit and the ULP's
#                       registration code, which a ULP's guest library
#                       names (an extended regular expression matching
#                       each one's message line); counted apart and shown,
#                       never hidden
#   ulp_log_intact      true while dmesg still starts at the boot banner
#                       (counts taken from dmesg hold only while it does)
#   ulp_mrkit_leaks     descriptors mrkit reported still in use when a
#                       pool was destroyed, plus in_use and stale of the
#                       pools alive now
#   ulp_mrkit_stat F    the sum of counter F over the live mrkit pools
#   ulp_mrs_on, ulp_mrs_off
#                       how many descriptors requests took: a histogram of
#                       mrkit's map event by segment count (descriptors)
#                       from on to off; off prints "per_request_max=N
#                       multi_mr_requests=N maps=N" (the most one map took,
#                       the maps that took several, all maps) and removes it
#   ulp_pi_try K DD-ARG...  (rxe-pi) one dd of 4 KiB with rdma_rxe_pi's
#                       corrupt set to K (1 data, 2 guard, 3 ref tag):
#                       dd's status; PI_INJ counts it if the provider's
#                       corrupted counter moved
#   ulp_pi_errors TAG DRIVER BLOCK  (rxe-pi) the corruption runs from
#                       4 KiB block BLOCK of DEV on; says the TAG pierr
#                       (and, with mrkit, pidecode) line
#   ulp_ab_rounds S N   bench mode's schedule: run_ab stock 0 (data), then
#                       N rounds of run_ab stock|mrkit ROUND S, interleaved
#   ulp_ab_alternate S N DRIVER...  N rounds of the drivers, alternating order
#   ulp_ab_jobs D R S A...  one driver's A/B fio jobs (round 0: the data)
#   run_ab D R S        one driver's A/B round (ab_up, the jobs, ab_down)
#   ulp_run_mode V F DV DF FAULT...  the schedule of mrkit_mode
#   ulp_drivers DEFAULT the drivers of mrkit_mode=check, in order
#   ulp_unload_mrkit    rmmod mrkit, retried for up to 10 s
#   ulp_finish NAME     unload mrkit, report splats, PASS, power off
# Every function keeps its variables local: callers loop over their own.

t=${mrkit_transport:-rxe}
mode=${mrkit_mode:-check}

# Console: only crit and above, so that fio's JSON stays in one piece.
echo 3 > /proc/sys/kernel/printk
# The kernel the guest booted: the reports' kernel= field
# (scripts/mrkit_report/fio.py kernel_field).
say "kernel $(uname -r)"

ulp_fio_mount() {
	local m
	for m in virtio_pci 9pnet_virtio 9p; do
		modprobe $m || fail "modprobe $m"
	done
	mount -t 9p -o trans=virtio,version=9p2000.L,ro host /host ||
		fail "9p mount of fio"
	[ -x /host/root/usr/bin/fio ] || fail "no fio on the 9p share"
}

ulp_fio_copy() {
	mkdir -p /fio && cp -r /host/lib /host/root /fio/ || fail "copying fio"
	FIO_DIR=/fio
}

ulp_fio() {
	local n=$1 d=${FIO_DIR:-/host}
	shift
	$d/lib/ld-linux-x86-64.so.2 --library-path $d/lib $d/root/usr/bin/fio \
		--output-format=json --output=/tmp/fio-$n.json "$@" \
		2>/tmp/fio-$n.err >/dev/null
	FIO_RC=$?
	FIO_VERR=$(grep -cE 'verify failed|verify: bad|bad magic|bad header' /tmp/fio-$n.err)
	FIO_IOERR=$(grep -c 'io_u error' /tmp/fio-$n.err)
	echo "MRKIT-FIO-BEGIN $n rc=$FIO_RC verify_errors=$FIO_VERR io_errors=$FIO_IOERR"
	sed -n '/^{/,$p' /tmp/fio-$n.json
	echo "MRKIT-FIO-END $n"
	{ grep -E -A2 'verify failed|verify: bad|bad magic|bad header' /tmp/fio-$n.err |
		head -n 6; grep 'io_u error' /tmp/fio-$n.err | head -n 2; } |
		sed 's/^/MRKIT-VM   fio: /'

	return 0
}

ulp_wait() {
	local w=$1
	shift
	while ! "$@"; do
		w=$((w - 1))
		[ $w -gt 0 ] || return 1
		sleep 0.1
	done
}

ulp_zero() { [ "$("$@")" = 0 ]; }

ulp_sd_dev() {
	local b
	for b in /sys/block/sd*; do
		[ -e "$b" ] || continue
		DEV=/dev/${b##*/}
		[ -b "$DEV" ] && return 0
	done
	return 1
}

ulp_no_sd() { ! ls /sys/block/sd* > /dev/null 2>&1; }

ulp_known() {
	if [ -n "${ULP_KNOWN:-}" ]; then
		dmesg | grep -cE "$ULP_KNOWN"
	else
		echo 0
	fi
}

ulp_splats() {
	echo $(($(dmesg | grep -cE 'BUG:|WARNING:|Oops|general protection|UBSAN|KASAN|list_(add|del) corruption|refcount_t:') - $(ulp_known)))
}

ulp_log_intact() { dmesg | head -n 1 | grep -q 'Linux version'; }

ULP_MAP_EV=/sys/kernel/tracing/events/mrkit/mrkit_map
ulp_mrs_on() {
	echo 'hist:keys=segs' > $ULP_MAP_EV/trigger || fail "mrkit_map histogram"
}

ulp_mrs_off() {
	awk '$2 == "segs:" { s = $3 + 0; n = $6 + 0; maps += n;
		if (s > max) max = s; if (s > 1) multi += n }
	     END { printf "per_request_max=%d multi_mr_requests=%d maps=%d\n",
		   max, multi, maps }' $ULP_MAP_EV/hist
	echo '!hist:keys=segs' > $ULP_MAP_EV/trigger
}

ulp_mrkit_stat() {
	cat /sys/kernel/debug/mrkit/*/stats 2>/dev/null |
		awk -v f="$1:" '$1 == f { s += $2 } END { print s + 0 }'
}

# ulp_pi_decoded KIND BLOCK: with mrkit's driver, a read that rdma_rxe_pi
# corrupted (KIND as ulp_pi_try's, BLOCK the 4 KiB block of $DEV the read
# began at) must also be decoded by mrkit: every mrkit_sig_err trace event
# since the trace was cleared names that block's first logical block and
# the kind - a flipped data byte or guard is a bad guard, a flipped ref
# tag a bad ref tag - and there is at least one.  The caller enables the
# event and clears the trace before the read.
ulp_pi_decoded() {
	local tr=/sys/kernel/tracing/trace ty=guard sector n ok
	[ "$1" = 3 ] && ty=reftag
	sector=$(($2 * 4096 / $(cat /sys/block/${DEV#/dev/}/queue/logical_block_size)))
	n=$(grep -c ' mrkit_sig_err: ' $tr)
	ok=$(grep -c " mrkit_sig_err: .* bad $ty at sector $sector " $tr)
	[ "$n" -gt 0 ] && [ "$n" = "$ok" ] && return 0
	say "ULP note: pi decode: kind $1 at block $2: $ok of $n events name $ty at sector $sector"
	grep ' mrkit_sig_err: ' $tr | head -n 3
	return 1
}

ulp_pi_try() {
	local p=/sys/module/rdma_rxe_pi/parameters c0 rc=0 k=$1
	shift
	c0=$(cat $p/corrupted)
	echo "$k" > $p/corrupt
	dd "$@" bs=4096 count=1 2> /dev/null || rc=1
	echo 0 > $p/corrupt
	[ "$(cat $p/corrupted)" != "$c0" ] && PI_INJ=$((PI_INJ + 1))
	return $rc
}

# ulp_pi_errors TAG DRIVER BLOCK: corruption on the wire is caught, never
# delivered.  rdma_rxe_pi flips a byte of data, guard or ref tag of every
# block it sends while its corrupt parameter is set (a write: the
# initiator's MR, read by the target; a read: the target's, written to
# the initiator's); one 4 KiB direct write, and one read of a block
# written intact, per kind and round, must fail.  An injection counts only
# if the provider's corrupted counter moved (ulp_pi_try); a read that
# succeeds with other data than was written is delivered corruption.
# With mrkit's driver every corrupted read must also be decoded
# (ulp_pi_decoded).  The blocks start at BLOCK of $DEV (beyond the verify
# region); TAG (ISER, NVME) starts the lines said.
ulp_pi_errors() {
	local tag=$1 drv=$2 b0=$3 r k b tr=/sys/kernel/tracing
	PI_INJ=0
	local det=0 bad=0 tried=0 rd=0 dec=0
	dd if=/dev/urandom of=/tmp/pi-blk bs=4096 count=1 2> /dev/null
	[ "$drv" = mrkit ] && echo 1 > $tr/events/mrkit/mrkit_sig_err/enable
	for r in 1 2; do
		for k in 1 2 3; do
			b=$((b0 + r * 8 + k * 2))
			tried=$((tried + 2))
			ulp_pi_try $k if=/tmp/pi-blk of="$DEV" seek=$b oflag=direct ||
				det=$((det + 1))
			dd if=/tmp/pi-blk of="$DEV" bs=4096 count=1 seek=$b oflag=direct \
				2> /dev/null || say "$tag note: pi ($drv): an intact write failed"
			echo > $tr/trace
			if ulp_pi_try $k if="$DEV" of=/tmp/pi-rd skip=$b iflag=direct; then
				cmp -s /tmp/pi-blk /tmp/pi-rd || bad=$((bad + 1))
			else
				det=$((det + 1))
			fi
			rd=$((rd + 1))
			[ "$drv" = mrkit ] && ulp_pi_decoded $k $b && dec=$((dec + 1))
		done
	done
	say "$tag pierr $t $drv tried=$tried injected=$PI_INJ detected=$det delivered_corrupt=$bad"
	if [ "$drv" = mrkit ]; then
		echo 0 > $tr/events/mrkit/mrkit_sig_err/enable
		say "$tag pidecode $t $drv reads=$rd decoded=$dec"
	fi
}

ulp_mrkit_leaks() {
	local d
	d=$(dmesg | sed -n 's/.*destroyed with \([0-9]*\) descriptor.*/\1/p' |
		awk '{ s += $1 } END { print s + 0 }')
	echo $((d + $(ulp_mrkit_stat in_use) + $(ulp_mrkit_stat stale)))
}

# ulp_ab_alternate SECS ROUNDS DRIVER...: ROUNDS rounds (numbered from 1)
# of the drivers back to back, in the given order on odd rounds and
# backwards on even ones, so that neighbours stay neighbours and none
# always runs first; the reports take each ratio round by round.  The
# caller's run_ab DRIVER ROUND SECS runs one driver's jobs.
ulp_ab_alternate() {
	local secs=$1 n=$2 r=0 d order
	shift 2
	while [ $r -lt "$n" ]; do
		r=$((r + 1))
		order=$*
		if [ $((r % 2)) = 0 ]; then
			order=
			for d in "$@"; do
				order="$d $order"
			done
		fi
		for d in $order; do
			run_ab "$d" $r "$secs"
		done
	done
}

# ulp_ab_rounds SECS ROUNDS: the A/B schedule of "bench" mode: round 0
# (stock) prepares the data, then ulp_ab_alternate's rounds of stock and
# mrkit.
ulp_ab_rounds() {
	run_ab stock 0
	ulp_ab_alternate "$1" "$2" stock mrkit
}

# ulp_ab_jobs DRIVER ROUND SECS FIO-ARGS...: one driver's A/B jobs; round
# 0 writes the data once (1 MiB blocks), later rounds run sequential 1 MiB
# write and read and 4 KiB random read for SECS each.  FIO-ARGS name the
# target and the verification (e.g. --verify=crc32c --verify_interval=4k).
ulp_ab_jobs() {
	local d=$1 r=$2 s=$3
	shift 3
	if [ "$r" = 0 ]; then
		ulp_fio "ab-$t-prefill" --name=prefill "$@" --rw=write --bs=1m \
			--do_verify=0
		return
	fi
	ulp_fio "ab-$t-seqwrite-$d-$r" --name=seqwrite "$@" --rw=write \
		--bs=1m --do_verify=0 --time_based --runtime="$s"
	ulp_fio "ab-$t-seqread-$d-$r" --name=seqread "$@" --rw=read --bs=1m \
		--time_based --runtime="$s"
	ulp_fio "ab-$t-randread4k-$d-$r" --name=randread4k "$@" \
		--rw=randread --bs=4k --time_based --runtime="$s"
}

# run_ab DRIVER ROUND SECS: one driver's A/B round, the jobs of
# ulp_ab_jobs on the caller's ab_args, between its ab_up DRIVER (load,
# connect or mount) and ab_down DRIVER; a /init may define its own.
run_ab() {
	ab_up "$1"
	# shellcheck disable=SC2046
	ulp_ab_jobs "$1" "$2" "$3" $(ab_args)
	ab_down "$1"
}

# ulp_drivers DEFAULT: the drivers mrkit_mode=check runs, in order:
# mrkit_drivers (a comma list, e.g. stock,mrkit: vm-ulp.sh's ULP_DRIVERS),
# else DEFAULT.
ulp_drivers() { echo "${mrkit_drivers:-$1}" | tr ',' ' '; }

# ulp_run_mode VMIB FMIB DEMO_VMIB DEMO_FMIB FAULT...: the schedule of
# mrkit_mode, with the caller's run_verify DRIVER MIB, run_fault DRIVER
# FAULT MIB and run_ab: check, mrkit's verify run (VMIB) and the first
# FAULT (FMIB), for each driver of ulp_drivers mrkit; demo, mrkit's verify
# run (DEMO_VMIB) and every FAULT with the stock driver and mrkit's
# (DEMO_FMIB); bench, ulp_ab_rounds.
ulp_run_mode() {
	local vm_=$1 fm_=$2 dv_=$3 df_=$4 f_ d_
	shift 4
	case $mode in
	check)
		for d_ in $(ulp_drivers mrkit); do
			run_verify $d_ "$vm_"
			run_fault $d_ "$1" "$fm_"
		done
		;;
	demo)
		run_verify mrkit "$dv_"
		for f_ in "$@"; do
			for d_ in stock mrkit; do
				run_fault $d_ "$f_" "$df_"
			done
		done
		;;
	bench)
		ulp_ab_rounds "${mrkit_ab_secs:-5}" "${mrkit_ab_rounds:-4}"
		;;
	*)
		fail "unknown mode $mode"
		;;
	esac
}

# ulp_unload_mrkit: rmmod mrkit, retried for up to 10 s (a ULP module's
# reference can still be on its way out right after its own rmmod).
ulp_rmmod_mrkit() {
	rmmod mrkit 2> /tmp/rmmod.err
	[ ! -e /sys/module/mrkit ]
}

ulp_unload_mrkit() {
	ulp_wait 100 ulp_rmmod_mrkit && return 0
	sed 's/^/MRKIT-VM   /' /tmp/rmmod.err
	lsmod | sed 's/^/MRKIT-VM   /'
	fail "rmmod mrkit"
}

# ulp_show_splats: the kernel's log around its splats, for the console:
# the 30 lines before the first (what led to it), then each splat with its
# call trace.
ulp_show_splats() {
	local n s
	n=$(dmesg | grep -n -m1 -E 'BUG:|WARNING:|Oops' | cut -d: -f1)
	[ -n "$n" ] || return 0
	s=$((n - 30))
	[ $s -ge 1 ] || s=1
	{
		dmesg | sed -n "$s,$((n - 1))p"
		# Each splat to its end marker (the call trace says whose
		# objects were left), without the module list; 240 lines at most.
		dmesg | sed -n "$n,\$p" | grep -v 'Modules linked in' |
			awk '/BUG:|WARNING:|Oops/ { p = 1 }
			     p { print; if (++c >= 240) exit }
			     /---\[ end trace/ { p = 0 }'
	} | sed 's/^/MRKIT-VM   /'
}

# ulp_finish NAME: unload mrkit, show any splat since $s_start and any
# known warning, print "NAME end splats=N" (and " known=N" where ULP_KNOWN
# is set) and, with no splat, the PASS line; power off.
ulp_finish() {
	local sp
	ulp_unload_mrkit
	sp=$(($(ulp_splats) - s_start))
	[ $sp = 0 ] && [ "$(ulp_known)" = 0 ] || ulp_show_splats
	say "$(echo "$1" | tr a-z A-Z) end splats=$sp${ULP_KNOWN:+ known=$(ulp_known)}"
	[ $sp = 0 ] && say "PASS $1 $mode over $t (verdict on the numbers: mrkit_report)"
	poweroff -f
}
