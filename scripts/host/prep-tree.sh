#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# prep-tree.sh [SERIES]: prepare a kernel tree for the KUnit runs: unpack
# Debian's linux-source-SERIES (6.1 or 6.12; default $MRKIT_KERNEL, else
# 6.1) into a cache directory outside the clone (keyed by package version;
# /usr/src is only read) and hook mrkit into drivers/infiniband as a
# drop-in would.  Prints the tree's path.  The drop-in directory is pointed at a checkout
# only by scripts/host/uml-lock.sh, under the tree's lock: the tree and its UML
# build directories are shared by every checkout on the machine.
set -euo pipefail

cache=${MRKIT_CACHE:-/var/cache/mrkit}
series=${1:-${MRKIT_KERNEL:-6.1}}
case $series in
6.1 | 6.12) ;;
*) echo "prep-tree.sh: no linux-source for kernel $series (6.1 or 6.12)" >&2; exit 2 ;;
esac
ver=$(dpkg-query -W -f='${Version}' "linux-source-$series")
tree=$cache/src-$ver/linux-source-$series

mkdir -p "$cache"
if [ ! -f "$tree/.mrkit-prepared" ]; then
	# One checkout unpacks, the others wait for it (then find it done).
	exec 9>"$cache/src-$ver.lock"
	flock 9
	if [ ! -f "$tree/.mrkit-prepared" ]; then
		rm -rf "$cache/src-$ver" "$cache/src-$ver.tmp"
		mkdir -p "$cache/src-$ver.tmp"
		tar -C "$cache/src-$ver.tmp" -xJf "/usr/src/linux-source-$series.tar.xz"
		t=$cache/src-$ver.tmp/linux-source-$series
		echo 'source "drivers/infiniband/ulp/mrkit/Kconfig"' >> "$t/drivers/infiniband/Kconfig"
		echo 'obj-$(CONFIG_MRKIT) += mrkit/' >> "$t/drivers/infiniband/ulp/Makefile"
		touch "$t/.mrkit-prepared"
		mv "$cache/src-$ver.tmp" "$cache/src-$ver"
	fi
	exec 9>&-
fi
echo "$tree"
