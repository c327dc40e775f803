#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make check's static step: checkpatch --strict and kernel-doc -Werror
# from the 6.1 and the 6.12 tree on every tracked source file (a kernel
# version test anywhere but mrkit_compat.h fails checkpatch); the
# documentation (doc-check.py); the layering and export rules; the report
# parsers' unit tests (scripts/mrkit_report/tests); the process-word check
# (words.sh); the converted ULPs and rdma_rxe_pi as patch series
# (patches.sh), checkpatch --strict on them and the module built after
# each patch; then the
# out-of-tree build of mrkit.ko against Debian's 6.1 and 6.12 headers
# with W=1 and sparse (C=2).  Any warning fails.
set -euo pipefail

proj=$(cd "$(dirname "$0")/../.." && pwd)
kernels="6.1 6.12"
tree=$("$proj/scripts/host/prep-tree.sh" 6.1)
out=$proj/.check
mkdir -p "$out"
cd "$proj"
fail=0

mapfile -t srcs < <(git ls-files --cached --others --exclude-standard '*.c' '*.h')
mapfile -t splices < <(git ls-files --cached --others --exclude-standard 'ulp/*.splice' 'provider/*.splice')
mapfile -t others < <(git ls-files --cached --others --exclude-standard Kconfig Kbuild '*/Kbuild' '*/Makefile' Makefile)

# gate NAME LOG PATTERN CMD...: CMD's output into LOG; NAME fails (LOG
# printed) when CMD fails or a line of LOG matches PATTERN.
gate() {
	local name=$1 log=$2 pat=$3
	shift 3
	if "$@" > "$log" 2>&1 && ! grep -qE "$pat" "$log"; then
		return 0
	fi
	cat "$log"
	echo "static: $name: FAILED"
	fail=1
	return 1
}

# mrkit_compat.h is the one file keyed on the kernel's version: it alone
# may test LINUX_VERSION_CODE (and name a macro argument one kernel's
# form does not use).
compat=mrkit_compat.h
mapfile -t rest < <(printf '%s\n' "${srcs[@]}" | grep -vxF "$compat")
for k in $kernels; do
	t=$("$proj/scripts/host/prep-tree.sh" "$k")
	gate "checkpatch --strict ($k)" "$out/checkpatch-$k.log" 'WARNING|ERROR|CHECK' \
		perl "$t/scripts/checkpatch.pl" --no-tree --strict --terse --show-types \
		--ignore SPDX_LICENSE_TAG -f "${rest[@]}" "${others[@]}" &&
	gate "checkpatch --strict ($k, $compat)" "$out/checkpatch-$k-compat.log" 'WARNING|ERROR|CHECK' \
		perl "$t/scripts/checkpatch.pl" --no-tree --strict --terse --show-types \
		--ignore SPDX_LICENSE_TAG,LINUX_VERSION_CODE,CONSTANT_COMPARISON,MACRO_ARG_UNUSED \
		-f "$compat" &&
		echo "static: checkpatch --strict ($k): ok (${#srcs[@]} sources + ${#others[@]} build files)"

	gate "kernel-doc -Werror ($k)" "$out/kernel-doc-$k.log" 'warning:|error:' \
		perl "$t/scripts/kernel-doc" -none -Werror "${srcs[@]}" "${splices[@]}" &&
		echo "static: kernel-doc -Werror ($k): ok (with the ULPs' and the provider's splice files)"
done

# README and Documentation/ against the tree (scripts/host/doc-check.py):
# kernel-doc directives, the API reference, the porting guide's tables,
# report lines, and every path, make target and mrkit name they mention.
gate "documentation (doc-check.py)" "$out/doc-check.log" 'FAILED' \
	python3 "$proj/scripts/host/doc-check.py" "$tree" &&
	sed 's/^doc-check: /static: documentation: /' "$out/doc-check.log"

# Layering (Documentation/mrkit.rst): the pool knows nothing of work
# requests, protection or the I/O - mrpool/ neither reads struct mrkit_io
# nor calls into frwr/ or sigmr/ (checked on the source here and on the
# built objects' symbols after the build below) - and plain registration
# reaches the signature code only through the inline seam of
# mrkit_priv.h (integrity descriptors).
# Comments may name what the code must not use: only code is searched.
code_grep() {
	local re=$1 f out hit=1
	shift
	for f in "$@"; do
		if out=$(gcc -fpreprocessed -dD -E -P "$f" | grep -nE "$re"); then
			printf '%s: %s\n' "$f" "$out"
			hit=0
		fi
	done
	return $hit
}
if code_grep 'ib_post_send|ib_send_wr|struct mrkit_io([^_]|$)|mrkit_io_[a-z]+\(|->(mrs|io_next)\b' mrpool/*.c ||
   code_grep 'mrkit_mr_enforce_pi_slow|mrkit_pi_|ib_check_mr_status' frwr/*.c; then
	echo "static: layering (mrpool -> frwr, frwr -> sigmr): FAILED"
	fail=1
else
	echo "static: layering (source): ok"
fi

# No function longer than 80 lines in the module (the tests are exempt).
mapfile -t modsrcs < <(git ls-files --cached --others --exclude-standard '*.c' |
	grep -vE '^(kunit|samples|bench|tests)/')
python3 "$proj/scripts/host/func-length.py" "${modsrcs[@]}" ||
	{ echo "static: function length: FAILED"; fail=1; }

# Every barrier names its pair: the module, its tests, the benchmarks, the
# samples, the provider and the ULPs' splice files.
mapfile -t barriersrcs < <(git ls-files --cached --others --exclude-standard \
	'*.c' '*.h' '*.splice')
python3 "$proj/scripts/host/barrier-check.py" --self-test |
	sed 's/^barrier-check: /static: barriers: /' || fail=1
python3 "$proj/scripts/host/barrier-check.py" "${barriersrcs[@]}" |
	sed 's/^barrier-check: /static: barriers: /' || fail=1

# Exports: each EXPORT_SYMBOL_NS_GPL(sym, MRKIT), GPL-only and namespaced;
# tracepoints GPL-only (they have no namespaced export); and
# EXPORT_SYMBOL_IF_KUNIT(), for the tests alone.
if grep -nE 'EXPORT_[A-Z_]*SYMBOL' mrpool/*.c frwr/*.c sigmr/*.c module.c trace.c debugfs.c |
	grep -vE 'EXPORT_SYMBOL_NS_GPL\([a-z0-9_]+, MRKIT\);|EXPORT_TRACEPOINT_SYMBOL_GPL\([a-z0-9_]+\);|EXPORT_SYMBOL_IF_KUNIT\([a-z0-9_]+\);'; then
	echo "static: exports not EXPORT_SYMBOL_NS_GPL(..., MRKIT): FAILED"
	fail=1
fi

# The report parsers' rules on made-up logs (stdlib unittest).
if (cd scripts && python3 -m unittest discover -s mrkit_report/tests -t .) \
	> "$out/report-tests.log" 2>&1; then
	echo "static: report parsers' unit tests: ok ($(grep -o '^Ran [0-9]* tests' "$out/report-tests.log"))"
else
	cat "$out/report-tests.log"
	echo "static: report parsers' unit tests: FAILED"
	fail=1
fi

"$proj/scripts/host/words.sh" || fail=1

# The out-of-tree build against each kernel's Debian headers, of a copy
# of the sources outside the checkout: make check compiles the UML kernel
# beside this step, from the checkout through the tree's mrkit drop-in, and
# Kbuild would take objects left in that directory for its own.  The
# build is then the guests' mrkit.ko for that kernel (vm_keep_mrkit), so
# that patches.sh and the guests do not build the same again.
# shellcheck source=scripts/host/vm-lib.sh
. "$proj/scripts/host/vm-lib.sh"
cache=${MRKIT_CACHE:-/var/cache/mrkit}
src=$out/oot-src
for k in $kernels; do
	kdir=$("$proj/scripts/host/kdir.sh" "$k")
	[ -d "$kdir" ] || { echo "static: $kdir missing (run make deps): FAILED"; fail=1; continue; }
	rm -rf "$src"
	mkdir -p "$src"
	git ls-files -co --exclude-standard -z | xargs -0 cp --parents -t "$src"
	key=$(vm_mrkit_key "$src")
	if gate "out-of-tree build against $k (W=1, sparse)" "$out/oot-build-$k.log" \
		'warning:|error:|WARNING:' \
		make -C "$kdir" M="$src" CONFIG_MRKIT=m CONFIG_MRKIT_SAMPLES=m CONFIG_MRKIT_BENCH=m \
		W=1 C=2 -j"$(nproc)" modules; then
		modinfo -F vermagic "$src/mrkit.ko" |
			sed "s/^/static: out-of-tree mrkit.ko vermagic ($k): /"
		echo "static: out-of-tree build against $k (W=1, sparse): ok"
		# One I/O's fence cycle calls no mrkit function out of line but
		# those hotpath-check.py lists.
		python3 "$proj/scripts/host/hotpath-check.py" "$src/mrkit.ko" || fail=1
		# The pool's object calls nothing that frwr/ or sigmr/ define.
		up=$(comm -12 <(nm -u "$src"/mrpool/*.o | awk '{print $2}' | sort -u) \
			<(nm --defined-only "$src"/frwr/*.o "$src"/sigmr/*.o | awk '{print $3}' | sort -u))
		if [ -n "$up" ]; then
			echo "static: layering ($k): mrpool/ calls into frwr/ or sigmr/: $up: FAILED"
			fail=1
		else
			echo "static: layering (objects, $k): ok"
		fi
		vm_keep_mrkit "$src" "$key" || fail=1
	fi
done
rm -rf "$src"

# The converted ULPs and rdma_rxe_pi as patch series, checkpatch
# --strict on each, the module built after each patch.
"$proj/scripts/host/patches.sh" "$out/patches" || fail=1

exit $fail
