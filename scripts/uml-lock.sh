# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# Sourced by the scripts that build the UML kernel from the shared tree
# (kunit.sh, bench.sh): uml_lock TREE takes the tree's lock for the rest of
# the calling script and points the tree's mrkit drop-in at this checkout.
# Two checkouts on one machine then take turns instead of building each
# other's sources into one build directory.
uml_lock() {
	local tree=$1 lock=$1/../uml.lock

	exec {uml_lock_fd}>"$lock"
	if ! flock -n "$uml_lock_fd"; then
		echo "uml: another checkout is building or running the UML kernel; waiting for $lock"
		flock "$uml_lock_fd"
	fi
	ln -sfn "$proj" "$tree/drivers/infiniband/ulp/mrkit"
}

# uml_unlock: let other checkouts have the tree again.
uml_unlock() {
	flock -u "$uml_lock_fd"
}

# uml_own_objects BUILD: under the lock, before building in BUILD: make
# sure mrkit's objects there are this checkout's.  Kbuild rebuilds by
# mtime, and another checkout's objects can be newer than this checkout's
# sources; they are removed unless this checkout built them last (its
# stamp, written by uml_mark_objects, is newer than every one of them).
uml_own_objects() {
	local mk=$1/drivers/infiniband/ulp/mrkit stamp=$1/.mrkit-checkout

	if [ "$(cat "$stamp" 2>/dev/null)" != "$proj" ] ||
	   [ -n "$(find "$mk" -newer "$stamp" -print -quit 2>/dev/null)" ]; then
		rm -rf "$mk"
	fi
}

# uml_mark_objects BUILD: this checkout built mrkit's objects in BUILD last.
uml_mark_objects() {
	echo "$proj" > "$1/.mrkit-checkout"
}
