#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The mrkit-dkms package on a clean Debian 12, then its module in a guest.
#  1. a debootstrap'd bookworm (minbase) with Debian's 6.1 headers (the
#     ABI the guests boot) and the 6.12 kernel installed, and the .debs of
#     dkms and the 6.12 headers downloaded but not installed: a cache
#     entry, made once (vm-lib.sh: vm_cached);
#  2. over a copy-on-write overlay of it: apt install ./mrkit-dkms_*.deb
#     (dkms comes with it), which must build and install mrkit.ko for 6.1;
#     then the 6.12 headers installed, which must rebuild it for 6.12
#     through DKMS's kernel hook; dkms status, the header in /usr/src and
#     Module.symvers beside each built module checked;
#  3. the sample ULP (samples/nvme_demo.c) built there as an out-of-tree
#     module against both kernels, from the installed header and
#     KBUILD_EXTRA_SYMBOLS=mrkit's Module.symvers, with no undefined
#     symbol;
#  4. the guest: Debian's 6.1 kernel loads the DKMS-built mrkit.ko and
#     runs that sample against the kernel's NVMe/RDMA target over rxe
#     (vm-samples.sh demo rxe with MRKIT_VM_MK).
# After step 1 apt fetches nothing (--no-download, or a dead proxy).
# Prints one "dkms: ...: ok" line per check; exits 0 only if all pass.
#   dkms-check.sh [DEB]    (default: make dkms-deb's, built first)
#   dkms-check.sh --prepare
#                          step 1 alone (make check runs it beside the
#                          static checks and KUnit: it mostly waits on the
#                          network and the disk)
set -euo pipefail

# proj cache kdir abi kmods out scratch, the stock kernel image (vm-lib.sh).
. "$(dirname "$0")/vm-lib.sh"
vm_env
"$proj/scripts/host/deps.sh" need check
abi12=$("$proj/scripts/host/kdir.sh" 6.12)
abi12=${abi12##*/linux-headers-}
work=$out/dkms
mkdir -p "$work"

# dkms_chroot ROOT OVL CMD...: CMD in the chroot ROOT (clean environment),
# or over a copy-on-write overlay of ROOT in OVL (OVL/upper, ovl, merged;
# OVL/ulp at /ulp) when OVL is set, with /proc and /dev, in a private
# mount and PID namespace: the mounts and every process the chroot
# started end with it.
dkms_chroot() {
	unshare --mount --pid --fork --propagation private bash -euc '
		r=$1 o=$2
		shift 2
		if [ -n "$o" ]; then
			mount -t overlay overlay -o "lowerdir=$r,upperdir=$o/upper,workdir=$o/ovl" "$o/merged"
			r=$o/merged
			mkdir -p "$r/ulp"
			mount --bind "$o/ulp" "$r/ulp"
		fi
		mount -t proc proc "$r/proc"
		mount --rbind /dev "$r/dev"
		exec chroot "$r" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
			DEBIAN_FRONTEND=noninteractive "$@"
		' dkms-chroot "$@"
}

# dkms_make_root DIR: step 1 into DIR/root.
dkms_make_root() {
	local r=$1/root
	debootstrap --variant=minbase bookworm "$r" http://deb.debian.org/debian \
		> "$1/debootstrap.log" 2>&1 ||
		{ tail -n 20 "$1/debootstrap.log" >&2; return 1; }
	# Debian 12 and its security archive (linux-*-6.12.*+deb12), whatever
	# the host's own apt sources are.
	rm -f "$r/etc/apt/sources.list"
	printf 'Types: deb\nURIs: %s\nSuites: %s\nComponents: main\nSigned-By: %s\n\n' \
		http://deb.debian.org/debian "bookworm bookworm-updates" \
		/usr/share/keyrings/debian-archive-keyring.gpg \
		http://deb.debian.org/debian-security bookworm-security \
		/usr/share/keyrings/debian-archive-keyring.gpg \
		> "$r/etc/apt/sources.list.d/debian.sources"
	# The chroot never boots: the 6.12 image's initramfs takes no modules.
	mkdir -p "$r/etc/initramfs-tools/conf.d"
	echo MODULES=list > "$r/etc/initramfs-tools/conf.d/no-modules.conf"
	dkms_chroot "$r" "" sh -c "apt-get update -qq &&
		apt-get install -y -qq --no-install-recommends linux-headers-$abi linux-image-$abi12 &&
		apt-get install -y -qq --download-only --no-install-recommends dkms linux-headers-$abi12" \
		> "$1/apt.log" 2>&1 || { tail -n 20 "$1/apt.log" >&2; return 1; }
}
key=$(echo "bookworm minbase $abi $abi12 $(declare -f dkms_chroot dkms_make_root)" | vm_key)
base=$(vm_cached dkms-root "$key" dkms_make_root)/root
echo "dkms: a clean bookworm with the 6.1 headers and the 6.12 kernel: $base ($SECONDS s)"
[ "${1:-}" != --prepare ] || exit 0
deb=${1:-$("$proj/scripts/host/dkms-deb.sh" "$out/dkms")}
deb=$(realpath "$deb")
ver=$(dpkg-deb -f "$deb" Version)
echo "dkms: $deb"

# Step 2 and 3, in the chroot over an overlay of the base.
rm -rf "$work/upper" "$work/ovl" "$work/merged" "$work/ulp"
mkdir -p "$work/upper" "$work/ovl" "$work/merged" "$work/ulp/mk"
cp "$deb" "$work/ulp/"
cp "$proj/samples/nvme_demo.c" "$work/ulp/"
cat > "$work/ulp/Kbuild" <<'KB'
obj-m += mrkit_nvme_demo.o
mrkit_nvme_demo-y := nvme_demo.o
ccflags-y += -I$(MRKIT_SRC)/include
KB
cat > "$work/ulp/run.sh" <<'SH'
set -eu
ver=$1 abi=$2 abi12=$3
apt="apt-get install -y -q --no-download --no-install-recommends"
t0=$(date +%s)
ok() { echo "dkms: $*: ok ($(($(date +%s) - t0)) s)"; }
built() {	# built KERNEL: installed for KERNEL, Module.symvers beside it
	dkms status -m mrkit -v "$ver" -k "$1" | grep -q ': installed' ||
		{ dkms status; echo "dkms: mrkit not installed for $1"; exit 1; }
	m=/var/lib/dkms/mrkit/kernel-$1-x86_64/module
	[ -s "$m/Module.symvers" ] && grep -q 'mrkit_pool_create.*MRKIT' "$m/Module.symvers" ||
		{ echo "dkms: no Module.symvers with mrkit's exports in $m"; exit 1; }
	f=$(ls /lib/modules/"$1"/updates/dkms/mrkit.ko*)
	ok "mrkit.ko for $1 ($f, vermagic $(modinfo -F vermagic "$f" | cut -d' ' -f1)), Module.symvers in $m"
}
# As a user installs it (apt-get's --no-download refuses a local .deb; a
# proxy that answers nothing keeps apt from fetching instead).
(cd /ulp && apt install -y -q --no-install-recommends -o Acquire::http::Proxy=http://127.0.0.1:9 \
	./mrkit-dkms_*.deb) > /ulp/apt-mrkit.log 2>&1 || { tail -n 30 /ulp/apt-mrkit.log; exit 1; }
ok "apt install ./mrkit-dkms_${ver}_all.deb on a clean bookworm"
built "$abi"
$apt "linux-headers-$abi12" > /ulp/apt-headers12.log 2>&1 ||
	{ tail -n 30 /ulp/apt-headers12.log; exit 1; }
built "$abi12"
ok "6.12 headers installed afterwards: DKMS's hook built mrkit for $abi12"
src=/usr/src/mrkit-$ver
[ -f "$src/include/rdma/mrkit.h" ] && [ -f "$src/dkms.conf" ] ||
	{ echo "dkms: no $src/include/rdma/mrkit.h"; exit 1; }
for k in "$abi" "$abi12"; do
	rm -rf "/ulp/$k"
	mkdir "/ulp/$k"
	cp /ulp/Kbuild /ulp/nvme_demo.c "/ulp/$k/"
	make -C "/lib/modules/$k/build" M="/ulp/$k" MRKIT_SRC="$src" \
		KBUILD_EXTRA_SYMBOLS="/var/lib/dkms/mrkit/kernel-$k-x86_64/module/Module.symvers" \
		modules > "/ulp/$k/build.log" 2>&1 || { cat "/ulp/$k/build.log"; exit 1; }
	if grep -E 'WARNING|undefined' "/ulp/$k/build.log"; then
		echo "dkms: the sample ULP against $k: modpost warnings"
		exit 1
	fi
	ok "the sample ULP built out of tree against $k from $src/include and mrkit's Module.symvers"
done
cp "$(ls /lib/modules/"$abi"/updates/dkms/mrkit.ko*)" /ulp/mk/
cp "/var/lib/dkms/mrkit/kernel-$abi-x86_64/module/Module.symvers" "/ulp/$abi/mrkit_nvme_demo.ko" /ulp/mk/
SH
log=$work/chroot.log
if ! dkms_chroot "$base" "$work" sh /ulp/run.sh "$ver" "$abi" "$abi12" > "$log" 2>&1; then
	cat "$log"
	echo "dkms: the package in the chroot: FAILED (logs in $work)"
	exit 1
fi
grep '^dkms: ' "$log"
echo "dkms: the chroot steps done ($SECONDS s)"
rm -rf "$work/upper" "$work/ovl" "$work/merged"

# Step 4: the DKMS-built mrkit.ko and the out-of-tree sample in a guest.
if MRKIT_VM_MK=$work/ulp/mk "$proj/scripts/host/vm-samples.sh" demo rxe; then
	echo "dkms: Debian's $abi loaded the DKMS-built mrkit.ko and ran the sample over rxe: ok ($SECONDS s)"
else
	echo "dkms: the DKMS-built module in the guest: FAILED"
	exit 1
fi
