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
# 0 only if it says PASS.  MRKIT_KERNEL=6.12: Debian's 6.12 kernel, rxe
# from linux-source-6.12 (splice.py --kernel 6.12: provider/rxe/6.12/
# overrides); those two lines end with kernel=6.12.
# Console log: .check/vm-rxe-pi.log.
set -euo pipefail

cases=${1:-400}
"$(dirname "$0")/deps.sh" need check	# python3, linux-source-6.1 too
. "$(dirname "$0")/vm-lib.sh"
vm_env

# rdma_rxe_pi.ko and mrkit_sigconf.ko (vm-lib.sh: vm_build_rxe_pi).
mk=$(vm_build_mrkit)
pi=$(vm_build_rxe_pi "$mk")
grep '^splice: ' "$pi/build.log" | grep -v sha256 || true

root=$scratch/rxe-pi
# t10-pi: a module on 6.1 only (6.12's block layer has it built in).
pimod=t10-pi
[ "${MRKIT_KERNEL:-6.1}" = 6.1 ] || pimod=
vm_root "$root" "$mk" "$proj/scripts/guest/init-rxe-pi.sh" "" \
	"ib_core ip6_udp_tunnel udp_tunnel dummy rdma_cm rdma_ucm configfs
	 crc32_generic crc32c_generic crc-t10dif crct10dif_generic $pimod"
mkdir -p "$root/pi"
cp "$pi/rdma_rxe_pi.ko" "$pi/mrkit_sigconf.ko" "$root/pi/"
vm_add_bin "$root" /usr/bin/rdma
vm_mkinitrd "$root" "$root.gz"

log=$out/vm-rxe-pi.log
start=$(date +%s)
VM_TIMEOUT=600
vm_qemu "$log" "$root.gz" "mrkit_sigconf_cases=$cases mrkit_sigmr_ios=$(( cases / 4 ))"
vm_wait
# The SIGCONF and SIGMR lines end with kernel=SERIES on another kernel
# than 6.1 (the guest's "kernel RELEASE" line), as the ULPs' lines do.
k=$(grep -ao 'MRKIT-VM kernel [0-9]*\.[0-9]*' "$log" | head -n 1 |
	sed 's/.* //; /^6\.1$/d; s/^/ kernel=/')
grep -ao 'MRKIT-VM .*' "$log" | sed 's/^MRKIT-VM //; s/\r$//; /^kernel /d' |
	sed "/^SIGCONF .* failed=[0-9]*$/s/\$/$k/; /^SIGMR .* failed=[0-9]*$/s/\$/$k/" || true
echo "rxe-pi: guest ran $(( $(date +%s) - start )) s"
if grep -aq 'MRKIT-VM PASS' "$log"; then
	exit 0
fi
echo "rxe-pi: failed; guest console in $log"
tail -n 30 "$log"
exit 1
