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
	# The build directories are shared too: objects built from another
	# checkout's sources can be newer than this checkout's files, and
	# make would keep them.  When the drop-in changes hands, mrkit's
	# objects go, so that they are built from this checkout.
	if [ "$(readlink "$tree/drivers/infiniband/ulp/mrkit")" != "$proj" ]; then
		rm -rf "$tree"/../../build-*/*/drivers/infiniband/ulp/mrkit
	fi
	ln -sfn "$proj" "$tree/drivers/infiniband/ulp/mrkit"
}

# uml_unlock: let other checkouts have the tree again.
uml_unlock() {
	flock -u "$uml_lock_fd"
}
