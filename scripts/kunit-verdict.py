#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Judge one KUnit run strictly.

Fails on: any failed or crashed case, any skipped case, any suite defined
in kunit/*.c (and matched by $MRKIT_KUNIT_FILTER, default mrkit*) that did
not run, and any BUG/WARNING/KASAN/UBSAN/lockdep or
other splat in the kernel log.  Prints one line per suite and a total.

usage: kunit-verdict.py VARIANT RESULTS.json TEST.log kunit/*.c
"""
import fnmatch
import json
import os
import re
import sys

variant, jpath, logpath, *sources = sys.argv[1:]

expected = []
for src in sources:
    text = open(src, encoding="utf-8").read()
    for m in re.finditer(r"static struct kunit_suite \w+ = \{\s*\.name = \"(\w+)\"", text):
        expected.append(m.group(1))

res = json.load(open(jpath, encoding="utf-8"))


def walk(group, counts, bad):
    for case in group.get("test_cases", []):
        counts[case["status"]] = counts.get(case["status"], 0) + 1
        if case["status"] != "PASS":
            bad.append(f'{group["name"]}.{case["name"]}: {case["status"]}')
    for sub in group.get("sub_groups", []):
        walk(sub, counts, bad)


problems = []
total = {}
suites = {}
for suite in res.get("sub_groups", []):
    counts, bad = {}, []
    walk(suite, counts, bad)
    suites[suite["name"]] = counts
    for k, v in counts.items():
        total[k] = total.get(k, 0) + v
    problems += bad
    if not counts:
        problems.append(f'{suite["name"]}: no test cases ran')

wanted = os.environ.get("MRKIT_KUNIT_FILTER", "mrkit*").split(".")[0]
for name in expected:
    if fnmatch.fnmatchcase(name, wanted) and name not in suites:
        problems.append(f"suite {name} did not run")

splat = re.compile(r"BUG[: ]|WARNING:|UBSAN:|KASAN:|INFO: |Kernel panic|Oops|"
                   r"general protection fault|ODEBUG:|kernel BUG|"
                   r"list_(add|del) corruption|cut here")
try:
    log = open(logpath, encoding="utf-8", errors="replace").read().splitlines()
except OSError:
    log = []
    problems.append(f"no kernel log at {logpath}")
for i, line in enumerate(log):
    if splat.search(line):
        problems.append("kernel log: " + line.strip())
        problems += ["    " + l.strip() for l in log[i + 1:i + 12]]
        break

for name in sorted(suites):
    c = suites[name]
    print(f"kunit {variant}: {name}: pass {c.get('PASS', 0)} fail {c.get('FAIL', 0) + c.get('ERROR', 0)} skip {c.get('SKIP', 0)}")
passed = total.get("PASS", 0)
failed = sum(v for k, v in total.items() if k != "PASS")
for p in problems:
    print(f"kunit {variant}: PROBLEM: {p}")
only = f" (only suites matching {wanted})" if "MRKIT_KUNIT_FILTER" in os.environ else ""
print(f"kunit {variant}: {passed} passed, {failed} failed, {len(problems)} problems{only}")
with open(jpath + ".counts", "w", encoding="utf-8") as f:
    f.write(f"{passed} {failed + (1 if problems and not failed else 0)}\n")
sys.exit(1 if problems else 0)
