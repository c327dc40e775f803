#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0-only
# Guest /init of "vm-ulp.sh nfs": the kernel's NFS server (knfsd,
# nfs-lib.sh) exporting a tmpfs, listening for RPC-over-RDMA on 10.99.0.1:20049, and the kernel's
# NFS client mounting it with proto=rdma (NFSv4.2, and 4.1 for the
# read-back after an umount; NFSv3 last; rsize/wsize 1 MiB) through
# rpcrdma.ko: Debian's stock module or the one whose frwr_ops.c is mrkit
# (/ulp/rpcrdma.ko).  rpcrdma.ko also holds the server
# side (svcrdma, upstream code in both builds), so a switch restarts nfsd.
# NFSv4 without nfs-utils: the export cache is fed through
# /proc/net/rpc/*/channel and busybox mount passes the text options (and
# addr=) to the kernel.  NFSv3 with three of Debian's programs (unpacked
# into the initramfs by scripts/host/ulp-nfs.sh): rpcbind, because knfsd with
# v3 on starts lockd, which must register NLM with rpcbind (nfsd does not
# start without it), and rpc.mountd with exportfs (nfs-kernel-server),
# because a v3 mount begins with a MOUNT call (the kernel makes it, over
# TCP, port from rpcbind) that only mountd answers; mountd then also
# answers the export cache's upcalls from /etc/exports.  busybox mount
# does "-t nfs" as it does nfs4 (text options, addr= added; no mount.nfs
# needed); "nolock" keeps the client off lockd, so no rpc.statd.  fio
# (over 9p) works on files in the mount.
#   mrkit_mode=check  mrkit module: a short verify run (direct and
#                     buffered) and its read-back, and nfsd's threads to 0
#                     and back under fio (each module of mrkit_drivers:
#                     ulp-lib.sh ulp_drivers)
#   mrkit_mode=demo   mrkit module: 128 MiB direct + 128 MiB buffered
#                     verify and read-back; then, for both modules, the
#                     nfsd restart under load and an umount right after I/O
#   mrkit_mode=bench  A/B: the same jobs with the stock and the mrkit module
#                     interleaved (stock, mrkit, stock, mrkit, ...:
#                     mrkit_ab_rounds rounds of mrkit_ab_secs s per job)
#   mrkit_nfs3=DRIVER:MIB,...  then, over NFSv3, the verify run (direct,
#                     buffered, read-back) for each DRIVER with MIB per job
# Facts go to the console as "MRKIT-VM NFS ..." lines and fio's JSON;
# scripts/mrkit_report/nfs.py turns them into the VERIFY/FAULT/AB lines.
. /base-lib.sh
. /ulp-lib.sh
. /nfs-lib.sh
vers=${mrkit_nfsvers:-4.2}
IP=10.99.0.1
EXP=/export
BSSPLIT=4k/30:16k/20:64k/15:256k/20:1m/15

echo 1 > /proc/sys/kernel/sysrq
fabric "$t"
knfsd_up
mkdir -p $EXP
mount -t tmpfs -o size=900m tmpfs $EXP || fail "tmpfs"
ulp_fio_mount
modprobe mrkit || fail "modprobe mrkit"

# knfsd feeds its own export cache until NFSv3 is up; then rpc.mountd
# answers the cache's upcalls from /etc/exports instead.
nfsd_start() {
	if [ -f /tmp/nfs3.up ]; then
		knfsd_start
	else
		knfsd_start $IP $EXP
	fi
}

drv_load() {	# stock|mrkit: (re)load rpcrdma and start nfsd on it
	if [ "$1" = stock ]; then
		modprobe rpcrdma || fail "modprobe rpcrdma (stock)"
	else
		insmod /ulp/rpcrdma.ko || fail "insmod /ulp/rpcrdma.ko"
		echo 1 > $POOL_EV/enable || fail "mrkit_pool_counters event"
	fi
	nfsd_start
	echo Y > /proc/fs/nfsd/v4_end_grace 2>/dev/null
}

drv_unload() {
	knfsd_stop
	ulp_wait 300 rmmod rpcrdma || fail "rmmod rpcrdma ($1)"
}

# NFSv3: rpcbind (it runs as _rpc), exportfs and rpc.mountd (fixed port
# 20048), then knfsd's v3 on; once, after every NFSv4 run (nfsd is
# stopped then, so its version list may change).
mountd_up() { rpcinfo -p 127.0.0.1 2>/dev/null | grep -q ' 100005 *3 *tcp '; }
nfs3_start() {
	[ -f /tmp/nfs3.up ] && return
	modprobe nfsv3 || fail "modprobe nfsv3"
	mkdir -p /run/rpcbind /var/lib/nfs
	ln -s /run /var/run
	printf 'root:x:0:0::/:/bin/sh\n_rpc:x:100:65534::/run/rpcbind:/bin/false\n' > /etc/passwd
	printf 'root:x:0:\nnogroup:x:65534:\n' > /etc/group
	printf '127.0.0.1 localhost\n%s mrkitguest\n' $IP > /etc/hosts
	printf 'passwd: files\ngroup: files\nhosts: files\n' > /etc/nsswitch.conf
	# rpcbind and rpcinfo find their port by the service name.
	printf 'sunrpc 111/tcp portmapper\nsunrpc 111/udp portmapper\n' > /etc/services
	rpcbind -f -w > /tmp/rpcbind.log 2>&1 &
	ulp_wait 300 rpcinfo -p 127.0.0.1 > /dev/null 2>&1 ||
		fail "rpcbind: $(cat /tmp/rpcbind.log)"
	echo "$EXP $IP(rw,sync,insecure,no_subtree_check,no_root_squash,fsid=0)" > /etc/exports
	exportfs -r || fail "exportfs"
	rpc.mountd -F -p 20048 > /tmp/mountd.log 2>&1 &
	ulp_wait 300 mountd_up || fail "rpc.mountd: $(cat /tmp/mountd.log)"
	echo "-2 +3 +4 +4.1 +4.2" > /proc/fs/nfsd/versions || fail "nfsd versions (v3)"
	touch /tmp/nfs3.up
}

mount4() {	# driver [NFS version]
	nfs_mount $IP "${2:-$vers}" || fail "mount ($1)"
}

# The v3 mount: the kernel asks rpcbind for mountd's TCP port and makes the
# MOUNT call itself; nolock: no NLM from the client.
nfs3_mount() {	# driver
	ulp_wait 100 mount -t nfs -o vers=3,proto=rdma,port=20049,mountproto=tcp,nolock,rsize=1048576,wsize=1048576,timeo=100 \
		$IP:$EXP $MNT || fail "mount vers=3 ($1)"
	grep -q " $MNT nfs .*proto=rdma" /proc/mounts || fail "not an RDMA v3 mount ($1)"
	# What registered with rpcbind: 100000 itself, 100005 mountd,
	# 100021 lockd's NLM (knfsd's v3 needs it), 100024 statd if any.
	say "NFS rpcbind programs: $(rpcinfo -p 127.0.0.1 | awk 'NR > 1 { print $1 }' | sort -u | tr '\n' ' ')"
}

nfs_umount() {
	ulp_wait 300 umount $MNT || fail "umount ($1)"
}

# MiB written with O_DIRECT through the mount (mountstats "bytes:" field 4).
written_mib() {
	awk '$1 == "bytes:" { print int($5 / 1048576); exit }' /proc/self/mountstats
}
wrote_some() { [ "$(written_mib)" -ge "$1" ]; }

# MRs a run left registered once everything is idle: more than the
# $1 there were at its start.
mrs_left() {
	local n
	ulp_wait 50 mrs_at_most "$1"
	n=$(($(mr_count) - $1))
	echo $((n > 0 ? n : 0))
}

# Sum of a counter over mrkit's mrkit_pool_counters events of destroyed
# rpcrdma pools (one per connection of the mrkit module; the event is
# enabled when that module is loaded).
POOL_EV=/sys/kernel/tracing/events/mrkit/mrkit_pool_counters
pool_sum() {
	grep ' mrkit_pool_counters: .* pool=rpcrdma-' /sys/kernel/tracing/trace 2> /dev/null |
		sed -n "s/.* $1=\([0-9]*\).*/\1/p" | awk '{ s += $1 } END { print s + 0 }'
}

# fio's verify job on files: random writes of 4 KiB..1 MiB blocks, crc32c
# in every block, 2 jobs with a file each; $1 = MiB per job, $2 = 1 for
# O_DIRECT, $3 = file name prefix.
verify_args() {
	echo "--name=$3 --directory=$MNT --filename_format=$3.\$jobnum" \
	     "--direct=$2 --ioengine=libaio --rw=randwrite --bssplit=$BSSPLIT" \
	     "--iodepth=16 --numjobs=2 --size=${1}m --verify=crc32c" \
	     "--randrepeat=1 --verify_fatal=0 --fallocate=none"
}

# Write and verify, direct then buffered, then read the buffered files back;
# with a third argument 3, over NFSv3 (fio runs and lines tagged v3).
run_verify() {	# driver MiB-per-job [3]
	sfx=${3:+-v$3}
	r0=$(pool_sum remote_inv) i0=$(pool_sum local_inv) x0=$(pool_sum stale_replaced)
	drv_load "$1"
	if [ "${3:-}" = 3 ]; then nfs3_mount "$1"; else mount4 "$1"; fi
	# shellcheck disable=SC2046
	ulp_fio "verify-$t-direct-$1$sfx" $(verify_args "$2" 1 vd) --do_verify=1
	# shellcheck disable=SC2046
	ulp_fio "verify-$t-buffered-$1$sfx" $(verify_args "$2" 0 vb) --do_verify=1
	# The buffered run may have verified from the page cache: drop it, and
	# read that back over the wire (O_DIRECT verify reads always were).
	sync
	echo 3 > /proc/sys/vm/drop_caches
	# shellcheck disable=SC2046
	ulp_fio "readback-$t-buffered-$1$sfx" $(verify_args "$2" 0 vb) --verify_only=1
	say "NFS mount $t $1 $(grep " $MNT " /proc/mounts | cut -d' ' -f4)"
	rm -f $MNT/vd.* $MNT/vb.*
	nfs_umount "$1"
	drv_unload "$1"
	say "NFS inv $t $1 remote=$(($(pool_sum remote_inv) - r0)) local=$(($(pool_sum local_inv) - i0)) stale=$(($(pool_sum stale_replaced) - x0))${3:+ vers=$3}"
}

# Wait for a background fio at most $2 seconds; past that, show the
# blocked tasks and the kernel's last words, and kill it.
wait_fio() {	# pid seconds
	n=$(($2 * 10))
	while kill -0 "$1" 2>/dev/null; do
		n=$((n - 1))
		if [ $n -le 0 ]; then
			say "NFS note: fio still running after $2 s; blocked tasks:"
			echo w > /proc/sysrq-trigger
			dmesg | tail -n 80 | sed 's/^/MRKIT-VM   /'
			kill -9 "$1"
			break
		fi
		sleep 0.1
	done
	wait "$1"
}

# A fault under load; fio writes with verification running behind it.
run_fault() {	# driver fault MiB-per-job
	drv_load "$1"
	s0=$(ulp_splats)
	l0=$(ulp_mrkit_leaks)
	p0=$(pool_sum in_use)
	m0=$(mr_count)
	mount4 "$1"
	case $2 in
	nfsdrestart)
		# shellcheck disable=SC2046
		ulp_fio "fault-$t-$2-$1" $(verify_args "$3" 1 ft) --do_verify=1 \
			--verify_backlog=16 &
		pid=$!
		# Under load: a quarter of the writes done before the fault.
		ulp_wait 600 wrote_some $(($3 / 2)) ||
			say "NFS note: little progress before the fault"
		say "NFS note: nfsd threads to 0 after $(written_mib) MiB"
		knfsd_stop
		sleep 2
		nfsd_start
		say "NFS note: nfsd back"
		wait_fio $pid 300
		c=$(connects)
		# Everything written must read back after the reconnect.
		# shellcheck disable=SC2046
		ulp_fio "fault-$t-$2-$1-readback" $(verify_args "$3" 1 ft) --verify_only=1
		;;
	umountafterio)
		# shellcheck disable=SC2046
		ulp_fio "fault-$t-$2-$1" $(verify_args "$3" 1 ft) --do_verify=0
		c=$(connects)
		umount $MNT || fail "umount right after I/O ($1)"
		mount4 "$1" 4.1
		say "NFS mount $t $1 $(grep " $MNT " /proc/mounts | cut -d' ' -f4)"
		# shellcheck disable=SC2046
		ulp_fio "fault-$t-$2-$1-readback" $(verify_args "$3" 1 ft) --verify_only=1
		;;
	esac
	rm -f $MNT/ft.*
	nfs_umount "$1"
	drv_unload "$1"
	left=$(mrs_left "$m0")
	l1=$(ulp_mrkit_leaks)
	say "NFS fault $t $2 $1 reconnects=$((c - 1)) leaks=$((l1 - l0 + left + $(pool_sum in_use) - p0)) splats=$(($(ulp_splats) - s0))"
}

# A/B: sequential 1 MiB write and read, 4 KiB random read, O_DIRECT,
# iodepth 32, on one 128 MiB file with a crc32c per 4 KiB, checked on every
# read; round 0 writes the whole file once (stock module).
ab_args() {
	echo "--directory=$MNT --filename=ab.dat --direct=1 --ioengine=libaio" \
	     "--iodepth=32 --size=128m --verify=crc32c --verify_interval=4k"
}
ab_up() {
	drv_load "$1"
	mount4 "$1"
}
ab_down() {
	nfs_umount "$1"
	drv_unload "$1"
}

s_start=$(ulp_splats)
ulp_run_mode 8 16 64 16 nfsdrestart umountafterio
for r in $(echo "${mrkit_nfs3:-}" | tr ',' ' '); do
	nfs3_start
	run_verify "${r%%:*}" "${r#*:}" 3
done

dmesg | grep -E 'rpcrdma|mrkit' | tail -n 20 | sed 's/^/MRKIT-VM   dmesg: /'
ulp_finish nfs
