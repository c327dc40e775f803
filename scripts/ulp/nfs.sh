# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
# Hook of scripts/vm/ulp.sh for NFS/RDMA: builds rpcrdma.ko (the kernel's
# NFS/RDMA client xprtrdma and server svcrdma, net/sunrpc/xprtrdma/ of
# linux-source-6.1) with frwr_ops.c replaced whole by ulp/nfs/frwr_mrkit.c
# and xprt_rdma.h given the members it needs (ulp/nfs/xprt_rdma.splice),
# both applied by scripts/ulp/splice.py; every other file is upstream's.
# Built against Debian's headers and linked to mrkit.  The guest side is
# scripts/vm/init-ulp-nfs.sh; the report is scripts/ulp/nfs-report.py.

ULP_MODS="nfsd nfsv4 nfs sunrpc rpcrdma crc-t10dif"
ULP_MEM=1536
ULP_TIMEOUT=1500
ULP_CMDLINE="mrkit_ab_secs=${NFS_AB_SECS:-5} mrkit_ab_rounds=${NFS_AB_ROUNDS:-4}"

ulp_build() {
	local d=$1 s=$1/src
	mkdir -p "$s"
	cp "$tree"/net/sunrpc/xprtrdma/*.[ch] "$s/"
	cp "$tree/net/sunrpc/xprtrdma/Makefile" "$s/Kbuild"
	rm "$s/frwr_ops.c" "$s/xprt_rdma.h"
	python3 "$splice" --loc --tree "$tree" --outdir "$s" \
		"$proj/ulp/nfs/frwr_mrkit.c" "$proj/ulp/nfs/xprt_rdma.splice"
	nice -n 10 make -C "$kdir" M="$s" KBUILD_EXTRA_SYMBOLS="$symvers" \
		KCFLAGS="-I$(dirname "$symvers")/include" modules
	cp "$s/rpcrdma.ko" "$d/"
}

ulp_report() {
	python3 "$proj/scripts/ulp/nfs-report.py" "$1" "$out/ulp-nfs-build.log"
}
