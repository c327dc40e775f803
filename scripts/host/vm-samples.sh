#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# One guest for mrkit.ko and its sample modules (samples/): Debian's own
# kernel (the linux-image matching the linux-headers mrkit.ko is built
# against) under qemu (scripts/host/vm-lib.sh: vm_qemu; -nic none: no
# network device reaches the host) with a busybox initramfs, and a
# scenario inside it (its /init: scripts/guest/init-SCENARIO.sh).
#   vm-samples.sh load
#                   load mrkit.ko into the stock kernel, check its exports
#                   are in the MRKIT namespace, unload it, check dmesg
#   vm-samples.sh bench
#                   W1's contention variant: mrkit_bench_smp on rxe with
#                   get on vCPU 0 and put on vCPU 1 (multi-threaded TCG)
#                   and W3's SMP variant: mrkit_bench_w3_smp, the full
#                   registration cycle on rxe, same CPU and cross CPU;
#                   their count from BENCH_SMP_ITERS (default 100000)
#   vm-samples.sh stress
#                   mrkit_stress_smp: the two-CPU races (puts
#                   during destroy, growth under contention, a sleeper
#                   in mrkit_pool_wait() across a destroy), booted with
#                   slub_debug=FZPU so a write to freed memory is reported
#   vm-samples.sh demo rxe|siw [noinv|plusnoinv|portdown]
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
# proj cache kdir abi kmods out scratch, the stock kernel image (vm-lib.sh).
. "$(dirname "$0")/vm-lib.sh"
vm_env

# mrkit.ko (and the samples) against the same ABI, built outside the
# checkout (once per change of mrkit's sources); MRKIT_VM_MK: a directory
# with mrkit.ko, its Module.symvers and the scenario's sample modules
# built elsewhere (scripts/host/dkms-check.sh: by DKMS).
mk=${MRKIT_VM_MK:-$(vm_build_mrkit)}

# Debian's kernel has no siw: build it from linux-source-6.1, out of tree.
siw=
if [ "$scenario" = demo ] && [ "$transport" = siw ]; then
	siw=$(vm_build_siw)
fi
ko=$mk/mrkit.ko

# Exports: every mrkit_ symbol in Module.symvers is GPL-only and in the
# MRKIT namespace.
bad=$(awk '$2 ~ /^mrkit_/ && ($4 != "EXPORT_SYMBOL_GPL" || $5 != "MRKIT")' "$mk/Module.symvers")
nexp=$(awk '$2 ~ /^mrkit_/ && $4 == "EXPORT_SYMBOL_GPL" && $5 == "MRKIT"' "$mk/Module.symvers" | wc -l)
if [ -n "$bad" ] || [ "$nexp" -lt 20 ]; then
	echo "vm: exports not GPL-only in the MRKIT namespace (or too few: $nexp):"
	echo "$bad"
	exit 1
fi
echo "vm: $nexp exports, all EXPORT_SYMBOL_NS_GPL(..., MRKIT)"

# The initramfs: busybox, the modules the scenario needs (from the
# image), mrkit.ko and the scenario's sample module, the guest libraries.
tag=$scenario-$transport$variant
# MRKIT_KERNEL=6.12: Debian's 6.12 kernel in the guest, mrkit.ko against
# its headers (vm_env); the scenario's files are named after it.
[ "${MRKIT_KERNEL:-6.1}" = 6.1 ] || tag=$tag-$MRKIT_KERNEL
root=$scratch/samples-$tag
mods="ib_core crc-t10dif crct10dif_generic"
[ "$scenario" = load ] ||
	mods="$mods dummy rdma_rxe rdma_cm rdma_ucm configfs crc32_generic crc32c_generic libcrc32c"
[ "$scenario" = demo ] && mods="$mods nvmet nvmet-rdma null_blk"
vm_root "$root" "$mk" "$proj/scripts/guest/init-$scenario.sh" "$siw" "$mods"
case $scenario in
bench) cp "$mk/mrkit_bench_smp.ko" "$mk/mrkit_bench_w3_smp.ko" "$root/lib/modules/$abi/extra/" ;;
stress) cp "$mk/mrkit_stress_smp.ko" "$root/lib/modules/$abi/extra/" ;;
demo) cp "$mk/mrkit_nvme_demo.ko" "$root/lib/modules/$abi/extra/" ;;
esac
# The rdma tool (iproute2) and its libraries, to add the rxe/siw link.
[ "$scenario" = load ] || vm_add_bin "$root" /usr/bin/rdma
vm_mkinitrd "$root" "$root.gz"

log=$out/vm-$tag.log
extra=
# The SMP samples on two vCPUs for real (multi-threaded TCG).
case $scenario in
bench)
	VM_ACCEL=tcg,thread=multi log=$out/vm-bench.log
	# One kernel log line per round of paired bursts.
	extra="log_buf_len=16M"
	;;
stress)
	VM_ACCEL=tcg,thread=multi log=$out/vm-stress.log
	extra="slub_debug=FZPU mrkit_stress_rounds=${STRESS_ROUNDS:-500}"
	;;
esac
# bench: W1's and W3's SMP variants, about 2.5 minutes at host load 11.
VM_TIMEOUT=300
[ "$scenario" = bench ] && VM_TIMEOUT=600
# Not niced: the benchmark's figures (and its peers') keep their CPU share.
VM_NICE=0
vm_qemu "$log" "$root.gz" "mrkit_transport=$transport mrkit_no_inv=$([ "$variant" = noinv ] && echo 1 || echo 0) mrkit_also_noinv=$([ "$variant" = plusnoinv ] && echo 1 || echo 0) mrkit_fault=$variant mrkit_bench_iters=${BENCH_SMP_ITERS:-100000} $extra"
vm_wait
# (bench's raw per-round PAIR lines stay in the log, for the report.)
grep -ao 'MRKIT-VM .*' "$log" | grep -v '^MRKIT-VM PAIR ' | sed 's/^MRKIT-VM /vm: /' || true
# The demo's guest says which kernel it booted: the one mrkit.ko was built for.
if [ "$scenario" = demo ] &&
   ! grep -a '^MRKIT-VM kernel ' "$log" | tr -d '\r' | grep -qxF "MRKIT-VM kernel $abi"; then
	echo "vm: the guest did not boot $abi"
	exit 1
fi
if grep -aq 'MRKIT-VM PASS' "$log"; then
	exit 0
fi
echo "vm: scenario $scenario failed; guest console in $log"
tail -n 30 "$log"
exit 1
