#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Build mrkit (and its samples) for arm64 with Debian's cross compiler,
# W=1 and sparse: the barriers and orderings the code relies on must hold
# on a weakly ordered CPU, and nothing x86-only may hide in it.  The arm64
# kernel tree is linux-source-6.1 configured with defconfig plus
# InfiniBand, prepared once in the cache (modules_prepare); the module is
# compiled against it (modpost cannot resolve symbols without a full
# vmlinux build, so undefined symbols are not checked here).  Any warning
# fails.
set -euo pipefail

proj=$(cd "$(dirname "$0")/../.." && pwd)
cache=${MRKIT_CACHE:-/var/cache/mrkit}
ver=$(dpkg-query -W -f='${Version}' linux-source-6.1)
tree=$("$proj/scripts/host/prep-tree.sh")
out=$proj/.check
mkdir -p "$out"
command -v aarch64-linux-gnu-gcc >/dev/null ||
	{ echo "cross-arm64: aarch64-linux-gnu-gcc missing (package gcc-aarch64-linux-gnu; run make deps)"; exit 1; }
cross=(ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-)
kobj=$cache/arm64-$ver
(
flock 9
if [ ! -f "$kobj/.mrkit-prepared" ]; then
	# The tree's Kconfig sources the mrkit drop-in: point it at this
	# checkout, under the lock the UML builds take for it.
	# shellcheck source=scripts/host/uml-lock.sh
	. "$proj/scripts/host/uml-lock.sh"
	uml_lock "$tree"
	rm -rf "$kobj"
	mkdir -p "$kobj"
	make -s -C "$tree" O="$kobj" "${cross[@]}" defconfig >"$out/arm64-prep.log" 2>&1
	"$tree/scripts/config" --file "$kobj/.config" -m INFINIBAND \
		-e INFINIBAND_ADDR_TRANS -e INFINIBAND_VIRT_DMA
	make -s -C "$tree" O="$kobj" "${cross[@]}" olddefconfig >>"$out/arm64-prep.log" 2>&1
	make -s -C "$tree" O="$kobj" "${cross[@]}" -j"$(nproc)" modules_prepare \
		>>"$out/arm64-prep.log" 2>&1 || { tail -n 30 "$out/arm64-prep.log"; exit 1; }
	touch "$kobj/.mrkit-prepared"
	uml_unlock
fi
) 9>"$cache/arm64.lock"

# The sources, outside the checkout (the x86 build may run beside it).
src=$out/arm64-src
rm -rf "$src"
mkdir -p "$src"
(cd "$proj" && git ls-files -co --exclude-standard -z | xargs -0 cp --parents -t "$src")
log=$out/arm64-build.log
if ! KBUILD_MODPOST_WARN=1 make -C "$kobj" M="$src" "${cross[@]}" CONFIG_MRKIT=m \
	CONFIG_MRKIT_SAMPLES=m CONFIG_MRKIT_BENCH=m W=1 C=2 -j"$(nproc)" modules >"$log" 2>&1; then
	grep -E 'error' "$log" | head -n 30
	echo "cross-arm64: build FAILED (see $log)"
	exit 1
fi
if grep -E 'warning:' "$log" | grep -v 'undefined!' | grep -v 'Module.symvers'; then
	echo "cross-arm64: warnings: FAILED"
	exit 1
fi
echo "cross-arm64: mrkit.ko and the samples build for arm64 (W=1, sparse): ok"
rm -rf "$src"
