# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash disable=SC2034,SC2154
#
# The iSER hook of scripts/vm/ulp.sh (sourced there; see its header):
# builds ib_iser.ko from Debian's linux-source-6.1
# (drivers/infiniband/ulp/iser/) with its registration code replaced by
# mrkit (ulp/iser/*.splice, applied by scripts/ulp/splice.py), and puts
# open-iscsi (iscsid, iscsiadm, from Debian's package, unpacked, not
# installed) with its library closure into the initramfs.  The guest side
# is scripts/vm/init-ulp-iser.sh; the report is scripts/ulp/iser-report.py.

# Stock modules: the target (LIO + ib_isert, rd_mcp is built into
# target_core_mod), the stock initiator for the A/B, the SCSI disk.
ULP_MODS="target_core_mod iscsi_target_mod ib_isert ib_iser libiscsi
	scsi_transport_iscsi sd_mod"
ULP_MEM=1536
# check: about 2 min per boot; demo and bench run longer under TCG.
ULP_TIMEOUT=${ISER_TIMEOUT:-900}
# Sizes in MiB: the verify run per driver, the fault regions, and the A/B
# jobs (seconds); small for make check.
case $mode in
check) ULP_CMDLINE="iser_verify=32 iser_fault=16 iser_ab_secs=0 iser_faults=${ISER_FAULTS:-portal} iser_drv=${ISER_DRV:-mrkit}" ;;
demo) ULP_CMDLINE="iser_verify=256 iser_verify_other=32 iser_fault=16 iser_ab_secs=0 iser_faults=portal,logout iser_drv=${ISER_DRV:-mrkit}" ;;
bench) ULP_CMDLINE="iser_verify=0 iser_fault=0 iser_ab_secs=${ISER_AB_SECS:-8} iser_faults=" ;;
*) ULP_CMDLINE="iser_verify=32 iser_fault=16 iser_ab_secs=4 iser_faults=logout,portal" ;;
esac

ulp_build() {
	local dir=$1 up=$tree/drivers/infiniband/ulp/iser
	cp "$up"/*.[ch] "$dir/"
	# The converted files overwrite their copies; the splice tool prints
	# each change and proves the rest identical (the build log keeps it).
	python3 "$splice" --tree "$tree" --outdir "$dir" --loc \
		"$proj"/ulp/iser/*.splice || return 1
	cat >"$dir/Kbuild" <<-EOF
		obj-m := ib_iser.o
		ib_iser-y := iser_verbs.o iser_initiator.o iser_memory.o iscsi_iser.o
		ccflags-y += -I$(dirname "$symvers")/include
	EOF
	nice -n 10 make -C "$kdir" M="$dir" KBUILD_EXTRA_SYMBOLS="$symvers" \
		modules || return 1
	[ -f "$dir/ib_iser.ko" ]
}

# open-iscsi 2.1.8 and the two libraries of its own, unpacked once into
# $cache/open-iscsi (sbin/ and lib/ with the whole ldd closure).
iser_open_iscsi() {
	local d=$cache/open-iscsi p l
	if [ ! -x "$d/sbin/iscsid" ]; then
		rm -rf "$d.tmp"
		mkdir -p "$d.tmp/deb" "$d.tmp/root" "$d.tmp/sbin" "$d.tmp/lib"
		(cd "$d.tmp/deb" &&
		 apt-get download open-iscsi libisns0 libopeniscsiusr >/dev/null 2>&1) ||
			{ echo "iser: apt-get download open-iscsi failed" >&2; return 1; }
		for p in "$d.tmp"/deb/*.deb; do
			dpkg-deb -x "$p" "$d.tmp/root"
		done
		l=$(find "$d.tmp/root" -name '*.so*' -printf '%h\n' | sort -u | paste -sd:)
		for p in iscsid iscsiadm; do
			cp "$d.tmp/root/sbin/$p" "$d.tmp/sbin/"
			if LD_LIBRARY_PATH=$l ldd "$d.tmp/sbin/$p" | grep -q 'not found'; then
				LD_LIBRARY_PATH=$l ldd "$d.tmp/sbin/$p" | grep 'not found' >&2
				return 1
			fi
			for f in $(LD_LIBRARY_PATH=$l ldd "$d.tmp/sbin/$p" | grep -o '/[^ ]*'); do
				cp -L "$f" "$d.tmp/lib/"
			done
		done
		rm -rf "$d.tmp/deb" "$d.tmp/root" "$d"
		mv "$d.tmp" "$d"
	fi
	echo "$d"
}

# open-iscsi goes into the initramfs tree.  ulp.sh has no hook for files
# beyond ULP_BINS (host binaries; open-iscsi is not installed on the host),
# so vm_add_bin, which it calls once with the tree, is wrapped here.
ulp_root() {
	local root=$1 d
	d=$(iser_open_iscsi) || return 1
	mkdir -p "$root/usr/bin" "$root/lib/x86_64-linux-gnu" "$root/lib64"
	cp "$d"/sbin/* "$root/usr/bin/"
	cp "$d"/lib/ld-linux-x86-64.so.2 "$root/lib64/"
	cp "$d"/lib/*.so* "$root/lib/x86_64-linux-gnu/"
}

if ! declare -F iser_vm_add_bin >/dev/null; then
	eval "$(declare -f vm_add_bin | sed '1s/^vm_add_bin /iser_vm_add_bin /')"
	vm_add_bin() { iser_vm_add_bin "$@" && ulp_root "$1"; }
fi

# VERIFY / FAULT / AB / LOC lines from the console log and the build log.
ulp_report() {
	python3 "$proj/scripts/ulp/iser-report.py" --transport "$transport" \
		--build-log "$out/ulp-$ulp-build.log" "$1"
}
