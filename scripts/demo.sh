#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make demo: a sample NVMe/RDMA initiator on mrkit against the kernel's
# real nvmet-rdma target, in a qemu guest running Debian's own kernel,
# over rxe (RoCE) and siw (iWARP).  Installs what it needs, builds, boots,
# prints a short report; exits 0 only if every byte verified.
set -uo pipefail

proj=$(cd "$(dirname "$0")/.." && pwd)
"$proj/scripts/deps.sh" check || exit 1
rc=0
for t in rxe siw; do
	echo "=== demo over $t"
	"$proj/scripts/vm/run.sh" demo "$t" | grep -v 'exports, all' || rc=1
done
[ $rc = 0 ] && echo "demo: PASS (rxe and siw)" || echo "demo: FAIL"
exit $rc
