#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Static checks on every tracked source file: checkpatch --strict and
# kernel-doc -Werror from the 6.1 tree, then the out-of-tree build of
# mrkit.ko against Debian's headers with W=1 and sparse (C=2).
# Any warning fails.
set -euo pipefail

proj=$(cd "$(dirname "$0")/.." && pwd)
tree=$("$proj/scripts/prep-tree.sh")
kdir=$("$proj/scripts/kdir.sh")
out=$proj/.check
mkdir -p "$out"
cd "$proj"
fail=0

mapfile -t srcs < <(git ls-files --cached --others --exclude-standard '*.c' '*.h')
mapfile -t others < <(git ls-files --cached --others --exclude-standard Kconfig Kbuild '*/Kbuild' '*/Makefile' Makefile)

if ! perl "$tree/scripts/checkpatch.pl" --no-tree --strict --terse \
	--show-types --ignore SPDX_LICENSE_TAG -f "${srcs[@]}" "${others[@]}" \
	> "$out/checkpatch.log" 2>&1; then
	cat "$out/checkpatch.log"
	echo "static: checkpatch --strict: FAILED"
	fail=1
elif grep -qE 'WARNING|ERROR|CHECK' "$out/checkpatch.log"; then
	cat "$out/checkpatch.log"
	echo "static: checkpatch --strict: FAILED"
	fail=1
else
	echo "static: checkpatch --strict: ok (${#srcs[@]} sources + ${#others[@]} build files)"
fi

if ! perl "$tree/scripts/kernel-doc" -none -Werror "${srcs[@]}" \
	> "$out/kernel-doc.log" 2>&1; then
	cat "$out/kernel-doc.log"
	echo "static: kernel-doc -Werror: FAILED"
	fail=1
else
	echo "static: kernel-doc -Werror: ok"
fi

# Documentation/: every kernel-doc directive resolves against the sources,
# and the porting guide's line counts are what the code gives.
python3 "$proj/scripts/doc-check.py" "$tree" || { echo "static: Documentation/: FAILED"; fail=1; }

# Layering (Documentation/mrkit.rst): the pool knows nothing of work
# requests or remote invalidation, and plain registration reaches the
# signature code only through the inline seam of mrkit_priv.h (integrity
# descriptors).
if grep -nE 'ib_post_send|ib_send_wr|mrkit_remote_inv|mrkit_io_post|reminv' mrpool/pool.c mrpool/debugfs.c ||
   grep -nE 'mrkit_mr_enforce_pi_slow|mrkit_pi_|ib_check_mr_status' frwr/*.c; then
	echo "static: layering (mrpool -> frwr, frwr -> sigmr): FAILED"
	fail=1
else
	echo "static: layering: ok"
fi

# Exports: namespaced and GPL-only.
if grep -rnE 'EXPORT_SYMBOL(_GPL)?\(' --include='*.c' mrpool frwr sigmr; then
	echo "static: exports outside the MRKIT namespace: FAILED"
	fail=1
fi

# The fault report's rules on made-up logs (EOF reads, crashed steps,
# the stock/mrkit comparison).
"$proj/scripts/ulp/pair-selftest.sh" || { echo "static: fault report rules: FAILED"; fail=1; }

make -C "$kdir" M="$proj" CONFIG_MRKIT=m clean > /dev/null 2>&1 || true
if ! make -C "$kdir" M="$proj" CONFIG_MRKIT=m CONFIG_MRKIT_SAMPLES=m W=1 C=2 modules \
	> "$out/oot-build.log" 2>&1; then
	cat "$out/oot-build.log"
	echo "static: out-of-tree build: FAILED"
	fail=1
elif grep -E 'warning:|error:' "$out/oot-build.log"; then
	echo "static: out-of-tree build (W=1, sparse): warnings: FAILED"
	fail=1
else
	modinfo -F vermagic "$proj/mrkit.ko" | sed 's/^/static: out-of-tree mrkit.ko vermagic: /'
	echo "static: out-of-tree build (W=1, sparse): ok"
fi
make -C "$kdir" M="$proj" CONFIG_MRKIT=m clean > /dev/null 2>&1 || true
exit $fail
