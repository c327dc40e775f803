#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make faults: the whole fault schedule on two guests (scripts/host/
# vm-pair.sh ULP TRANSPORT full) for every ULP with a two-guest /init
# (scripts/guest/init-pair-ULP.sh), over rxe and siw, the stock driver and
# mrkit's; then all FAULT2 lines together, and each step's verdict with
# the stock driver beside mrkit's (scripts/mrkit_report/faults.py).  FAULTS_ULPS
# and FAULTS_TRANSPORTS narrow it down; FAULTS_MODE=check runs the short
# schedule.
set -euo pipefail

proj=$(cd "$(dirname "$0")/../.." && pwd)
"$proj/scripts/host/deps.sh" need check
mode=${FAULTS_MODE:-full}
# nvme-rdma first, then the others (iser, nfs, srp) in name order.
ulps=${FAULTS_ULPS:-$(cd "$proj/scripts/guest" && ls init-pair-*.sh |
	sed 's/^init-pair-//; s/\.sh$//' |
	awk '$0 == "nvme" { print; next } { rest = rest $0 "\n" } END { printf "%s", rest }' |
	paste -sd' ')}
start=$(date +%s)
mkdir -p "$proj/.check"
all=$proj/.check/faults-$mode.out
: > "$all"
bad=0
for ulp in $ulps; do
	for t in ${FAULTS_TRANSPORTS:-rxe siw}; do
		echo "=== faults: $ulp over $t ($mode)" | tee -a "$all"
		"$proj/scripts/host/vm-pair.sh" "$ulp" "$t" "$mode" | tee -a "$all" || bad=$((bad + 1))
	done
done
echo "=== faults: the FAULT2 lines ($(( $(date +%s) - start )) s)"
grep '^FAULT2 ' "$all" || true
grep 'pair-report: FAILED' "$all" || true
# Which failures are mrkit's own: each step, stock beside mrkit.
echo "=== faults: each step, the stock driver / mrkit's"
PYTHONPATH="$proj/scripts" python3 -m mrkit_report.faults "$all" || true
echo "faults: $bad run(s) failed"
[ $bad = 0 ]
