#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The Debian 12 packages mrkit's targets need.
#   deps.sh install       install every one of them with apt (make deps)
#   deps.sh need TARGET   fail, naming the missing ones, unless TARGET's
#                         packages are installed; TARGET is one of
#     build    make, make modules: the out-of-tree build against Debian's
#              linux-headers-amd64 (the headers of the stock kernel)
#     patches  make patches: build's packages (each patch is built),
#              linux-source-6.1, git, checkpatch's perl
#     vm       the qemu guests: qemu, busybox, the image's tools
#     deb      make dkms-deb: debhelper, dh-dkms (dpkg-buildpackage)
#     check    make check, demo, bench, faults: all of the above, sparse,
#              the UML kernel's build tools, Debian's 6.12 headers and
#              linux-source-6.12, gdb (make bench's instruction counts)
set -euo pipefail

build="make gcc linux-headers-amd64 kmod"
patches="$build linux-source-6.1 xz-utils git perl python3"
vm="$build linux-source-6.1 xz-utils python3 qemu-system-x86 busybox-static cpio
    iproute2 e2fsprogs util-linux dmsetup"
deb="git dpkg-dev debhelper dh-dkms"
check="$build $patches $vm $deb sparse flex bison bc gcc-aarch64-linux-gnu
       linux-headers-6.12-amd64 linux-source-6.12 debootstrap gdb"

missing() {
	local p
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
			echo "$p"
	done
}

case ${1:-} in
install)
	# shellcheck disable=SC2086
	miss=$(missing $check | paste -sd' ')
	if [ -z "$miss" ]; then
		echo "deps: every package is installed"
		exit 0
	fi
	echo "deps: installing $miss"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $miss >/dev/null
	;;
need)
	case ${2:-} in
	build | patches | vm | deb | check) ;;
	*) echo "usage: deps.sh need build|patches|vm|deb|check" >&2; exit 2 ;;
	esac
	# shellcheck disable=SC2086
	miss=$(missing ${!2} | paste -sd' ')
	if [ -n "$miss" ]; then
		echo "deps: missing packages: $miss"
		echo "deps: run make deps"
		exit 1
	fi
	;;
*)
	echo "usage: deps.sh install | deps.sh need build|patches|vm|deb|check" >&2
	exit 2
	;;
esac
