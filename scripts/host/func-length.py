#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""No function of mrkit's longer than 80 lines (kernel coding style).

Counts the lines of every function body - from the line after its
opening brace to its closing brace, both at column 0 - in the given C
files and fails naming each one over the limit.

usage: func-length.py FILE.c...
"""
import re
import sys

LIMIT = 80
bad = 0
for path in sys.argv[1:]:
    lines = open(path, encoding="utf-8").read().split("\n")
    name, start = None, None
    for i, line in enumerate(lines):
        if line == "{" and i:
            # the function's name is on one of the lines above
            for j in range(i - 1, max(i - 6, -1), -1):
                m = re.search(r"(\w+)\(", lines[j])
                if m and not lines[j].startswith((" ", "\t")):
                    name = m.group(1)
                    break
            start = i
        elif line == "}" and start is not None:
            n = i - start - 1
            if name and n > LIMIT:
                print(f"func-length: {path}: {name}() is {n} lines (limit {LIMIT})")
                bad += 1
            name, start = None, None
sys.exit(1 if bad else 0)
