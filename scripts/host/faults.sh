#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make faults: the whole fault schedule on two guests (scripts/host/
# vm-pair.sh ULP TRANSPORT full) for every ULP with a two-guest /init
# (scripts/guest/init-pair-ULP.sh), over rxe and siw, the stock driver and
# mrkit's; then all FAULT2 lines together, and each step's verdict with
# the stock driver beside mrkit's (scripts/mrkit_report/faults.py).  FAULTS_ULPS
# and FAULTS_TRANSPORTS narrow it down; FAULTS_MODE=check runs the short
# schedule.  Then the same on Debian's 6.12 kernel for FAULTS_612_ULPS
# (default nvme iser nfs; srp when named; empty skips it) over
# FAULTS_612_TRANSPORTS (default siw).
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
# Both guests on Debian's 6.12 kernel, the ULPs from linux-source-6.12:
# FAULTS_612_ULPS (default nvme iser nfs) over FAULTS_612_TRANSPORTS (default siw:
# 6.12's rxe completer warns when a lost packet breaks its read-response
# sequence check, COMPST_ERROR with no error status, whatever the ULP),
# the same schedule; its FAULT2 lines end with
# kernel=6.12, and its steps get their own verdict table.  srp runs only
# when named (FAULTS_612_ULPS=srp): ib_srpt sends a zero-length RDMA Write
# the moment siw reports a connection established, and siw's initiator on
# 6.12 often finds it behind the MPA reply and resets the connection, so
# ib_srp's logins and reconnects fail at random.
all612=$proj/.check/faults-$mode-6.12.out
: > "$all612"
for ulp in ${FAULTS_612_ULPS-nvme iser nfs}; do
	for t in ${FAULTS_612_TRANSPORTS:-siw}; do
		echo "=== faults: $ulp over $t ($mode, Debian's 6.12 kernel)" | tee -a "$all612"
		MRKIT_KERNEL=6.12 "$proj/scripts/host/vm-pair.sh" "$ulp" "$t" "$mode" |
			tee -a "$all612" || bad=$((bad + 1))
	done
done
echo "=== faults: the FAULT2 lines ($(( $(date +%s) - start )) s)"
grep '^FAULT2 ' "$all" || true
grep 'pair-report: FAILED' "$all" || true
# Which failures are mrkit's own: each step, stock beside mrkit.
echo "=== faults: each step, the stock driver / mrkit's"
PYTHONPATH="$proj/scripts" python3 -m mrkit_report.faults "$all" || true
if [ -s "$all612" ]; then
	grep '^FAULT2 \|pair-report: FAILED' "$all612" || true
	echo "=== faults on 6.12: each step, the stock driver / mrkit's"
	PYTHONPATH="$proj/scripts" python3 -m mrkit_report.faults "$all612" || true
fi
echo "faults: $bad run(s) failed"
[ $bad = 0 ]
