#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make patches: each converted ULP (ulp/ULP) as a git format-patch series
# against Debian's linux-source-6.1 (scripts/host/patches.py, the grouping
# and messages in ulp/ULP/series), written to DIR/ULP/ (DIR: the
# argument, by default out/patches; never tracked by git).  Then
# checkpatch --strict from the 6.1 tree on every patch: any ERROR, WARNING
# or CHECK fails.  Then each series must be bisectable: the ULP's module,
# from its upstream sources (the ULP's hook, scripts/host/ulp-ULP.sh:
# ulp_src), is built with the hook's ulp_make against Debian's 6.1
# headers and mrkit's build (scripts/host/vm-lib.sh: vm_build_mrkit, the
# cache entry the guests use) after each patch, applied one at a time
# with git apply; a patch that does not apply, or after which the build
# fails or warns, fails, named by its number and subject.  The build
# logs: DIR/ULP.build-N.log.
#   patches.sh [DIR]
set -euo pipefail

proj=$(cd "$(dirname "$0")/../.." && pwd)
dir=${1:-$proj/out/patches}
"$proj/scripts/host/deps.sh" need patches
tree=$("$proj/scripts/host/prep-tree.sh")
# shellcheck source=scripts/host/vm-lib.sh
. "$proj/scripts/host/vm-lib.sh"
vm_env_build
mk=$(vm_build_mrkit) || { echo "patches: mrkit.ko and its samples do not build: FAILED"; exit 1; }
# shellcheck disable=SC2034  # the hooks' ulp_src and ulp_make read it
symvers=$mk/Module.symvers
work=$(mktemp -d "${TMPDIR:-/tmp}/mrkit-patches.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$dir"

# count N NOUN: "N NOUN", or "N NOUNes" unless N is 1.
count() {
	if [ "$1" = 1 ]; then echo "1 $2"; else echo "$1 $2es"; fi
}

# subject PATCH: the patch's subject, without its [PATCH n/m] prefix.
subject() {
	awk '/^Subject: / { s = $0
		while ((getline l) > 0 && l ~ /^[ \t]/) s = s l
		sub(/^Subject: \[PATCH[^]]*\] /, "", s); print s; exit }' "$1"
}

# builds ULP: the ULP's module built after each patch of DIR/ULP/, from
# the upstream sources with the patches applied in order (an incremental
# build after each).  Prints one line; fails on the first patch that
# does not apply or build, printing the errors and warnings.
builds() {
	local u=$1 w=$work/$1 t0=$SECONDS n=0 p log s why
	local ps=("$dir/$u"/*.patch)
	rm -f "$dir/$u".build-*.log
	(
	# The hook reads mode and transport when sourced (make check's here);
	# a subshell keeps its names apart.
	# shellcheck disable=SC2034
	mode=check transport=rxe
	# shellcheck source=/dev/null
	. "$proj/scripts/host/ulp-$u.sh"
	s=$w/${ULP_SRC:?ulp-$u.sh sets no ULP_SRC}
	mkdir -p "$s"
	if ! git -C "$w" init -q || ! ulp_src "$s"; then
		echo "patches: $u: no upstream sources in $tree/$ULP_SRC: FAILED"
		exit 1
	fi
	for p in "${ps[@]}"; do
		n=$((n + 1))
		log=$dir/$u.build-$n.log
		if ! git -C "$w" apply "$p" > "$log" 2>&1; then
			cat "$log"
			echo "patches: $u: patch $n/${#ps[@]} ($(subject "$p")) does not apply: FAILED"
			exit 1
		fi
		why=
		if ! MAKEFLAGS="-k -j$(nproc)" ulp_make "$s" >> "$log" 2>&1; then
			why="does not build"
		elif grep -qE 'warning:|WARNING:' "$log"; then
			why="builds with warnings"
		fi
		if [ -n "$why" ]; then
			grep -E 'warning:|error:|WARNING:|ERROR:' "$log" | sed "s|$w/||" | head -n 30
			echo "patches: $u: patch $n/${#ps[@]} ($(subject "$p")) $why" \
				"(log: $log): FAILED"
			exit 1
		fi
	done
	echo "patches: $u: builds after each of $(count ${#ps[@]} patch): ok ($((SECONDS - t0)) s)"
	)
}

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
		ps=("$dir/$u"/*.patch)
		echo "patches: $u: checkpatch --strict: ok ($(count ${#ps[@]} patch))"
	else
		cat "$dir/$u.checkpatch"
		echo "patches: $u: checkpatch --strict: FAILED"
		fail=1
	fi
	builds "$u" || fail=1
done
exit $fail
