#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# kunit-rxe-pi.sh TREE SERIES: put rdma_rxe_pi (rxe with integrity MRs,
# scripts/host/rxe-pi-src.sh) into TREE's drivers/infiniband/sw/rxe_pi,
# and have drivers/infiniband/sw build it in place of the stock rxe in a
# kernel with CONFIG_MRKIT_KUNIT_RXE_PI (the two bind the same UDP port,
# register the same link type and share their symbols' names: one kernel
# has one of them).  Files that did not change keep their time stamps, so
# the build stays incremental.  Called by scripts/host/kunit.sh under the
# tree's lock; prints the splice tool's lines.
set -euo pipefail

tree=${1:?TREE} series=${2:?SERIES}
proj=$(cd "$(dirname "$0")/../.." && pwd)
dst=$tree/drivers/infiniband/sw/rxe_pi
new=$(mktemp -d)
trap 'rm -rf "$new"' EXIT
args=()
[ "$series" = 6.1 ] ||
	args=(--kernel "$series" --reference "$("$proj/scripts/host/prep-tree.sh" 6.1)")
"$proj/scripts/host/rxe-pi-src.sh" "$new" "$tree" "${args[@]}"
objs=$(tr '\n' ' ' < "$new/objs")
cat > "$new/Makefile" <<MK
# SPDX-License-Identifier: GPL-2.0-only
# Written by mrkit's scripts/host/kunit-rxe-pi.sh: rdma_rxe_pi built in,
# in place of rxe (../Makefile).
obj-y += rdma_rxe_pi.o
rdma_rxe_pi-y := $objs
ccflags-y += $(cat "$new/ccflags")
MK
rm -f "$new/objs" "$new/ccflags"
mkdir -p "$dst"
for f in "$new"/*; do
	cmp -s "$f" "$dst/${f##*/}" || cp "$f" "$dst/"
done
for f in "$dst"/*; do
	[ -e "$new/${f##*/}" ] || rm -f "$f"
done
mk=$tree/drivers/infiniband/sw/Makefile
hook='obj-$(CONFIG_MRKIT_KUNIT_RXE_PI) := $(filter-out rxe/,$(obj-y)) rxe_pi/'
if ! grep -qxF "$hook" "$mk"; then
	sed -i '/rxe_pi\//d' "$mk"
	echo "$hook" >> "$mk"
fi
