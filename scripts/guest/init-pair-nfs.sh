#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0-only
# Guest /init of "vm-pair.sh nfs": one of two guests on a private wire.
#   pair_role=target     the kernel's NFS server (knfsd, NFSv4.1/4.2 only)
#                        listening for RPC-over-RDMA on 10.98.0.1:20049 (the
#                        stock rpcrdma.ko's svcrdma), exporting a directory
#                        of an ext4 on /dev/vda (the host formats it and
#                        keeps it in RAM, so that it outlives a killed
#                        target), with nfsd's client records on it too, so
#                        that the initiator can reclaim its state after the
#                        target's reboot (10 s grace); the export cache is
#                        fed through /proc/net/rpc/*/channel (no nfs-utils);
#                        serves until the host's stop, then stops nfsd and
#                        unloads rpcrdma and nfsd
#   pair_role=initiator  10.98.0.2: the kernel's NFS client, vers=4.2,
#                        proto=rdma, hard, timeo=100 (10 s), through
#                        Debian's stock rpcrdma.ko or the one whose
#                        frwr_ops.c is mrkit (/ulp/rpcrdma.ko); for each
#                        step of pair_steps (DRIVER:FAULT,...) pair_step of
#                        /pair-lib.sh: mount, fio verify=crc32c
#                        (O_DIRECT) on two files with FAULT injected,
#                        read-back, umount, unload, "MRKIT-VM PAIR fault ..."
# Faults: loss1 loss5 delay reorder dup linkflap targetkill as for nvme;
# linkdown lasts pair_down s past the RPC timeout (timeo=100), so that the
# client's RPC timer forces a disconnect and xprtrdma reconnects; umountf:
# "umount -f" under fio (NFS kills the mount's outstanding RPCs, which fail
# with EIO; the mount stays while fio holds its files).
# vm-pair.sh reads the next line (host side: extra modules, deletion fault,
# the target disk's file system).
#PAIR-HOST mods=ext4 delete=umountf fs=ext4
. /base-lib.sh
. /ulp-lib.sh
. /nfs-lib.sh
. /pair-lib.sh
TADDR=10.98.0.1
CADDR=10.98.0.2
SRV=/srv
EXP=/srv/export
pair_delete=umountf
PAIR_TMO=10
PAIR_BSSPLIT=4k/30:16k/20:64k/15:256k/20:1m/15

target() {
	pair_target_up $TADDR ext4 rpcrdma
	mkdir -p $SRV
	mount -t ext4 /dev/vda $SRV || fail "mount /dev/vda"
	knfsd_up
	mkdir -p $EXP $SRV/v4recovery
	mount --bind $SRV/v4recovery /var/lib/nfs/v4recovery || fail "v4recovery"
	knfsd_start $CADDR $EXP
	# The first boot has no client to wait for; a reboot keeps its grace
	# period, for the client's reclaims.
	if [ ! -e $SRV/booted ]; then
		echo Y > /proc/fs/nfsd/v4_end_grace
		touch $SRV/booted
		sync
	fi
	s_start=$(ulp_splats)
	say "PAIR target ready"
	pair_serve_until_stop
	knfsd_stop
	umount /proc/fs/nfsd
	m=failed
	ulp_wait 300 rmmod rpcrdma 2> /dev/null && rmmod nfsd && m=ok
	umount /var/lib/nfs/v4recovery
	umount $SRV || say "PAIR note: umount $SRV failed"
	pair_log_check
	say "PAIR target end splats=$(($(ulp_splats) - s_start)) unload=$m"
	poweroff -f
}

# --- the initiator's hooks (see pair-lib.sh) ---

mounted() { grep -q " $MNT nfs4 " /proc/mounts; }

# Reconnects over the mounts of the run in /tmp/recon.
recon_save() {
	local c
	c=$(connects)
	[ -n "$c" ] && echo $(($(cat /tmp/recon) + c - 1)) > /tmp/recon
}

set_fio() {
	PAIR_FIO="--name=pair --directory=$MNT --filename_format=pair.\$jobnum"
	PAIR_FIO="$PAIR_FIO --size=${pair_mib:-8}m --fallocate=none"
}

drv_up() {
	if [ "$1" = stock ]; then
		modprobe rpcrdma || fail "modprobe rpcrdma (stock)"
	else
		insmod /ulp/rpcrdma.ko || fail "insmod /ulp/rpcrdma.ko"
	fi
	nfs_mount $TADDR || return 1
	rm -f $MNT/pair.*
	# Files of their full size before fio: fio lays out a file only when
	# it is shorter than its size, by truncating it - the read-back after
	# a run that ended early (at its runtime or at an error) would find
	# the file short and wipe what it is to verify.
	truncate -s "${pair_mib:-8}M" $MNT/pair.0 $MNT/pair.1 || return 1
	set_fio
}

drv_ready() {
	if ! mounted; then
		nfs_mount $TADDR || return 1
	fi
	set_fio
}

drv_delete() {
	local c
	c=$(connects)
	timeout 60 umount -f $MNT 2> /tmp/umount.err ||
		say "PAIR note: umount -f: $(cat /tmp/umount.err)"
	# Gone: its reconnects go to the run's count.  (While fio holds its
	# files the mount stays, and its own count goes on.)
	mounted || echo $(($(cat /tmp/recon) + ${c:-1} - 1)) > /tmp/recon
}

drv_down() {
	rm -f $MNT/pair.*
	recon_save
	timeout 120 umount $MNT || return 1
	ulp_wait 300 rmmod rpcrdma 2> /dev/null
}

drv_reconnects() {
	local c
	c=$(connects)
	echo $(($(cat /tmp/recon) + ${c:-1} - 1))
}
drv_written_mib() {
	awk '$1 == "bytes:" { b = $5 } END { print int(b / 1048576) }' /proc/self/mountstats
}
drv_mrs() {
	ulp_wait 50 mrs_at_most 0
	mr_count
}
drv_state() {
	grep -E '^device|xprt:|bytes:' /proc/self/mountstats
	cat /proc/net/rpc/nfs 2> /dev/null
}

initiator() {
	local m
	pair_net "$t" $CADDR
	ulp_fio_mount
	for m in nfsv4 mrkit; do
		modprobe $m || fail "modprobe $m"
	done
	mkdir -p $MNT
	echo 0 > /tmp/recon
	pair_req target-ready || fail "the target did not come up"
	pair_schedule
}

pair_role_run
