# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=dash
# Sourced by the NFS/RDMA guests' /init (init-ulp-nfs.sh, init-pair-nfs.sh)
# after /base-lib.sh and /ulp-lib.sh: the kernel's NFS server (knfsd) with
# its export cache, set up here and nowhere else, and the client's side.
#   knfsd_up            nfsd loaded and mounted, NFSv4.1/4.2 only (v2 and
#                       v3 off), 1 MiB blocks, lease and grace 10 s (a
#                       restart's reclaim finishes quickly)
#   knfsd_start [CLIENT EXPORT]
#                       the RDMA listener (port 20049) and 4 threads, and
#                       the export cache fed (knfsd_export) unless no
#                       CLIENT is given (rpc.mountd answers it)
#   knfsd_export CLIENT EXPORT
#                       the export cache without nfs-utils, through
#                       /proc/net/rpc/*/channel: CLIENT's address in the
#                       domain mrkitdom, the fsid 0 root EXPORT, exported
#                       read-write (nfsd forgets it when its last thread
#                       stops)
#   knfsd_stop          no threads
#   nfs_mount ADDR [VERS]
#                       NFSv4 (VERS, default 4.2) over RDMA from ADDR:/ on
#                       $MNT, rsize/wsize 1 MiB, timeo=100 (10 s); tries
#                       10 times, 60 s each at most
#   connects            the mount's RDMA connects so far (mountstats)
#   mr_count            MRs registered on the RDMA devices now
#   mrs_at_most N       whether mr_count is N or fewer
MNT=/mnt/nfs

knfsd_up() {
	local m
	for m in nfsd nfsv4 sunrpc; do
		modprobe $m || fail "modprobe $m"
	done
	mkdir -p /var/lib/nfs/v4recovery $MNT
	mount -t nfsd nfsd /proc/fs/nfsd || fail "mount nfsd"
	echo "-2 -3 +4 +4.1 +4.2" > /proc/fs/nfsd/versions || fail "nfsd versions"
	echo 1048576 > /proc/fs/nfsd/max_block_size || fail "nfsd max_block_size"
	echo 10 > /proc/fs/nfsd/nfsv4leasetime
	echo 10 > /proc/fs/nfsd/nfsv4gracetime
}

knfsd_export() {
	local e=2147483647
	printf "nfsd %s $e mrkitdom\n" "$1" > /proc/net/rpc/auth.unix.ip/channel
	printf 'mrkitdom 1 \\x00000000 %s %s\n' $e "$2" > /proc/net/rpc/nfsd.fh/channel
	printf "mrkitdom %s $e 9218 65534 65534 0\n" "$2" > /proc/net/rpc/nfsd.export/channel
}

knfsd_start() {
	echo "rdma 20049" > /proc/fs/nfsd/portlist || fail "nfsd rdma listener"
	echo 4 > /proc/fs/nfsd/threads || fail "nfsd threads"
	[ -z "${1:-}" ] || knfsd_export "$1" "$2"
}

knfsd_stop() { echo 0 > /proc/fs/nfsd/threads; }

nfs_mount() {
	local n=0
	until timeout 60 mount -t nfs4 -o vers=${2:-4.2},proto=rdma,port=20049,rsize=1048576,wsize=1048576,timeo=100 \
		"$1":/ $MNT; do
		n=$((n + 1))
		[ $n -lt 10 ] || return 1
		sleep 3
	done
	grep -q " $MNT nfs4 .*proto=rdma" /proc/mounts
}

connects() {
	awk '$1 == "xprt:" && $2 == "rdma" { print $5; exit }' /proc/self/mountstats
}

# MRs registered on the RDMA devices, from their resource summary.  Not
# from a listing of the MRs: it prints each one's owner, a name ib_core
# reads from the module that made the MR, so an MR left behind by a module
# since unloaded (knfsd's side of 6.12 over siw leaks some when a callback
# channel is torn down) oopses the listing, which then reads as no MR.
mr_count() {
	rdma resource show | sed -n 's/.* mr \([0-9]*\).*/\1/p' |
		awk '{ s += $1 } END { print s + 0 }'
}

mrs_at_most() { [ "$(mr_count)" -le "$1" ]; }
