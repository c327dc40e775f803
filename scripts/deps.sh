#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Install what a target needs with apt, on a fresh Debian 12 machine.
#   deps.sh build   out-of-tree build against linux-headers-amd64
#   deps.sh check   + linux-source-6.1, sparse and the UML build tools
#   deps.sh vm      + qemu, busybox and the stock kernel image tools
set -euo pipefail

pkgs="make gcc linux-headers-amd64 kmod"
case "${1:-build}" in
check)	pkgs="$pkgs linux-source-6.1 sparse python3 flex bison bc xz-utils perl qemu-system-x86 busybox-static cpio gcc-aarch64-linux-gnu" ;;
vm)	pkgs="$pkgs qemu-system-x86 busybox-static cpio" ;;
esac

missing=
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
