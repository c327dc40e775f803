# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
# The nvme-rdma hook of scripts/host/vm-ulp.sh and vm-pair.sh: builds the
# kernel's NVMe/RDMA host driver (drivers/nvme/host/rdma.c of
# linux-source-6.1) with its memory registration replaced by mrkit (our
# code: ulp/nvme/rdma.c.splice, applied by scripts/host/splice.py),
# against Debian's headers, linked to the stock nvme-core and nvme-fabrics
# and to mrkit.  MRKIT_KERNEL=6.12: from linux-source-6.12, with
# ulp/nvme/6.12/rdma.c.splice (splice.py --kernel 6.12).  The guest side
# is scripts/guest/init-ulp-nvme.sh; the report is
# scripts/mrkit_report/nvme.py.

ULP_MODS="nvmet nvmet-rdma null_blk nvme-fabrics nvme-core nvme-rdma"
# mode pi (over rxe-pi): a namespace on a scsi_debug disk with DIF and DIX
# (6.12's block layer has the T10-PI code built in: no t10-pi module).
[ "$mode" != pi ] || ULP_MODS="$ULP_MODS scsi_debug sd_mod"
[ "$mode" != pi ] || [ "${MRKIT_KERNEL:-6.1}" != 6.1 ] || ULP_MODS="$ULP_MODS t10-pi"
ULP_MEM=1536
ULP_TIMEOUT=900
ULP_CMDLINE="mrkit_ab_secs=${NVME_AB_SECS:-3} mrkit_ab_rounds=${NVME_AB_ROUNDS:-8}"
# mode pi: MiB per fio job on the namespace with T10-PI (two jobs).
ULP_CMDLINE="$ULP_CMDLINE nvme_pi_mib=${NVME_PI_MIB:-8}"

# The module's upstream directory in the tree.
ULP_SRC=drivers/nvme/host

# ulp_src DIR: the upstream sources nvme-rdma.ko is built from, and its
# Kbuild.
ulp_src() {
	cp "$tree/$ULP_SRC"/{rdma.c,nvme.h,fabrics.h} "$1/"
	printf 'obj-m := nvme-rdma.o\nnvme-rdma-y := rdma.o\nccflags-y += -I%s\n' \
		"$(dirname "$symvers")/include" > "$1/Kbuild"
}

# ulp_make DIR: build it there.
ulp_make() {
	nice -n 10 make -C "$kdir" M="$1" KBUILD_EXTRA_SYMBOLS="$symvers" W=1 modules
}

ulp_build() {
	local d=$1 s=$1/src
	mkdir -p "$s"
	ulp_src "$s"
	python3 "$splice" --loc --tree "$tree" "${splice_args[@]}" --outdir "$s" \
		"$proj"/ulp/nvme/*.splice || return 1
	ulp_make "$s"
	cp "$s/nvme-rdma.ko" "$d/"
}

ulp_report() {
	vm_report nvme "$1" "$out/ulp-nvme-build.log" "$mode"
}
