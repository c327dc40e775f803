#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Boot Debian's own kernel (the linux-image matching the linux-headers
# mrkit.ko is built against) under qemu (TCG, -nic none: no network
# device reaches the host) with a busybox initramfs, and run a scenario
# inside it.
#   run.sh load     load mrkit.ko into the stock kernel, check its exports
#                   are in the MRKIT namespace, unload it, check dmesg
#   run.sh bench [iters]
#                   W1's contention variant: mrkit_bench_smp on rxe with
#                   get on vCPU 0 and put on vCPU 1 (multi-threaded TCG)
#                   and W3's SMP variant: mrkit_bench_w3_smp, the full
#                   registration cycle on rxe, same CPU and cross CPU
#   run.sh stress   mrkit_stress_smp: the review's two-CPU races (puts
#                   after destroy, growth under contention), booted with
#                   slub_debug=FZPU so a write to freed memory is reported
#   run.sh demo rxe|siw [noinv|plusnoinv|portdown]
#                   the kernel's nvmet-rdma target on a RAM namespace and
#                   the sample NVMe/RDMA initiator on mrkit, over rxe or
#                   siw on a dummy netdev with a guest-only address; with
#                   noinv, Reads do not ask for remote invalidation and
#                   mrkit's local invalidation must take over (plusnoinv:
#                   a second pass so in the same boot); with
#                   portdown, the target's port is removed with I/Os in
#                   flight and everything must be recovered
# Prints the guest's result lines; exits 0 only if the guest says PASS.
set -euo pipefail

scenario=${1:-load}
transport=${2:-rxe}
variant=${3:-}		# noinv: Reads without the invalidate subtype
# proj cache kdir abi vm kmods out, the stock kernel image (vm-lib.sh).
. "$(dirname "$0")/vm-lib.sh"
vm_env

# mrkit.ko (and the samples) against the same ABI, built outside the
# checkout (once per change of mrkit's sources).
mk=$(vm_build_mrkit)

# Debian's kernel has no siw: build it from linux-source-6.1, out of tree.
siw=
if [ "$scenario" = demo ] && [ "$transport" = siw ]; then
	siw=$(vm_build_siw)
fi
ko=$mk/mrkit.ko

# Exports: every mrkit_ symbol in Module.symvers is in the MRKIT namespace.
bad=$(awk '$2 ~ /^mrkit_/ && $5 != "MRKIT"' "$mk/Module.symvers")
nexp=$(awk '$2 ~ /^mrkit_/ && $5 == "MRKIT"' "$mk/Module.symvers" | wc -l)
if [ -n "$bad" ] || [ "$nexp" -lt 20 ]; then
	echo "vm: exports outside the MRKIT namespace (or too few: $nexp):"
	echo "$bad"
	exit 1
fi
echo "vm: $nexp exports, all EXPORT_SYMBOL_NS_GPL(..., MRKIT)"

# The initramfs: busybox, the modules mrkit needs (from the image), mrkit.
tag=$scenario-$transport$variant
root=$vm/root-$tag
rm -rf "$root"
mkdir -p "$root"/{bin,sbin,proc,sys,dev,lib/modules/$abi/extra}
cp /bin/busybox "$root/bin/busybox"
mods="ib_core crc-t10dif crct10dif_generic"
[ "$scenario" = demo ] && mods="$mods rdma_cm configfs nvmet nvmet-rdma null_blk
	dummy rdma_rxe crc32_generic crc32c_generic libcrc32c"
{ [ "$scenario" = bench ] || [ "$scenario" = stress ]; } &&
	mods="$mods dummy rdma_rxe crc32_generic crc32c_generic"
# W3SMP's loopback connection (rdma_cm, in the module).
[ "$scenario" = bench ] && mods="$mods rdma_cm"
# shellcheck disable=SC2086
vm_add_mods "$root" $mods
cp "$ko" "$root/lib/modules/$abi/extra/"
[ "$scenario" = bench ] && cp "$mk/mrkit_bench_smp.ko" "$mk/mrkit_bench_w3_smp.ko" \
	"$root/lib/modules/$abi/extra/"
[ "$scenario" = stress ] && cp "$mk/mrkit_stress_smp.ko" "$root/lib/modules/$abi/extra/"
if [ "$scenario" = demo ] || [ "$scenario" = bench ] || [ "$scenario" = stress ]; then
	[ "$scenario" = demo ] && cp "$mk/mrkit_nvme_demo.ko" "$root/lib/modules/$abi/extra/"
	[ -n "$siw" ] && cp "$siw" "$root/lib/modules/$abi/extra/"
	# The rdma tool (iproute2) and its libraries, to add the rxe/siw link.
	vm_add_bin "$root" /usr/bin/rdma
fi
cp "$proj/scripts/vm/init-$scenario.sh" "$root/init"
cp "$proj/scripts/vm/init-lib.sh" "$root/init-lib.sh"
chmod +x "$root/init"
vm_mkinitrd "$root" "$vm/initrd-$tag.gz"

log=$out/vm-$scenario-$transport$variant.log
accel=tcg
[ "$scenario" = bench ] && accel=tcg,thread=multi && log=$out/vm-bench.log
extra=
[ "$scenario" = stress ] && accel=tcg,thread=multi && log=$out/vm-stress.log &&
	extra="slub_debug=FZPU mrkit_stress_rounds=${STRESS_ROUNDS:-500}"
# bench: one kernel log line per round of paired bursts.
[ "$scenario" = bench ] && extra="log_buf_len=16M"
# bench: W1's and W3's SMP variants, about 2.5 minutes at host load 11.
limit=300
[ "$scenario" = bench ] && limit=600
timeout $limit qemu-system-x86_64 -accel $accel -m 1024 -smp 2 -nographic \
	-no-reboot -nic none -kernel "$vm/kimg/boot/vmlinuz-$abi" \
	-initrd "$vm/initrd-$tag.gz" \
	-append "console=ttyS0 panic=-1 quiet mrkit_transport=$transport mrkit_no_inv=$([ "$variant" = noinv ] && echo 1 || echo 0) mrkit_also_noinv=$([ "$variant" = plusnoinv ] && echo 1 || echo 0) mrkit_fault=$variant mrkit_bench_iters=${BENCH_SMP_ITERS:-100000} $extra" \
	>"$log" 2>&1 || true
# (bench's raw per-round PAIR lines stay in the log, for the report.)
grep -ao 'MRKIT-VM .*' "$log" | grep -v '^MRKIT-VM PAIR ' | sed 's/^MRKIT-VM /vm: /' || true
if grep -aq 'MRKIT-VM PASS' "$log"; then
	exit 0
fi
echo "vm: scenario $scenario failed; guest console in $log"
tail -n 30 "$log"
exit 1
