# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash disable=SC2034,SC2154
#
# The iSER hook of scripts/host/vm-ulp.sh and vm-pair.sh (see vm-ulp.sh):
# builds ib_iser.ko from Debian's linux-source-6.1
# (drivers/infiniband/ulp/iser/) with its registration code replaced by
# mrkit (ulp/iser/*.splice, applied by scripts/host/splice.py), and puts
# open-iscsi (iscsid, iscsiadm, from Debian's package, unpacked, not
# installed) with its library closure into the initramfs.  The guest side
# is scripts/guest/init-ulp-iser.sh; the report is
# scripts/mrkit_report/iser.py.

# Stock modules: the target (LIO + ib_isert, rd_mcp is built into
# target_core_mod), the stock initiator for the A/B, the SCSI disk.
ULP_MODS="target_core_mod iscsi_target_mod ib_isert ib_iser libiscsi
	scsi_transport_iscsi sd_mod"
# mode pi (over rxe-pi): the block layer's T10-PI profiles for the disk
# (built into 6.12's block layer: no module).
[ "$mode" != pi ] || [ "${MRKIT_KERNEL:-6.1}" != 6.1 ] || ULP_MODS="$ULP_MODS t10-pi"
ULP_MEM=1536
# check: about 2 min per boot; demo and bench run longer under TCG.
ULP_TIMEOUT=${ISER_TIMEOUT:-900}
# Sizes in MiB: the verify run per driver, the fault regions, and the A/B
# jobs (seconds); small for make check.  Mode pi: the region, in MiB, of
# the verify run per driver on the LUN with T10-PI.
# Over rxe also linkdel: the RDMA link deleted under load, so that
# RDMA/CM's DEVICE_REMOVAL frees the connection while tasks still hold
# registrations (the deletion returns only once ib_iser let go).
linkdel=
[ "$transport" != rxe ] || linkdel=,linkdel
case $mode in
check) ULP_CMDLINE="iser_verify=32 iser_fault=16 iser_ab_secs=0 iser_faults=${ISER_FAULTS:-portal$linkdel} iser_drv=${ISER_DRV:-mrkit}" ;;
demo) ULP_CMDLINE="iser_verify=256 iser_verify_other=32 iser_fault=16 iser_ab_secs=0 iser_faults=portal,logout$linkdel iser_drv=${ISER_DRV:-mrkit}" ;;
pi) ULP_CMDLINE="iser_pi_mib=${ISER_PI_MIB:-32}" ;;
bench) ULP_CMDLINE="iser_verify=0 iser_fault=0 iser_ab_secs=${ISER_AB_SECS:-4} iser_ab_rounds=${ISER_AB_ROUNDS:-6} iser_faults=" ;;
*) ULP_CMDLINE="iser_verify=32 iser_fault=16 iser_ab_secs=4 iser_faults=logout,portal" ;;
esac

# The module's upstream directory in the tree.
ULP_SRC=drivers/infiniband/ulp/iser

# ulp_src DIR: the upstream sources ib_iser.ko is built from, and its
# Kbuild.
ulp_src() {
	cp "$tree/$ULP_SRC"/*.[ch] "$1/"
	cat >"$1/Kbuild" <<-EOF
		obj-m := ib_iser.o
		ib_iser-y := iser_verbs.o iser_initiator.o iser_memory.o iscsi_iser.o
		ccflags-y += -I$(dirname "$symvers")/include
	EOF
}

# ulp_make DIR: build it there.
ulp_make() {
	nice -n 10 make -C "$kdir" M="$1" KBUILD_EXTRA_SYMBOLS="$symvers" modules
}

ulp_build() {
	local dir=$1
	ulp_src "$dir"
	# The converted files overwrite their copies; the splice tool prints
	# each change and proves the rest identical (the build log keeps it).
	python3 "$splice" --tree "$tree" "${splice_args[@]}" --outdir "$dir" --loc \
		"$proj"/ulp/iser/*.splice || return 1
	ulp_make "$dir" || return 1
	[ -f "$dir/ib_iser.ko" ]
}

# open-iscsi (iscsid, iscsiadm) with its library closure, unpacked from
# Debian's packages (scripts/host/vm-lib.sh's vm_debs), into the initramfs
# (/usr/bin).
ulp_root() {
	local d
	d=$(vm_debs open-iscsi sbin/iscsid sbin/iscsiadm) || return 1
	vm_add_debs "$1" "$d"
}
vm_root_hook ulp_root

# VERIFY / FAULT / AB / PI / PIERR / LOC lines from the console log and
# the build log.
ulp_report() {
	vm_report iser --transport "$transport" --mode "$mode" \
		--build-log "$out/ulp-$ulp-build.log" "$1"
}
