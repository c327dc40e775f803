#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Run a kernel ULP converted to mrkit (and its stock twin) in one qemu
# guest (scripts/host/vm-lib.sh: vm_qemu): Debian's stock kernel, TCG,
# -smp 2, -nic none.
#
#   vm-ulp.sh ULP rxe|siw|rxe-pi MODE
#
# (rxe-pi: rxe with integrity MRs, rdma_rxe_pi from vm-rxe-pi.sh's build,
# in place of the stock rxe.)
# Builds mrkit.ko from the checkout, outside it; builds the
# converted ULP with the per-ULP hook, builds siw when asked for,
# assembles an initramfs
# (busybox, rdma tool, the stock modules the ULP names, mrkit.ko and siw.ko
# under /lib/modules/<abi>/extra, the converted modules under /ulp), shares
# Debian's fio (and its library closure) read-only over 9p as /host, boots,
# and prints the guest's "MRKIT-VM" lines (prefix "vm: " dropped).
#
# Per-ULP pieces (only these are needed for a new ULP):
#   scripts/host/ulp-ULP.sh      sourced; may set ULP_MODS (stock modules
#       for the initramfs), ULP_BINS (host binaries, ldd closure added),
#       ULP_MEM (guest MiB), ULP_TIMEOUT (s), ULP_CMDLINE (extra key=val
#       for /init); must set ULP_SRC (the module's upstream directory
#       in the tree) and define ulp_src DIR (its upstream sources and
#       Kbuild into DIR), ulp_make DIR (build it there) and ulp_build DIR
#       (build the converted modules into DIR/*.ko; $tree, $kdir,
#       $symvers, $splice, $proj, $out are set; patches.sh builds each
#       patch of make patches with ulp_src and ulp_make), and may define
#       ulp_report LOG (host-side report from the console log: python3 -m
#       mrkit_report.ULP)
#   scripts/guest/init-ulp-ULP.sh  the guest /init (busybox sh); it sources
#       /base-lib.sh, /ulp-lib.sh and /ULP-lib.sh (the ULP's target and
#       initiator, shared with its two-guest /init); mrkit_transport,
#       mrkit_mode and ULP_CMDLINE's pairs arrive as environment variables
# The guest must print "MRKIT-VM PASS ..." for exit status 0.
# Console log: .check/ulp-ULP-TRANSPORT-MODE.log (-6.12.log on 6.12).
# MRKIT_KERNEL=6.12 runs Debian's 6.12 kernel and the ULP built from
# linux-source-6.12 (splice.py --kernel 6.12: ulp/ULP/6.12/ overrides);
# the report lines end with kernel=6.12.  ULP_DRIVERS=stock,mrkit: mode
# check runs its verify and its fault with each of these drivers, in
# order (default: the ULP's own, mrkit).  ULP_BUILD_ONLY=1 stops after
# the build.
set -euo pipefail

ulp=${1:?usage: vm-ulp.sh ULP rxe|siw|rxe-pi MODE}
transport=${2:-rxe}
mode=${3:-check}
"$(dirname "$0")/deps.sh" need check	# python3, linux-source-6.1 too
. "$(dirname "$0")/vm-lib.sh"
vm_env
hook=$proj/scripts/host/ulp-$ulp.sh
init=$proj/scripts/guest/init-ulp-$ulp.sh
[ -f "$hook" ] && [ -f "$init" ] || { echo "ulp: no $hook or $init"; exit 1; }

ULP_MODS=""
ULP_BINS=""
ULP_MEM=1024
ULP_TIMEOUT=600
ULP_CMDLINE=""
ulp_report() { :; }
# shellcheck source=/dev/null
. "$hook"
[ -z "${ULP_DRIVERS:-}" ] || ULP_CMDLINE="$ULP_CMDLINE mrkit_drivers=$ULP_DRIVERS"
# make bench's A/B: 8 rounds, each driver loaded, connected and measured
# anew (ulp_ab_alternate); twice the ULP's bound.
[ "$mode" != bench ] || ULP_TIMEOUT=$((ULP_TIMEOUT * 2))

start=$(date +%s)

# mrkit.ko, then the converted ULP: cache entries named by their inputs
# (vm-lib.sh: vm_build_mrkit, vm_build_ulp), built once for every guest
# and every checkout.
vm_build_ulp "$ulp"
grep '^splice: ' "$out/ulp-$ulp-build.log" | grep -v sha256 || true
if [ "${ULP_BUILD_ONLY:-0}" = 1 ]; then
	echo "ulp: $ulp built in $ulpdir (ULP_BUILD_ONLY=1: no boot)"
	exit 0
fi
siw=
[ "$transport" = siw ] && siw=$(vm_build_siw)

# The initramfs.  MRKIT_KERNEL=6.12: Debian's 6.12 kernel in the guest,
# the ULP from linux-source-6.12 (vm_build_ulp); the run's files are
# named after it.
tag=$ulp-$transport-$mode
[ "${MRKIT_KERNEL:-6.1}" = 6.1 ] || tag=$tag-$MRKIT_KERNEL
root=$scratch/ulp-$tag
vm_ulp_root "$root" "$mk" "$ulpdir" "$init" "$siw" "$ULP_MODS" "$ULP_BINS"
# rxe-pi: rxe with integrity MRs in /pi, loaded by base-lib.sh's fabric
# in place of the stock rxe.  The entry is vm-rxe-pi.sh's (built with
# mrkit's conformance module, unused here), so that the two build it once.
if [ "$transport" = rxe-pi ]; then
	pi=$(vm_build_rxe_pi "$mk")
	mkdir -p "$root/pi"
	cp "$pi/rdma_rxe_pi.ko" "$root/pi/"
	vm_add_mods "$root" crc-t10dif
fi
vm_mkinitrd "$root" "$root.gz"
fio=$(vm_fio)
echo "ulp: $ulp built and packed in $(( $(date +%s) - start )) s; booting ($transport, $mode)"

log=$out/ulp-$tag.log
boot=$(date +%s)
VM_MEM=$ULP_MEM VM_TIMEOUT=$ULP_TIMEOUT
vm_qemu "$log" "$root.gz" "mrkit_transport=$transport mrkit_mode=$mode $ULP_CMDLINE" \
	-virtfs "local,path=$fio,mount_tag=host,security_model=none,readonly=on"
vm_wait
grep -ao 'MRKIT-VM .*' "$log" | sed 's/^MRKIT-VM //; s/\r$//' || true
rep=0
ulp_report "$log" || rep=1
echo "ulp: $ulp over $transport ($mode): guest ran $(( $(date +%s) - boot )) s"
if [ $rep = 0 ] && grep -aq 'MRKIT-VM PASS' "$log"; then
	exit 0
fi
echo "ulp: $ulp $transport $mode failed; guest console in $log"
tail -n 30 "$log"
exit 1
