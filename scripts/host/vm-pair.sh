#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Two qemu guests on a private wire, and faults on it: a ULP converted to
# mrkit (and its stock twin) against the kernel's target in the other
# guest, under fio verify, while the wire loses, delays, reorders and
# duplicates packets, goes down, the target dies and boots again, and the
# initiator's controller is deleted.
#
#   vm-pair.sh ULP rxe|siw check|full
#
# Both guests run Debian's stock kernel (TCG, -smp 2, both vCPUs on one
# host thread unless VM_ACCEL says otherwise: two guests with a thread per
# vCPU on a two-core machine preempt each other's vCPUs, which then spin
# on locks whose holders are not running); each has exactly one
# virtio-net NIC on a qemu "dgram" netdev over Unix sockets (it outlives a
# peer's restart), no other network (-nic none), addresses 10.98.0.1
# (target) and 10.98.0.2 (initiator).  The target's namespace is a host
# file in /dev/shm (RAM) given to it as virtio-blk, so that it outlives the
# target guest.  The host drives the faults it can see from outside: the
# initiator prints "MRKIT-PAIR REQ SEQ ACTION ARG..." on its console, this
# script acts (qemu's HMP monitor on a Unix socket: set_link, quit; a new
# target on the same sockets) and answers in ctl/ack-SEQ, a directory
# both guests mount read-only over 9p.  Netem and the controller deletion
# are the initiator's own.
#   check  one short fault of each kind, mrkit's driver only
#   full   every fault, the stock driver and mrkit's
# An initiator that crashes inside a step (its qemu quits on the panic) is
# booted again, at most twice, for the steps after it; the host notes the
# crash for the report (a failed row with no figures).
# Per-ULP pieces: scripts/host/ulp-ULP.sh (the hook: the build, ULP_MODS,
# ULP_MEM, ULP_CMDLINE) and scripts/guest/init-pair-ULP.sh (the guests' /init,
# with pair_role=target|initiator, pair_steps=DRIVER:FAULT,...).  The
# verdict: scripts/mrkit_report/pair.py.  Logs: .check/ulp-pair-ULP-T-MODE-*
# (ULP-T-MODE-6.12-* with MRKIT_KERNEL=6.12).
# PAIR_BUILD_ONLY=1 stops before the boot; PAIR_DISK_MB sizes the namespace;
# PAIR_STEPS=DRIVER:FAULT,... replaces the schedule.  PAIR_PCAP=DIR
# records the wire's headers (qemu's filter-dump on each guest's netdev,
# 128 bytes of each frame) in DIR/ROLE-BOOT.pcap, for
# python3 -m mrkit_report.pcap.
# ULP is nvme, iser (LIO + ib_isert against ib_iser; the deletion fault
# is an iscsiadm logout), nfs (knfsd over RDMA on an ext4 the host makes,
# against xprtrdma; the deletion fault is "umount -f") or srp (LIO +
# ib_srpt against ib_srp; the deletion fault is the target port's removal
# through sysfs); iser, nfs and srp share scripts/guest/pair-lib.sh's
# pair_step and say on a "#PAIR-HOST" line what this script adds for them
# (pair_host below).
set -euo pipefail

ulp=${1:?usage: vm-pair.sh ULP rxe|siw check|full}
transport=${2:-rxe}
mode=${3:-check}
. "$(dirname "$0")/vm-lib.sh"
vm_env
VM_ACCEL=${VM_ACCEL:-tcg,thread=single}
hook=$proj/scripts/host/ulp-$ulp.sh
init=$proj/scripts/guest/init-pair-$ulp.sh
[ -f "$hook" ] && [ -f "$init" ] || { echo "pair: no $hook or $init"; exit 1; }
case $transport in rxe | siw) ;; *) echo "pair: transport rxe or siw"; exit 1 ;; esac

ULP_MODS=""
ULP_BINS=""
ULP_MEM=1024
ULP_CMDLINE=""
# shellcheck source=/dev/null
. "$hook"
# pair_host KEY: a setting of the ULP's guest /init for this side, from
# its "#PAIR-HOST key=value ..." line: mods (more stock modules for the
# initramfs), delete (the name of its deletion fault, instead of
# ctrldelete), fs (a file system the host puts on the target's disk),
# cmdline (kernel arguments for both guests), tknown (an extended regular
# expression: the target's warnings of a known cause, counted apart and
# printed, not as splats; mrkit_report.pair gets it as
# MRKIT_PAIR_TKNOWN), extra (faults,... of its own that full runs after
# linkdown), siwkill (faults,... that the target's killing
# follows at once over siw, for each driver; the guest /init says why).
pair_host() { sed -n 's/^#PAIR-HOST //p' "$init" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
ULP_MODS="$ULP_MODS $(pair_host mods)"
ULP_CMDLINE="$ULP_CMDLINE $(pair_host cmdline)"

# The schedule: DRIVER:FAULT steps, in order.
case $mode in
check)
	steps="mrkit:loss5 mrkit:linkdown mrkit:targetkill mrkit:ctrldelete"
	knobs="pair_mib=4 pair_rt=30 pair_down=8 pair_rb=150"
	budget=900
	;;
full)
	steps=
	siwkill=
	killed=0
	[ "$transport" != siw ] || siwkill=,$(pair_host siwkill),
	for f in loss1 loss5 delay reorder dup linkflap linkdown \
		$(pair_host extra | tr , ' ') targetkill ctrldelete; do
		if [ "${siwkill/,$f,/}" != "$siwkill" ]; then
			steps="$steps stock:$f stock:targetkill mrkit:$f mrkit:targetkill"
			killed=1
		elif [ $f != targetkill ] || [ $killed = 0 ]; then
			steps="$steps stock:$f mrkit:$f"
		fi
	done
	knobs="pair_mib=8 pair_rt=60 pair_down=10"
	budget=3600
	;;
*)
	echo "pair: mode check or full"
	exit 1
	;;
esac
del=$(pair_host delete)
[ -z "$del" ] || steps=${steps//ctrldelete/$del}
# PAIR_STEPS=DRIVER:FAULT,... runs those steps instead.
steps=${PAIR_STEPS:-$(echo $steps | tr ' ' ,)}

start=$(date +%s)
# The modules: cache entries named by their inputs (vm-lib.sh), never
# changed once built; this run's initramfs, consoles and sockets are its
# own (the checkout's .check/, a fresh run directory).
vm_build_ulp "$ulp"
# MRKIT_KERNEL=6.12: both guests boot Debian's 6.12 kernel and the ULP is
# built from linux-source-6.12 (vm_build_ulp); the run's files are named
# after it, and its FAULT2 lines end with kernel=6.12.
tag=$ulp-$transport-$mode
[ "${MRKIT_KERNEL:-6.1}" = 6.1 ] || tag=$tag-$MRKIT_KERNEL
work=$scratch/pair-$tag
rm -rf "$work"
mkdir -p "$work"
siw=
[ "$transport" = siw ] && siw=$(vm_build_siw)
vm_ulp_root "$work/root" "$mk" "$ulpdir" "$init" "$siw" \
	"$ULP_MODS virtio_net virtio_blk sch_netem" "$ULP_BINS /usr/sbin/tc"
vm_mkinitrd "$work/root" "$work/initrd.gz"
fio=$(vm_fio)
echo "pair: $ulp built and packed in $(( $(date +%s) - start )) s; $transport, $mode: $steps"
[ "${PAIR_BUILD_ONLY:-0}" = 1 ] && exit 0

# Sockets, monitors, the control share (a directory of this run's own,
# short enough for socket paths) and the target's disk.
run=$(mktemp -d /tmp/mrkit-pair.XXXXXX)
ctl=$run/ctl
mkdir -p "$ctl"
disk=/dev/shm/mrkit-pair-$ulp-$transport-$$.img
truncate -s "${PAIR_DISK_MB:-256}M" "$disk"
fs=$(pair_host fs)
[ -z "$fs" ] || mke2fs -q -F -t "$fs" -E lazy_itable_init=0,lazy_journal_init=0 "$disk"
logs=$out/ulp-pair-$tag
rm -f "$logs"-*
ilog=$logs-initiator.log
tboot=0
silent=0
tlog=
pcaps=0
pids=()

cleanup() {
	local p
	for p in "${pids[@]}"; do
		kill -TERM "$p" 2> /dev/null || true
	done
	sleep 1
	# Only the qemus this script started (their pid files), if still there.
	for p in "$run"/*.pid; do
		[ -f "$p" ] && grep -q qemu "/proc/$(cat "$p")/comm" 2> /dev/null &&
			kill -KILL "$(cat "$p")" 2> /dev/null
	done
	rm -f "$disk"
	rm -rf "$run"
}
trap cleanup EXIT

# guest ROLE LOG: one guest (vm_qemu), in the background, under timeout;
# its timeout process in pids and $qpid.
guest() {
	local role=$1 peer=target mac=52:54:00:98:00:02 extra=()
	if [ "$role" = target ]; then
		peer=initiator
		mac=52:54:00:98:00:01
		# shellcheck disable=SC2054
		extra=(-drive "file=$disk,if=none,id=ns,format=raw,cache=writeback,aio=threads"
		       -device virtio-blk-pci,drive=ns)
	else
		extra=(-virtfs "local,path=$fio,mount_tag=host,security_model=none,readonly=on")
	fi
	rm -f "$run/$role.dg" "$run/$role.mon" "$run/$role.pid"
	if [ -n "${PAIR_PCAP:-}" ]; then
		mkdir -p "$PAIR_PCAP"
		pcaps=$((pcaps + 1))
		extra+=(-object "filter-dump,id=dump,netdev=wire,file=$PAIR_PCAP/$role-$pcaps.pcap,maxlen=128")
	fi
	VM_MEM=$ULP_MEM VM_TIMEOUT=$budget
	vm_qemu "$2" "$work/initrd.gz" "log_buf_len=64M mrkit_transport=$transport mrkit_mode=$mode pair_role=$role pair_steps=$isteps $knobs $ULP_CMDLINE" \
		-monitor "unix:$run/$role.mon,server=on,wait=off" -pidfile "$run/$role.pid" \
		-netdev "dgram,id=wire,local.type=unix,local.path=$run/$role.dg,remote.type=unix,remote.path=$run/$peer.dg" \
		-device "virtio-net-pci,netdev=wire,mac=$mac" \
		-virtfs "local,path=$ctl,mount_tag=ctl,security_model=none,readonly=on" \
		"${extra[@]}"
	qpid=$VM_PID
	pids+=("$qpid")
}

# hmp ROLE COMMAND: one command on a guest's monitor; prints its answer.
hmp() {
	python3 - "$run/$1.mon" "$2" <<'EOF'
import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.settimeout(5)
s.connect(sys.argv[1])
buf, end = b"", time.time() + 5
while b"(qemu)" not in buf and time.time() < end:
    buf += s.recv(4096)
s.sendall(sys.argv[2].encode() + b"\n")
buf, end = b"", time.time() + 5
try:
    while b"(qemu)" not in buf and time.time() < end:
        got = s.recv(4096)
        if not got:
            break
        buf += got
except (socket.timeout, ConnectionResetError):
    pass
out = buf.decode(errors="replace").replace("\r", "").strip()
print(out)
sys.exit(1 if "not found" in out or "rror" in out else 0)
EOF
}

# link ROLE on|off: the guest's NIC (and its netdev) up or down.
link() { hmp "$1" "set_link wire $2" > /dev/null; }

boot_target() {
	tboot=$((tboot + 1))
	tlog=$logs-target-$tboot.log
	guest target "$tlog"
	tpid=$qpid
}

# target_ready SECS: the target said it serves (bounded).  A target
# whose console is still empty after 120 s never reached its /init (the
# first thing /init prints is the kernel's release): qemu is stopped and
# the target booted once more, which the answer counts (silent_boots=N).
target_ready() {
	local n=$(($1 * 2)) q=240
	until grep -aqs 'MRKIT-VM PAIR target ready' "$tlog"; do
		kill -0 "$tpid" 2> /dev/null || return 1
		n=$((n - 1))
		[ $n -gt 0 ] || return 1
		q=$((q - 1))
		if [ $q = 0 ] && [ ! -s "$tlog" ] && [ "$silent" = 0 ]; then
			silent=$((silent + 1))
			echo "pair: the target's console stayed empty for 120 s; booting it again"
			hmp target quit > /dev/null || true
			gone "$tpid" 10 || kill -KILL "$(cat "$run/target.pid")" 2> /dev/null || true
			gone "$tpid" 10 || return 1
			boot_target
			n=$(($1 * 2)) q=240
		fi
		sleep 0.5
	done
}

# gone PID SECS: PID ended within SECS.
gone() {
	local n=$(($2 * 10))
	while kill -0 "$1" 2> /dev/null; do
		n=$((n - 1))
		[ $n -gt 0 ] || return 1
		sleep 0.1
	done
}

SPLAT='BUG:|WARNING:|Oops|general protection|UBSAN|KASAN|list_(add|del) corruption|refcount_t:|blocked for more than'
tknown=$(pair_host tknown)
export MRKIT_PAIR_TKNOWN=$tknown
# tsplats, tknown_n: the target's splats, and its known warnings (not in
# the splats), on its consoles so far.
tknown_n() {
	[ -n "$tknown" ] || { echo 0; return; }
	cat "$logs"-target-*.log | grep -aE "$SPLAT" | grep -acE "$tknown" || true
}
tsplats() { echo $(($(cat "$logs"-target-*.log | grep -acE "$SPLAT" || true) - $(tknown_n))); }

# act ACTION ARG...: one request of the initiator; its answer in $ans
# (not a subshell: a target booted here must stay this script's child).
act() {
	local end
	ans=ok
	case $1 in
	link-down)
		# Both ends lose carrier, as with a cable pulled.
		link initiator off && link target off || ans="fail set_link off"
		sleep "$2"
		link initiator on && link target on || ans="fail set_link on"
		;;
	target-kill)
		# A power cut: qemu quits at once (SIGKILL if it does not).
		hmp target quit > /dev/null || true
		gone "$tpid" 10 || kill -KILL "$(cat "$run/target.pid")" 2> /dev/null || true
		if ! gone "$tpid" 10; then
			ans="fail the target did not die"
			return
		fi
		sleep 1
		boot_target
		target_ready 300 || ans="fail the target did not come back"
		ans="$ans boot=$tboot"
		;;
	target-ready)
		target_ready 300 || ans="fail the target did not come up"
		[ "$silent" = 0 ] || ans="$ans silent_boots=$silent"
		;;
	target-stop)
		touch "$ctl/stop"
		gone "$tpid" 120 || ans="fail the target did not power off"
		end=$(grep -ao 'PAIR target end .*' "$tlog" | tr -d '\r' || true)
		[ -n "$end" ] || ans="fail no end line from the target"
		ans="$ans end_splats=${end#PAIR target end splats=}"
		;;
	mark) ;;
	*)
		ans="fail unknown request $1"
		;;
	esac
}

# crashed: the initiator stopped on a kernel crash (its qemu quits:
# panic=-1 with -no-reboot), not on its own PASS or FAIL.
crashed() {
	! grep -aqE 'MRKIT-VM (PASS|FAIL)' "$ilog" &&
		grep -aqE 'Kernel panic|Oops|general protection|BUG:' "$ilog"
}

# The budget counts from the boot (the build before it may be slow on a
# loaded machine; the guests' own timeouts count from their boots too).
isteps=$steps
boot_target
iboot=1
ilogs=("$logs-initiator.log")
guest initiator "$ilog"
ipid=$qpid
echo "pair: guests booting (target, initiator); requests:"
seq=0
cur=
deadline=$(($(date +%s) + budget))
while [ "$(date +%s)" -lt "$deadline" ]; do
	if ! kill -0 "$ipid" 2> /dev/null; then
		# An initiator that crashed in a step (a kernel bug, see README:
		# ib_iser over rxe) boots again for the rest of the schedule, so
		# that one crash does not hide the steps after it; the step is
		# reported as crashed (mrkit_report.pair), the run fails.
		crashed && [ -n "$cur" ] || break
		left=$(echo "$steps" | tr , '\n' | awk -v c="$cur" 'f { print } $0 == c { f = 1 }' |
			paste -sd,)
		echo "MRKIT-HOST crashed ${cur#*:} ${cur%%:*} $(grep -acE "$SPLAT|Kernel panic" "$ilog")" \
			>> "$logs-host.log"
		echo "pair:   +$(( $(date +%s) - start )) s: the initiator crashed in ${cur#*:} (${cur%%:*}):" \
			"$(grep -aE -m 1 'BUG:|Oops|general protection|Kernel panic' "$ilog" | tr -d '\r')"
		[ -n "$left" ] && [ $iboot -lt 3 ] || break
		iboot=$((iboot + 1))
		isteps=$left
		cur=
		seq=0
		rm -f "$ctl"/ack-*
		ilog=$logs-initiator-$iboot.log
		ilogs+=("$ilog")
		guest initiator "$ilog"
		ipid=$qpid
		echo "pair:   +$(( $(date +%s) - start )) s: initiator booted again for $isteps"
		continue
	fi
	req=$(grep -aos "MRKIT-PAIR REQ $((seq + 1)) .*" "$ilog" | head -n 1 | tr -d '\r' || true)
	if [ -z "$req" ]; then
		sleep 0.5
		continue
	fi
	seq=$((seq + 1))
	# shellcheck disable=SC2086
	set -- ${req#MRKIT-PAIR REQ "$seq" }
	t0=$(date +%s)
	act "$@"
	ans="$ans tsplats=$(tsplats)"
	[ "$(tknown_n)" = 0 ] || ans="$ans tknown=$(tknown_n)"
	# The step under way (its marks: FAULT-DRIVER-begin, -end).
	if [ "$1" = mark ]; then
		case $2 in
		*-begin) cur=${2%-begin}; cur=${cur##*-}:${cur%-*} ;;
		*-end) cur= ;;
		esac
	fi
	[ "$1" = mark ] || echo "pair:   +$((t0 - start)) s: $seq $* -> $ans ($(( $(date +%s) - t0 )) s)"
	echo "$ans" > "$ctl/.ack"
	mv "$ctl/.ack" "$ctl/ack-$seq"
done
gone "$ipid" 30 || echo "pair: the initiator did not finish within $budget s"
# One console for the report: the initiator's boots in order, then what
# the host saw (crashes).
cat "${ilogs[@]}" "$logs-host.log" 2> /dev/null > "$logs-all.log" || true
grep -ao 'MRKIT-VM .*' "$logs-all.log" | sed 's/^MRKIT-VM //; s/\r$//' | grep -v 'pools before teardown' || true
rep=0
vm_report pair "$ulp" "$transport" "$steps" "$logs-all.log" "$logs"-target-*.log || rep=1
[ "$(tknown_n)" = 0 ] || echo "pair: the target's known warnings (not counted as splats): $(tknown_n):" \
	"$(cat "$logs"-target-*.log | grep -aE "$SPLAT" | grep -aE "$tknown" | sed 's/.* at //' | tr -d '\r' | sort | uniq -c | paste -sd';')"
echo "pair: $ulp over $transport ($mode): $(( $(date +%s) - start )) s, target booted $tboot times, initiator $iboot"
if [ $rep = 0 ] && grep -aq 'MRKIT-VM PASS' "$ilog" && ! grep -q crashed "$logs-host.log" 2> /dev/null; then
	exit 0
fi
echo "pair: $ulp $transport $mode failed; consoles in $logs-*.log"
# What a failure needs first, when only the end of this output is kept:
# the initiator's last lines, its kernel's words on errors and
# reconnects, fio's I/O errors, and last the target's first splats with
# their first lines.
tail -n 30 "$ilog"
grep -ahE 'io_u error|I/O error|reconnect|srp|nvme|iscsi|rpcrdma' "$logs-all.log" |
	grep -av MRKIT | tail -n 40 | sed 's/^/pair: initiator: /' || true
echo "pair: target: $(tsplats) splats on its consoles"
grep -ahE -A5 "$SPLAT" "$logs"-target-*.log | head -n 18 | tr -d '\r' | sed 's/^/pair: target: /' || true
exit 1
