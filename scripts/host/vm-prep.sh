#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# What the guests of make check share, built and fetched once, one thing
# after the other, before check.sh boots guests side by side:
#   vm-prep.sh ULP...
# Debian's kernel image (vm_env), mrkit.ko and the samples
# (vm_build_mrkit), siw.ko (vm_build_siw), fio and its libraries (vm_fio),
# and each converted ULP (vm_build_ulp, with the ULP's hook).  The runners
# find all of it in the cache (scripts/host/vm-lib.sh: vm_cached).
set -euo pipefail

. "$(dirname "$0")/vm-lib.sh"
vm_env
t0=$(date +%s)
mk=$(vm_build_mrkit)
echo "prep: mrkit.ko and the samples in $mk ($(( $(date +%s) - t0 )) s)"
t0=$(date +%s)
siw=$(vm_build_siw)
echo "prep: $siw ($(( $(date +%s) - t0 )) s)"
t0=$(date +%s)
fio=$(vm_fio)
echo "prep: fio in $fio ($(( $(date +%s) - t0 )) s)"
for ulp in "$@"; do
	t0=$(date +%s)
	# shellcheck source=/dev/null
	(mode=check transport=rxe; . "$proj/scripts/host/ulp-$ulp.sh" && vm_build_ulp "$ulp") > "$out/prep-$ulp.out" 2>&1 ||
		{ cat "$out/prep-$ulp.out"; echo "prep: $ulp: build failed"; exit 1; }
	echo "prep: $ulp ($(( $(date +%s) - t0 )) s)"
done
