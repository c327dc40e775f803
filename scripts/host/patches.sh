#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make patches: each converted ULP (ulp/ULP) and the provider rdma_rxe_pi
# (provider/rxe: rxe with integrity MRs) as a git format-patch series
# against Debian's linux-source-6.1 (scripts/host/patches.py, the grouping
# and messages in ulp/ULP/series, provider/rxe/series), written to
# DIR/ULP/ and DIR/rxe/ (DIR: the argument, by default out/patches; never
# tracked by git).  Then checkpatch --strict from the 6.1 tree on every
# patch: any ERROR, WARNING or CHECK fails, except the question whether
# MAINTAINERS needs updating for an added file when an F: entry of the
# tree's MAINTAINERS covers its directory.  Then each series must be
# bisectable: a ULP's module, from its upstream sources (the ULP's hook,
# scripts/host/ulp-ULP.sh: ulp_src), is built with the hook's ulp_make
# against Debian's 6.1 headers and mrkit's build (scripts/host/vm-lib.sh:
# vm_build_mrkit, the cache entry the guests use), and rxe (all of
# drivers/infiniband/sw/rxe, its own Makefile: rdma_rxe.ko, with rxe_pi.o
# once a patch adds it) against the headers, W=1, after each patch,
# applied one at a time with git apply; a patch that does not apply, or
# after which the build fails or warns, fails, named by its number and
# subject.  The build logs: DIR/NAME.build-N.log.
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

# rxe_src DIR, rxe_make DIR: builds()'s hooks for the provider: rxe's
# upstream sources with its Makefile and Kconfig (obj-$(CONFIG_RDMA_RXE), m in
# Debian's configuration), and the module built from them.
rxe_src() {
	cp "$tree/$ULP_SRC"/*.[ch] "$tree/$ULP_SRC/Makefile" "$tree/$ULP_SRC/Kconfig" "$1/"
}

rxe_make() {
	nice -n 10 make -C "$kdir" M="$1" W=1 modules
}

# maintained PATCH...: the directories of the files the patches add, if
# an F: entry of the tree's MAINTAINERS covers each of them; fails if one
# is not covered.
maintained() {
	local d
	while read -r d; do
		awk -v d="$d" '/^F:\t/ { f = $2; if (f ~ /\/$/ && substr(d, 1, length(f)) == f) ok = 1 }
			END { exit !ok }' "$tree/MAINTAINERS" || return 1
		echo "$d"
	done < <(awk '/^diff --git / { f = $4 } /^new file mode/ { sub(/^b\//, "", f)
		sub(/[^\/]*$/, "", f); print f }' "$@" | sort -u)
}

# builds NAME: the module built after each patch of DIR/NAME/, from
# the upstream sources with the patches applied in order (an incremental
# build after each).  Prints one line; fails on the first patch that
# does not apply or build, printing the errors and warnings.
builds() {
	local u=$1 w=$work/$1 t0=$SECONDS n=0 p log s why
	local ps=("$dir/$u"/*.patch)
	rm -f "$dir/$u".build-*.log
	(
	if [ "$u" = rxe ]; then
		ULP_SRC=drivers/infiniband/sw/rxe
		ulp_src() { rxe_src "$@"; }
		ulp_make() { rxe_make "$@"; }
	else
		# The hook reads mode and transport when sourced (make
		# check's here); a subshell keeps its names apart.
		# shellcheck disable=SC2034
		mode=check transport=rxe
		# shellcheck source=/dev/null
		. "$proj/scripts/host/ulp-$u.sh"
	fi
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
for src in "$proj"/ulp/*/ "$proj/provider/rxe/"; do
	u=$(basename "$src")
	if ! python3 "$proj/scripts/host/patches.py" --tree "$tree" --out "$dir/$u" "$src"; then
		fail=1
		continue
	fi
	ps=("$dir/$u"/*.patch)
	ign=() why=
	if grep -q '^new file mode' "${ps[@]}"; then
		if dirs=$(maintained "${ps[@]}"); then
			ign=(--ignore FILE_PATH_CHANGES)
			why="; new files in ${dirs//$'\n'/, }, in MAINTAINERS"
		fi
	fi
	if perl "$tree/scripts/checkpatch.pl" --strict --no-tree --terse --show-types "${ign[@]}" \
		"${ps[@]}" > "$dir/$u.checkpatch" 2>&1 &&
	   ! grep -qE 'ERROR|WARNING|CHECK' "$dir/$u.checkpatch"; then
		echo "patches: $u: checkpatch --strict: ok ($(count ${#ps[@]} patch)$why)"
	else
		cat "$dir/$u.checkpatch"
		echo "patches: $u: checkpatch --strict: FAILED"
		fail=1
	fi
	builds "$u" || fail=1
done
exit $fail
