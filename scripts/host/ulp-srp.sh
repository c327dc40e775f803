# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash disable=SC2034,SC2154
#
# The SRP hook of scripts/host/vm-ulp.sh and vm-pair.sh (see vm-ulp.sh):
# builds ib_srp.ko from Debian's linux-source-6.1
# (drivers/infiniband/ulp/srp/) with its registration code replaced by
# mrkit (ulp/srp/*.splice, applied by scripts/host/splice.py), with W=1,
# against Debian's headers, linked to the stock scsi_transport_srp and to
# mrkit.  The guest side is scripts/guest/init-ulp-srp.sh (the target:
# scripts/guest/srp-lib.sh); the report is scripts/mrkit_report/srp.py.

# Stock modules: the target (LIO + ib_srpt; rd_mcp is built into
# target_core_mod), the stock initiator for the comparison, the SCSI disk;
# for the abort fault a LUN that can hold commands: iblock on a
# device-mapper device (dmsetup) over a RAM disk (null_blk).
ULP_MODS="target_core_mod ib_srpt ib_srp scsi_transport_srp sd_mod target_core_iblock dm_mod null_blk"
ULP_BINS="/usr/sbin/dmsetup"
ULP_MEM=1536
ULP_TIMEOUT=${SRP_TIMEOUT:-900}
# Sizes in MiB: the verify runs (large scattered blocks, and 4 KiB random)
# per driver, the fault region; the faults (check: the first only).
case $mode in
check) ULP_CMDLINE="srp_verify=${SRP_VERIFY:-24} srp_verify4k=${SRP_VERIFY4K:-4} srp_fault=${SRP_FAULT:-16} srp_faults=${SRP_FAULTS:-tpg}" ;;
demo) ULP_CMDLINE="srp_verify=${SRP_VERIFY:-192} srp_verify4k=${SRP_VERIFY4K:-64} srp_fault=${SRP_FAULT:-32} srp_faults=${SRP_FAULTS:-tpg,rport,link,abort}" ;;
*) ULP_CMDLINE="mrkit_ab_secs=${SRP_AB_SECS:-3} mrkit_ab_rounds=${SRP_AB_ROUNDS:-8}" ;;
esac
# Over siw the guest boots without IPv6: ib_srpt listens on IPv6's
# wildcard address when it can, and siw hands such a listener IPv4
# connections with v4-mapped addresses, which RDMA/CM refuses before
# ib_srpt sees the login; without IPv6 ib_srpt listens on IPv4's.  (The
# two-guest runs boot so over both transports: init-pair-srp.sh.)  In one
# guest over siw the RDMA link's deletion can wait for good for one of
# ib_srpt's channels after a fault, and the abort fault's LUN reset is
# answered too late for ib_srp (Documentation/mrkit-testing.rst), with
# Debian's ib_srp as with mrkit's: make demo runs SRP over siw with the
# tpg and rport faults.
[ "$transport" != siw ] || ULP_CMDLINE="$ULP_CMDLINE ipv6.disable=1"

# The module's upstream directory in the tree.
ULP_SRC=drivers/infiniband/ulp/srp

# ulp_src DIR: the upstream sources ib_srp.ko is built from, and its
# Kbuild.
ulp_src() {
	cp "$tree/$ULP_SRC"/*.[ch] "$1/"
	printf 'obj-m := ib_srp.o\nccflags-y += -I%s\n' \
		"$(dirname "$symvers")/include" > "$1/Kbuild"
}

# ulp_make DIR: build it there (W=1).
ulp_make() {
	nice -n 10 make -C "$kdir" M="$1" KBUILD_EXTRA_SYMBOLS="$symvers" W=1 \
		modules
}

ulp_build() {
	local d=$1 s=$1/src
	mkdir -p "$s"
	ulp_src "$s"
	# The converted files overwrite their copies; the splice tool prints
	# each change and proves the rest identical (the build log keeps it).
	python3 "$splice" --loc --tree "$tree" "${splice_args[@]}" --outdir "$s" \
		"$proj"/ulp/srp/*.splice || return 1
	ulp_make "$s" || return 1
	cp "$s/ib_srp.ko" "$d/"
}

# VERIFY / FAULT / MRS / AB / LOC lines from the console log and the build
# log.
ulp_report() {
	vm_report srp --transport "$transport" --mode "$mode" \
		--build-log "$out/ulp-srp-build.log" "$1"
}
