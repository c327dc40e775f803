#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Every memory barrier of mrkit's code names its pair.

A barrier (smp_mb(), smp_rmb(), smp_wmb(), smp_mb__before_atomic(), ...)
or an acquire or release access (smp_load_acquire(), smp_store_release(),
atomic_read_acquire(), atomic_set_release(), clear_bit_unlock(), ...)
orders accesses only
against another one on the CPU that reads or writes the same data: the
comment on it says which, with the words "pairs with" (any case) on the
barrier's line or in the comment that ends right above it (at most
MAX_ABOVE lines up, code lines between them allowed).

usage: barrier-check.py FILE...   (C sources, headers, ULP splice files)
"""
import re
import sys

MAX_ABOVE = 8
BARRIER = re.compile(
    r"\b(smp_mb|smp_rmb|smp_wmb|smp_mb__before_atomic|smp_mb__after_atomic"
    r"|smp_store_mb|smp_load_acquire|smp_store_release|smp_cond_load_acquire"
    r"|atomic(64|_long)?_(read_acquire|set_release|[a-z_]+_(acquire|release))"
    r"|(try_)?cmpxchg_(acquire|release)"
    r"|(__)?clear_bit_unlock|test_and_set_bit_lock|smp_mb__after_spinlock)\s*\(")
PAIR = re.compile(r"pair(s|ed)? with", re.IGNORECASE)


def strip_strings(line):
    """The line without its string literals (messages name functions)."""
    return re.sub(r'"(\\.|[^"\\])*"', '""', line)


def check(path):
    """The barriers of @path that name no pair, as report lines."""
    bad = []
    lines = open(path, encoding="utf-8").read().split("\n")
    in_comment = False
    for i, line in enumerate(lines):
        code = strip_strings(line)
        starts_in_comment = in_comment
        # Track block comments: a barrier named in a comment is prose.
        if "/*" in code and "*/" not in code.split("/*", 1)[1]:
            in_comment = True
        if "*/" in code:
            in_comment = False
        if starts_in_comment or code.lstrip().startswith(("*", "/*", "//")):
            continue
        if code.lstrip().startswith("#define"):
            continue
        if not BARRIER.search(code.split("/*")[0].split("//")[0]):
            continue
        window = lines[max(0, i - MAX_ABOVE):i + 1]
        if not any(PAIR.search(w) for w in window):
            bad.append(f"barrier-check: {path}:{i + 1}: names no pair: "
                       f"{line.strip()}")
    return bad


def main():
    bad, n = [], 0
    for path in sys.argv[1:]:
        found = check(path)
        bad += found
        n += 1
    for line in bad:
        print(line)
    if bad:
        print(f"barrier-check: {len(bad)} barrier(s) name no pair: FAILED")
        return 1
    print(f"barrier-check: every barrier names its pair ({n} files): ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
