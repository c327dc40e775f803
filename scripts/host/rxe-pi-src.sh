#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# rxe-pi-src.sh OUTDIR TREE [SPLICE-ARGS...]: the sources of rdma_rxe_pi,
# rxe with integrity MRs: TREE's drivers/infiniband/sw/rxe with
# provider/rxe/*.splice applied (scripts/host/splice.py, which prints each
# change and proves the rest identical; SPLICE-ARGS such as --kernel 6.12
# --reference TREE61 go to it), the files it leaves alone copied, and
# provider/rxe/rxe_pi.[ch] added, all into OUTDIR.  Also writes
# OUTDIR/objs, the upstream object list with rxe_pi.o, for the caller's
# Kbuild.  Used by the guests' module build (scripts/host/vm-lib.sh) and
# the KUnit kernel (scripts/host/kunit.sh).
set -euo pipefail

d=${1:?OUTDIR} tree=${2:?TREE}
shift 2
proj=$(cd "$(dirname "$0")/../.." && pwd)
rxe=$tree/drivers/infiniband/sw/rxe
mkdir -p "$d"
python3 "$proj/scripts/host/splice.py" --loc --tree "$tree" "$@" --outdir "$d" \
	"$proj"/provider/rxe/*.splice
for f in "$rxe"/*.[ch]; do
	[ -e "$d/${f##*/}" ] || cp "$f" "$d/"
done
cp "$proj"/provider/rxe/rxe_pi.[ch] "$d/"
# The upstream object list (rdma_rxe-y, up to its blank line).
{ sed -n '/^rdma_rxe-y/,/^$/p' "$rxe/Makefile" | tr -d '\\' |
	sed 's/^rdma_rxe-y *[:+]*= *//' | tr -s ' \t\n' '\n' | grep '\.o$'
  echo rxe_pi.o; } > "$d/objs"
# OUTDIR/ccflags: feature tests, not version tests (an rxe whose
# rxe_register_device() takes the netdev: 6.12's).
if grep -A1 'int rxe_register_device(' "$d/rxe_verbs.h" | grep -q net_device; then
	echo -DRXE_PI_REGISTER_NDEV
else
	echo
fi > "$d/ccflags"
