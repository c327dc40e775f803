# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
# The NFS/RDMA hook of scripts/host/vm-ulp.sh and vm-pair.sh: builds
# rpcrdma.ko (the kernel's NFS/RDMA client xprtrdma and server svcrdma,
# net/sunrpc/xprtrdma/ of linux-source-6.1) with every function of
# frwr_ops.c replaced by ours (ulp/nfs/frwr_ops.c.splice) and xprt_rdma.h
# given the members they need (ulp/nfs/xprt_rdma.h.splice), both applied
# by scripts/host/splice.py; every other file is upstream's.  Built
# against Debian's headers and linked to mrkit.  The guest side is
# scripts/guest/init-ulp-nfs.sh; the report is scripts/mrkit_report/nfs.py.
# NFSv4.1/4.2 need no nfs-utils (busybox mount; the export cache written
# by the guest).  NFSv3 needs rpcbind (lockd, started by knfsd when v3 is
# on, registers with it) and rpc.mountd (the MOUNT call), with exportfs
# for its /etc/exports: Debian's binaries from the rpcbind and
# nfs-kernel-server packages, unpacked (not installed) with their library
# closure into the initramfs by ulp_root; mount is still busybox's (it
# passes text options for -t nfs too), and "nolock" spares rpc.statd.

ULP_MODS="nfsd nfsv4 nfsv3 nfs sunrpc rpcrdma crc-t10dif"
ULP_MEM=1536
ULP_TIMEOUT=1500
# The NFSv3 verify runs (DRIVER:MiB per job, after the NFSv4 part):
# demo 16 MiB with mrkit and 8 MiB with the stock module; check none (the
# client's registration code is the same for both versions).  NFS_V3
# overrides ("" for none).
case $mode in
demo) nfs_v3=${NFS_V3-mrkit:16,stock:8} ;;
*) nfs_v3=${NFS_V3-} ;;
esac
ULP_CMDLINE="mrkit_ab_secs=${NFS_AB_SECS:-3} mrkit_ab_rounds=${NFS_AB_ROUNDS:-8} mrkit_nfs3=$nfs_v3"

# The module's upstream directory in the tree.
ULP_SRC=net/sunrpc/xprtrdma

# ulp_src DIR: the upstream sources rpcrdma.ko is built from, and its
# Kbuild (upstream's Makefile).
ulp_src() {
	cp "$tree/$ULP_SRC"/*.[ch] "$1/"
	cp "$tree/$ULP_SRC/Makefile" "$1/Kbuild"
}

# ulp_make DIR: build it there.
ulp_make() {
	nice -n 10 make -C "$kdir" M="$1" KBUILD_EXTRA_SYMBOLS="$symvers" \
		KCFLAGS="-I$(dirname "$symvers")/include" modules
}

ulp_build() {
	local d=$1 s=$1/src
	mkdir -p "$s"
	ulp_src "$s"
	python3 "$splice" --loc --tree "$tree" "${splice_args[@]}" --outdir "$s" \
		"$proj"/ulp/nfs/*.splice || return 1
	ulp_make "$s"
	cp "$s/rpcrdma.ko" "$d/"
}

# rpcbind, rpc.mountd, exportfs (and rpcinfo to wait for them) with
# libtirpc's /etc/netconfig, for NFSv3.
ulp_root() {
	local d
	d=$(vm_debs "rpcbind nfs-kernel-server libtirpc-common" \
		sbin/rpcbind usr/bin/rpcinfo usr/sbin/rpc.mountd \
		usr/sbin/exportfs etc/netconfig) || return 1
	vm_add_debs "$1" "$d"
}
vm_root_hook ulp_root

ulp_report() {
	vm_report nfs "$1" "$out/ulp-nfs-build.log" --expect-v3 "$nfs_v3"
}
