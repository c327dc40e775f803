#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Every memory barrier of mrkit's code names its pair.

A barrier (smp_mb(), smp_rmb(), smp_wmb(), smp_mb__before_atomic(), ...)
or an acquire or release access (smp_load_acquire(), smp_store_release(),
atomic_read_acquire(), atomic_set_release(), clear_bit_unlock(), ...)
orders accesses only against another one on the CPU that reads or writes
the same data: the comment on it says which, with the words "pairs with"
(any case, on one line) on the barrier's line or on one of the MAX_ABOVE
lines above it.  Barriers named in comments and strings are prose.

usage: barrier-check.py FILE...   (C sources, headers, ULP splice files)
       barrier-check.py --self-test   (the rules on made-up snippets)
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


SELF_TEST = [
    # (snippet, barriers that name no pair)
    ("\t/* Pairs with the release in put(). */\n\tx = smp_load_acquire(&p);\n", 0),
    ("\tx = smp_load_acquire(&p);\n", 1),
    ("\t/*\n\t * The slot before the index; pairs with\n\t * pop().\n\t */\n"
     "\tsmp_store_release(&r->head, h);\n", 0),
    ("\t/* The slot before the index. */\n\tsmp_wmb();\n"
     "\tclear_bit_unlock(0, &f);\n", 2),
    ("\t/*\n\t * smp_mb() here would be wrong.\n\t */\n"
     "\tpr_err(\"smp_rmb() missing\");\n", 0),
    ("\t/* Pairs\n\t * with split words. */\n\tsmp_mb();\n", 1),
]


def self_test():
    """The rules on made-up snippets; 0 when each gives what it should."""
    import tempfile
    failed = 0
    for snippet, want in SELF_TEST:
        with tempfile.NamedTemporaryFile("w", suffix=".c") as f:
            f.write(snippet)
            f.flush()
            got = len(check(f.name))
        if got != want:
            print(f"barrier-check: self-test: {got} unpaired, "
                  f"expected {want}, in:\n{snippet}")
            failed += 1
    print(f"barrier-check: self-test: {len(SELF_TEST) - failed} of "
          f"{len(SELF_TEST)} snippets as expected")
    return 1 if failed else 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    bad = []
    for path in sys.argv[1:]:
        bad += check(path)
    for line in bad:
        print(line)
    if bad:
        print(f"barrier-check: {len(bad)} barrier(s) name no pair: FAILED")
        return 1
    print("barrier-check: every barrier names its pair "
          f"({len(sys.argv) - 1} files): ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
