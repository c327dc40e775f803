#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# DKMS's POST_BUILD (dkms.conf), run in the build directory: keep the
# build's Module.symvers beside the module DKMS keeps for this kernel
# (DIR), where ULPs built out of tree against mrkit find it.
#   dkms-symvers.sh DIR
set -e
[ -s Module.symvers ] || { echo "mrkit: no Module.symvers after the build" >&2; exit 1; }
mkdir -p "$1"
cp Module.symvers "$1/Module.symvers"
