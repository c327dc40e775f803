# SPDX-License-Identifier: GPL-2.0-only
"""Turn one SRP guest run (scripts/guest/init-ulp-srp.sh) into report lines.

  python3 -m mrkit_report.srp --transport T --mode check|demo|bench
                              [--build-log LOG] CONSOLE_LOG

Reads the console log (fio runs through mrkit_report.fio, the guest's
"MRKIT-VM SRP ..." lines) and the build log (splice.py's SPLICE-LOC
lines) and prints, from measured values only:

  VERIFY srp T stock|mrkit bytes=N errors=N
        bytes written, read back and checked by fio (verify=crc32c) in the
        run and in the separate read-back pass; errors: verify failures,
        I/O errors, failed jobs of those and of a read of the large blocks
        in other pieces (each 4 KiB checked for its offset and crc32c)
  MRS srp T per_request_max=N multi_mr_requests=N
        from mrkit's map events during the mrkit driver's verify run: the
        most descriptors one request's data took, and how many requests
        took more than one
  FAULT srp T tpg|rport|link|abort stock|mrkit ios=N failed=N reconnects=N
        leaks=N verify_errors=N splats=N
        [aborts_failed=N lun_resets=N host_resets=N late_responses=N
        [lazy_released=N]]
        ios and failed: I/Os of the run under the fault, and those fio saw
        fail (allowed: the disk goes away in rport and link); leaks: mrkit
        descriptors still out plus the initiator's MRs left on the device;
        abort (the target holds commands) adds the SCSI error handler's
        steps from dmesg: aborts that failed, ib_srp's LUN resets and host
        resets, and task management responses that came after ib_srp had
        stopped waiting; the fault fails without a failed abort, a LUN
        reset and a host reset; with mrkit's driver lazy_released, the
        registrations its pools gave back valid after the LUN reset and
        before any reconnect (the requests a failed abort left holding
        them, given back when used again), must be above zero too
  AB srp T seqread|seqwrite|randread4k stock=X mrkit=Y ratio=R lo=L hi=H
        bench: MiB/s (IOPS for randread4k), medians of the rounds; ratio
        is the median of the per-round ratios mrkit/stock and lo, hi its
        95% bootstrap interval (mrkit_report.stats: a round's two runs are
        neighbours, so what disturbs both cancels)
  LOC srp stock=N mrkit=N
        code lines of the upstream regions replaced and of ours (from
        the build log; its absence fails the run)

Exits 1 when a number says the run failed: a verify error, too few bytes
verified, no request that took several MRs, a leak, a splat, a fault run
without its recovery, or a run the schedule calls for missing.
"""
import argparse
import os
import re
import sys

from mrkit_report import fio as fio_report

# Bytes a verify run must have checked, per mode (the guest's sizes).
MIN_BYTES = {"check": 16 << 20, "demo": 256 << 20}
METRICS = fio_report.AB_METRICS
# The abort fault's counts of the SCSI error handler's steps (the guest's).
EH_FIELDS = ("aborts_failed", "lun_resets", "host_resets", "late_responses")


def guest_lines(text):
    """The words of every "MRKIT-VM SRP ..." line, "SRP" dropped."""
    return [m.group(1).split() for m in re.finditer(r"MRKIT-VM SRP (.*)", text)]


def kv(words):
    return dict(w.split("=", 1) for w in words if "=" in w)


errors_of = fio_report.errors_of


def verify_line(t, drv, runs, mode, leaks, bad, k=""):
    v, rb, cross = (runs.get(f"{k}-{t}-{drv}") for k in ("verify", "readback", "crossread"))
    if v is None or rb is None or cross is None:
        bad.append(f"verify {drv}: fio runs missing")
        return
    done = min(v.get("write_bytes", 0), v.get("read_bytes", 0), rb.get("read_bytes", 0))
    errs = errors_of(v) + errors_of(rb) + errors_of(cross)
    print(f"VERIFY srp {t} {drv} bytes={done} errors={errs}{k}")
    if errs or leaks or done < MIN_BYTES.get(mode, 1):
        bad.append(f"VERIFY {t} {drv}: errors={errs} leaks={leaks} bytes={done}")


def fault_line(t, fault, drv, g, runs, bad, k=""):
    base = f"fault-{t}-{fault}-{drv}"
    load = runs.get(base)
    parts = [runs.get(base + s) for s in ("-pre", "-after-b", "-after")]
    if load is None or None in parts:
        bad.append(f"FAULT {fault} {drv}: fio runs missing")
        return
    ios = load.get("read_ios", 0) + load.get("write_ios", 0)
    failed = max(load.get("total_err", 0), load.get("io_errors", 0))
    # The run under the fault may see I/O errors, never a bad block; the
    # runs before and after must pass completely.
    verr = load.get("verify_errors", 0) + sum(errors_of(p) for p in parts)
    eh = ""
    if fault == "abort":
        eh = "".join(f" {f}={g.get(f, '?')}" for f in EH_FIELDS)
        if drv == "mrkit":
            eh += f" lazy_released={g.get('lazy_released', '?')}"
    print(f"FAULT srp {t} {fault} {drv} ios={ios} failed={failed} "
          f"reconnects={g.get('reconnects', '?')} leaks={g.get('leaks', '?')} "
          f"verify_errors={verr} splats={g.get('splats', '?')}{eh}{k}")
    if verr or ios == 0 or g.get("leaks") != "0" or g.get("splats") != "0" or \
       g.get("reconnects", "0") == "0":
        bad.append(f"FAULT {t} {fault} {drv}")
    # The abort fault proves its path: an abort that failed, the error
    # handler's LUN reset and its host reset; with mrkit, the registrations
    # srp_mrkit_drop() gave back.
    proof = EH_FIELDS[:3] + (("lazy_released",) if drv == "mrkit" else ())
    for f in proof if fault == "abort" else ():
        if not g.get(f, "0").isdigit() or int(g.get(f, "0")) == 0:
            bad.append(f"FAULT {t} abort {drv}: {f}={g.get(f, 'missing')}")


def ab_lines(t, runs, bad):
    """AB lines from ab-T-METRIC-DRIVER-ROUND runs, paired by round."""
    for name in METRICS:
        fig = fio_report.ab_figure(runs, "srp", t, name, "stock", "mrkit", bad)
        if fig:
            print(fio_report.ab_line("AB", "srp", t, name, ("stock", "mrkit"), fig))


def missing(mode, verified, mrs, faulted, runs):
    """What the mode's schedule calls for and the log lacks."""
    want = []
    if mode in ("check", "demo"):
        want += [("mrkit" in verified, "no verify run with the mrkit driver"),
                 (mrs, "no MRS count from the mrkit driver's verify run"),
                 (faulted, "no fault run")]
    if mode == "demo":
        want.append(("stock" in verified, "no verify run with the stock driver"))
    if mode == "bench":
        want.append((any(k.startswith("ab-") for k in runs), "no A/B run"))
    return [why for ok, why in want if not ok]


def main(argv=None):
    ap = argparse.ArgumentParser(prog="mrkit_report.srp")
    ap.add_argument("--transport", required=True)
    ap.add_argument("--mode", required=True)
    ap.add_argument("--build-log")
    ap.add_argument("log")
    a = ap.parse_args(argv)
    t, mode = a.transport, a.mode
    runs = fio_report.runs(a.log)
    text = fio_report.read(a.log)
    k = fio_report.kernel_field(text)
    bad = []
    verified, faulted, mrs = set(), 0, 0

    for w in guest_lines(text):
        if w[0] == "verify" and len(w) >= 3:
            verify_line(t, w[2], runs, mode, int(kv(w[3:]).get("leaks", "1")), bad, k)
            verified.add(w[2])
        elif w[0] == "mrs" and len(w) >= 3:
            g = kv(w[3:])
            per, multi = int(g.get("per_request_max", 0)), int(g.get("multi_mr_requests", 0))
            print(f"MRS srp {t} per_request_max={per} multi_mr_requests={multi}{k}")
            mrs += 1
            if per < 2 or multi == 0:
                bad.append(f"MRS {t}: no request took several MRs")
        elif w[0] == "fault" and len(w) >= 4:
            fault_line(t, w[2], w[3], kv(w[4:]), runs, bad, k)
            faulted += 1
        elif w[0] == "end" and kv(w[1:]).get("splats") != "0":
            bad.append("splats at the end")

    ab_lines(t, runs, bad)

    if a.build_log:
        up, ours = fio_report.splice_loc(a.build_log) if os.path.exists(a.build_log) else (0, 0)
        if up:
            print(f"LOC srp stock={up} mrkit={ours}{k}")
        else:
            bad.append("no SPLICE-LOC lines in the build log")
    if not re.search(r"MRKIT-VM SRP end splats=0", text):
        bad.append("splats in dmesg, or the guest did not finish")
    bad += missing(mode, verified, mrs, faulted, runs)
    for b in bad:
        print(f"srp-report: FAILED: {b}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
