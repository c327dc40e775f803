#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make patches: each converted ULP (ulp/ULP) as a git format-patch series
# against Debian's linux-source-6.1, one patch per piece of registration
# code replaced (scripts/host/patches.py, the grouping and messages in
# ulp/ULP/series), written to DIR/ULP/ (DIR: the argument, by default
# out/patches; never tracked by git).  Then checkpatch --strict from the
# 6.1 tree on every patch: any ERROR, WARNING or CHECK fails.
#   patches.sh [DIR]
set -euo pipefail

proj=$(cd "$(dirname "$0")/../.." && pwd)
dir=${1:-$proj/out/patches}
"$proj/scripts/host/deps.sh" need patches
tree=$("$proj/scripts/host/prep-tree.sh")
mkdir -p "$dir"
fail=0
for u in "$proj"/ulp/*/; do
	u=$(basename "$u")
	if ! python3 "$proj/scripts/host/patches.py" --tree "$tree" --out "$dir/$u" "$proj/ulp/$u"; then
		fail=1
		continue
	fi
	if perl "$tree/scripts/checkpatch.pl" --strict --no-tree --terse --show-types \
		"$dir/$u"/*.patch > "$dir/$u.checkpatch" 2>&1 &&
	   ! grep -qE 'ERROR|WARNING|CHECK' "$dir/$u.checkpatch"; then
		echo "patches: $u: checkpatch --strict: ok ($(ls "$dir/$u"/*.patch | wc -l) patches)"
	else
		cat "$dir/$u.checkpatch"
		echo "patches: $u: checkpatch --strict: FAILED"
		fail=1
	fi
done
exit $fail
