#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# rxe with integrity MRs, in one qemu guest (scripts/host/vm-lib.sh:
# vm_qemu; Debian's stock kernel, -nic none):
#
#   vm-rxe-pi.sh [CASES]
#
# Builds rdma_rxe_pi.ko from linux-source-6.1's drivers/infiniband/sw/rxe
# with provider/rxe/*.splice applied (scripts/host/splice.py) and
# provider/rxe/rxe_pi.c added, and mrkit_sigconf.ko (provider/sigconf.c,
# against mrkit.ko), both against Debian's headers with W=1 and sparse,
# into a cache entry (vm/rxe-pi/KEY); any warning fails the build.  The modules go to the initramfs's /pi, outside
# /lib/modules: nothing but the guest's /init (scripts/guest/
# init-rxe-pi.sh) loads them, and only in place of the stock rxe.  The
# guest runs CASES (400) random signature cases on the verbs and prints
# "SIGCONF rxe-pi cases=N failed=N", then CASES / 4 through mrkit's
# integrity pool ("SIGMR rxe-pi ios=N reported=N failed=N"); exit status
# 0 only if it says PASS.
# Console log: .check/vm-rxe-pi.log.
set -euo pipefail

cases=${1:-400}
"$(dirname "$0")/deps.sh" need check	# python3, linux-source-6.1 too
. "$(dirname "$0")/vm-lib.sh"
vm_env

# vm_make_rxe_pi DIR TREE MK: the spliced rxe and the conformance module
# (against mrkit's build MK).
vm_make_rxe_pi() {
	local d=$1 rxe=$2/drivers/infiniband/sw/rxe f
	mkdir -p "$d/rxe" "$d/conf"
	{
		python3 "$proj/scripts/host/splice.py" --loc --tree "$2" \
			--outdir "$d/rxe" "$proj"/provider/rxe/*.splice
		for f in "$rxe"/*.[ch]; do
			[ -e "$d/rxe/${f##*/}" ] || cp "$f" "$d/rxe/"
		done
		cp "$proj"/provider/rxe/rxe_pi.[ch] "$d/rxe/"
		# The upstream object list, under the module's own name.
		{ echo 'obj-m := rdma_rxe_pi.o'
		  sed -n '/^rdma_rxe-y/,/^$/p' "$rxe/Makefile" |
			sed 's/^rdma_rxe-y/rdma_rxe_pi-y/'
		  echo 'rdma_rxe_pi-y += rxe_pi.o'; } > "$d/rxe/Kbuild"
		cp "$proj/provider/sigconf.c" "$d/conf/"
		printf 'obj-m := mrkit_sigconf.o\nmrkit_sigconf-y := sigconf.o\nccflags-y += -I%s/include\n' \
			"$3" > "$d/conf/Kbuild"
		nice -n 10 make -C "$kdir" M="$d/rxe" W=1 C=2 modules &&
		nice -n 10 make -C "$kdir" M="$d/conf" \
			KBUILD_EXTRA_SYMBOLS="$3/Module.symvers" W=1 C=2 modules
	} > "$d/build.log" 2>&1 || { cat "$d/build.log" >&2; return 1; }
	if grep -E 'warning:|error:' "$d/build.log" >&2; then
		return 1
	fi
	cp "$d/rxe/rdma_rxe_pi.ko" "$d/conf/mrkit_sigconf.ko" "$d/"
}

tree=$("$proj/scripts/host/prep-tree.sh")
mk=$(vm_build_mrkit)
key=$( { echo "$kdir $tree ${mk##*/}"
	 cat "$tree"/drivers/infiniband/sw/rxe/*.[ch] "$tree/drivers/infiniband/sw/rxe/Makefile"
	 find "$proj/provider" "$proj/scripts/host/splice.py" -type f -print0 |
		sort -z | xargs -0 sha256sum | sed "s|  $proj/|  |"; } | vm_key)
pi=$(vm_cached rxe-pi "$key" vm_make_rxe_pi "$tree" "$mk")
grep '^splice: ' "$pi/build.log" | grep -v sha256 || true

root=$scratch/rxe-pi
vm_root "$root" "$mk" "$proj/scripts/guest/init-rxe-pi.sh" "" \
	"ib_core ip6_udp_tunnel udp_tunnel dummy rdma_cm rdma_ucm configfs
	 crc32_generic crc32c_generic crc-t10dif crct10dif_generic t10-pi"
mkdir -p "$root/pi"
cp "$pi/rdma_rxe_pi.ko" "$pi/mrkit_sigconf.ko" "$root/pi/"
vm_add_bin "$root" /usr/bin/rdma
vm_mkinitrd "$root" "$root.gz"

log=$out/vm-rxe-pi.log
start=$(date +%s)
VM_TIMEOUT=600
vm_qemu "$log" "$root.gz" "mrkit_sigconf_cases=$cases mrkit_sigmr_ios=$(( cases / 4 ))"
vm_wait
grep -ao 'MRKIT-VM .*' "$log" | sed 's/^MRKIT-VM //; s/\r$//' || true
echo "rxe-pi: guest ran $(( $(date +%s) - start )) s"
if grep -aq 'MRKIT-VM PASS' "$log"; then
	exit 0
fi
echo "rxe-pi: failed; guest console in $log"
tail -n 30 "$log"
exit 1
