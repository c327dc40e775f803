# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# Sourced by the scripts that build the UML kernel from the shared tree
# (kunit.sh, bench.sh, icount.sh), and by cross-arm64.sh while it
# prepares its arm64 tree from the same tree: uml_lock TREE takes the tree's lock for the rest of
# the calling script and points the tree's mrkit drop-in at this checkout.
# Two checkouts on one machine then take turns instead of building each
# other's sources into one build directory, and a build directory never
# keeps objects of another checkout's sources (uml_own_builds).
uml_lock() {
	local tree=$1 lock=$1/../uml.lock

	exec {uml_lock_fd}>"$lock"
	if ! flock -n "$uml_lock_fd"; then
		echo "uml: another checkout is building or running the UML kernel; waiting for $lock"
		flock "$uml_lock_fd"
	fi
	ln -sfn "$proj" "$tree/drivers/infiniband/ulp/mrkit"
	uml_own_builds "$tree"
}

# uml_own_builds TREE: the UML build directories next to TREE's cache
# (build-VERSION/*) are shared as well, and make judges an object by
# times alone: an object built from another checkout's mrkit, later than
# this checkout's files were written, would look current.  So each build
# directory records a hash of the mrkit sources it was last built from,
# and loses its mrkit objects when this checkout's differ.  Sets
# uml_sources_key, which uml_build_dir records in a directory it creates.
uml_own_builds() {
	local ver b key
	ver=$(basename "$(dirname "$1")")
	key=$(cd "$proj" && git ls-files -co --exclude-standard -z -- Kbuild Kconfig \
		'*.c' '*.h' kunit |
		sort -z | xargs -0 sha256sum | sha256sum | cut -c1-32)
	for b in "$1/../../build-${ver#src-}"/*/; do
		[ -d "$b" ] || continue
		[ "$(cat "$b/.mrkit-sources" 2>/dev/null)" = "$key" ] && continue
		rm -rf "$b/drivers/infiniband/ulp/mrkit"
		echo "$key" > "$b/.mrkit-sources"
	done
	uml_sources_key=$key
}

# uml_build_dir VARIANT CONFIG...: the build directory for a variant built
# from these config fragments, keyed by their content: checkouts with
# different configs keep their own objects instead of rebuilding each
# other's.  A new one starts as a copy of the newest of its variant (or
# of the variant up to its first "-": debug for debug-pi), so kbuild
# rebuilds only what the config change touches; a new empty one is
# stamped with the sources it will be built from, so that the next
# uml_own_builds keeps what this run builds.  Call it holding the lock
# (uml_lock).
uml_build_dir() {
	local variant=$1 key dir seed
	shift
	key=$(cat "$@" | sha256sum | cut -c1-12)
	dir=$cache/build-$ver/$variant-$key
	if [ ! -d "$dir" ]; then
		seed=$(ls -dt "$cache/build-$ver/${variant%%-*}"-* 2>/dev/null | head -n 1)
		if [ -n "$seed" ]; then
			rm -rf "$dir.tmp"
			cp -a "$seed" "$dir.tmp" && mv "$dir.tmp" "$dir"
		fi
	fi
	if [ ! -d "$dir" ]; then
		mkdir -p "$dir"
		echo "${uml_sources_key:?uml_build_dir: call uml_lock first}" > "$dir/.mrkit-sources"
	fi
	echo "$dir"
}

# uml_unlock: let other checkouts have the tree again.
uml_unlock() {
	flock -u "$uml_lock_fd"
}
