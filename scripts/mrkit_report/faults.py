# SPDX-License-Identifier: GPL-2.0-only
"""make faults' comparison: each step with the stock driver beside mrkit's.

  python3 -m mrkit_report.faults FAULTS_OUT

FAULTS_OUT is scripts/host/faults.sh's log (.check/faults-MODE.out): its
"=== faults: ULP over T (MODE)" headers, then vm-pair.sh's output for that
run, with mrkit_report.pair's FAULT2 lines and "pair-report: FAILED: FAULT
DRIVER: why" lines.  Prints one row per (ULP, provider, fault) with the
verdict of each driver (ok, or why it failed), the failures that belong
to a run rather than a step, and a count line

  faults: N steps: both ok A, both failed B, mrkit only failed C, stock
  only failed D, missing E, one driver only F (of which mrkit failed G)

(on one line; missing: a driver the schedule ran in that step with
neither a FAULT2 line nor a failure, e.g. a run that ended early).  Exits
1 when a step failed with mrkit's driver and not with the stock one
(also when mrkit's ran alone), or is missing: 0 means mrkit's drivers
failed nowhere the stock ones did not.
"""
import re
import sys

from mrkit_report import fio

HEAD = re.compile(r"^=== faults: (\S+) over (\S+) \(")
FAULT2 = re.compile(r"^FAULT2 (\S+) (\S+) (\S+) (stock|mrkit) ")
STEP_FAIL = re.compile(r"^pair-report: FAILED: (\S+) (stock|mrkit): (.*)")
RUN_FAIL = re.compile(r"^pair-report: FAILED: (.*)")
SCHEDULE = re.compile(r"^pair: \S+ built and packed in .*?; \S+, \S+: (\S+)")


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    ctx = None
    steps = {}      # (ulp, t, fault) -> {drv: [reasons] or []}
    order = []
    sched = {}      # (ulp, t, fault) -> the drivers the schedule ran
    runfails = []
    for line in fio.read(argv[0]).splitlines():
        m = HEAD.match(line)
        if m:
            ctx = m.groups()
            continue
        if ctx is None:
            continue
        m = SCHEDULE.match(line)
        if m:
            for s in m.group(1).split(","):
                drv, fault = s.split(":")
                key = ctx + (fault,)
                if key not in steps:
                    steps[key] = {}
                    order.append(key)
                sched.setdefault(key, set()).add(drv)
            continue
        m = FAULT2.match(line)
        if m:
            key = (m.group(1), m.group(2), m.group(3))
            steps.setdefault(key, {}).setdefault(m.group(4), [])
            if key not in order:
                order.append(key)
            continue
        m = STEP_FAIL.match(line)
        if m:
            key = ctx + (m.group(1),)
            steps.setdefault(key, {}).setdefault(m.group(2), []).append(m.group(3))
            if key not in order:
                order.append(key)
            continue
        m = RUN_FAIL.match(line)
        if m:
            runfails.append(f"{ctx[0]} over {ctx[1]}: {m.group(1)}")

    def verdict(key, drv):
        v = steps[key].get(drv)
        if v is None:
            return "missing" if drv in sched.get(key, ()) else "not run"
        return "ok" if not v else "FAILED (" + "; ".join(v) + ")"

    n = dict(both_ok=0, both_failed=0, mrkit_only=0, stock_only=0, missing=0,
             one_driver=0, mrkit_failed_alone=0)
    print(f"{'ulp':<5} {'provider':<8} {'fault':<11} stock / mrkit")
    for key in order:
        d = steps[key]
        s, k = d.get("stock"), d.get("mrkit")
        print(f"{key[0]:<5} {key[1]:<8} {key[2]:<11} {verdict(key, 'stock')} / "
              f"{verdict(key, 'mrkit')}")
        want = sched.get(key, set(d))
        if any(d.get(x) is None for x in want):
            n["missing"] += 1
        elif s is None or k is None:
            # One driver only (the short schedule runs mrkit's alone).
            n["one_driver"] += 1
            if k:
                n["mrkit_failed_alone"] += 1
        elif not s and not k:
            n["both_ok"] += 1
        elif s and k:
            n["both_failed"] += 1
        elif k:
            n["mrkit_only"] += 1
        else:
            n["stock_only"] += 1
    for r in runfails:
        print(f"run: {r}")
    print(f"faults: {len(order)} steps: both ok {n['both_ok']}, both failed {n['both_failed']}, "
          f"mrkit only failed {n['mrkit_only']}, stock only failed {n['stock_only']}, "
          f"missing {n['missing']}, one driver only {n['one_driver']} "
          f"(of which mrkit failed {n['mrkit_failed_alone']})")
    return 1 if n["mrkit_only"] or n["missing"] or n["mrkit_failed_alone"] else 0


if __name__ == "__main__":
    sys.exit(main())
