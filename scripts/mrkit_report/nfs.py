# SPDX-License-Identifier: GPL-2.0-only
"""Turn the console log of "vm-ulp.sh nfs" into VERIFY/FAULT/AB/INV/LOC lines.

Usage: python3 -m mrkit_report.nfs CONSOLE_LOG BUILD_LOG [--expect-v3 DRIVER:MIB,...]

Reads the fio runs (mrkit_report.fio) and the guest's
"MRKIT-VM NFS ..." lines, and prints, from measured values only:
  VERIFY nfs <rxe|siw> <stock|mrkit> bytes=<N> errors=<N>
      bytes written and verified by fio (direct and buffered verify runs);
      errors: verify failures, I/O errors and fio job errors of those runs
      and of the buffered run's read-back after the client's cache was
      dropped, plus one per run that read back fewer bytes than it wrote
  VERIFY nfs <t> <stock|mrkit> bytes=<N> errors=<N> vers=3
      the same for the NFSv3 mount (its own runs, "-v3" in their names);
      with --expect-v3 (the guest's mrkit_nfs3 list) a driver named there
      without such a line fails the report
  FAULT nfs <t> <fault> <stock|mrkit> ios=<N> failed=<N> reconnects=<N>
      leaks=<N> verify_errors=<N> splats=<N>
  AB nfs <t> <seqread|seqwrite|randread4k> stock=<x> mrkit=<y>
      ratio=<r> lo=<l> hi=<h>   (MiB/s, or IOPS for randread4k; medians of
      the rounds; r: the median of the per-round ratios mrkit/stock, lo-hi
      its 95% interval (mrkit_report.fio.ab_figure); every A/B read is
      crc32c-verified and an error fails the report)
  INV nfs <t> mrkit remote=<N> local=<N> stale_replaced=<N>
      registrations the server invalidated (Send With Invalidate) vs those
      the client invalidated with LOCAL_INV, from mrkit's pool counters
      (" vers=3" after it for the NFSv3 run's connection)
  LOC nfs stock=<N> mrkit=<N>
      code lines (neither blank nor comment) of the upstream regions the
      splice replaced (nearly all of frwr_ops.c) vs ours, with the
      members added to xprt_rdma.h
Exits 1 if a VERIFY or FAULT line shows an error, a leak or a splat.
"""
import argparse
import re
import sys

from mrkit_report import fio


def errs(s):
    return (s.get("verify_errors", 0) + s.get("io_errors", 0) +
            s.get("job_errors", 0) + s.get("total_err", 0) +
            (1 if "parse_error" in s or s.get("rc", 0) else 0))


def guest_lines(path):
    out = []
    with open(path, errors="replace") as f:
        for line in f:
            m = re.search(r"MRKIT-VM NFS (.*)", line.rstrip("\r\n"))
            if m:
                out.append(m.group(1).split())
    return out


def kv(words):
    return {k: int(v) for k, v in (w.split("=", 1) for w in words if "=" in w)
            if v.lstrip("-").isdigit()}


def main(argv=None):
    ap = argparse.ArgumentParser(prog="mrkit_report.nfs")
    ap.add_argument("log")
    ap.add_argument("build")
    ap.add_argument("--expect-v3", default="",
                    help="DRIVER:MIB,... : NFSv3 verify runs that must be there")
    a = ap.parse_args(argv)
    log, build = a.log, a.build
    runs = fio.runs(log)
    k = fio.kernel_field(fio.read(log))
    bad = False

    verify = {}
    for name, s in runs.items():
        m = re.match(r"(verify|readback)-(\w+)-(direct|buffered)-(\w+?)(-v3)?$", name)
        if not m:
            continue
        key = (m.group(2), m.group(4), " vers=3" if m.group(5) else "")
        v = verify.setdefault(key, {"bytes": 0, "errors": 0, "wrote": {}, "read": {}})
        v["errors"] += errs(s)
        if m.group(1) == "verify":
            v["bytes"] += s["write_bytes"]
            v["wrote"][m.group(3)] = s["write_bytes"]
            # fio's verify phase must have read back all it wrote.
            if s.get("read_bytes", 0) < s["write_bytes"]:
                v["errors"] += 1
        else:
            v["read"][m.group(3)] = s["read_bytes"]
    for (t, d, vers), v in sorted(verify.items()):
        # Buffered data is read back again over the wire, cache dropped.
        if v["read"].get("buffered", 0) < v["wrote"].get("buffered", 1):
            v["errors"] += 1
        print(f"VERIFY nfs {t} {d} bytes={v['bytes']} errors={v['errors']}{vers}{k}")
        bad |= v["errors"] > 0 or v["bytes"] == 0
    for d in (r.split(":")[0] for r in a.expect_v3.split(",") if r):
        if not any(k[1] == d and k[2] for k in verify):
            print(f"nfs-report: no NFSv3 verify run with the {d} module")
            bad = True

    for w in guest_lines(log):
        if w[0] == "fault" and len(w) >= 4:
            t, fault, d = w[1], w[2], w[3]
            g = kv(w[4:])
            base = f"fault-{t}-{fault}-{d}"
            s, rb = runs.get(base, {}), runs.get(base + "-readback", {})
            ios = s.get("write_ios", 0) + s.get("read_ios", 0)
            failed = s.get("io_errors", 0) + s.get("total_err", 0) + s.get("job_errors", 0)
            verr = s.get("verify_errors", 0) + rb.get("verify_errors", 0) + \
                rb.get("io_errors", 0) + rb.get("job_errors", 0)
            if not rb or rb.get("read_bytes", 0) == 0:
                verr += 1	# nothing read back is not a pass
            print(f"FAULT nfs {t} {fault} {d} ios={ios} failed={failed} "
                  f"reconnects={g.get('reconnects', 0)} leaks={g.get('leaks', 0)} "
                  f"verify_errors={verr} splats={g.get('splats', 0)}{k}")
            bad |= verr > 0 or g.get("leaks", 0) != 0 or g.get("splats", 0) != 0 or ios == 0
        elif w[0] == "inv" and len(w) >= 3 and w[2] == "mrkit":
            g = kv(w[3:])
            vers = f" vers={g['vers']}" if "vers" in g else ""
            print(f"INV nfs {w[1]} mrkit remote={g.get('remote', 0)} "
                  f"local={g.get('local', 0)} stale_replaced={g.get('stale', 0)}{vers}{k}")

    metrics = "|".join(fio.AB_METRICS)
    ts = sorted({m.group(1) for m in (re.match(rf"ab-(.+?)-(?:{metrics})-", k) for k in runs) if m})
    ab_bad = []
    for t in ts:
        for metric in fio.AB_METRICS:
            fig = fio.ab_figure(runs, "nfs", t, metric, "stock", "mrkit", ab_bad)
            if fig:
                print(fio.ab_line("AB", "nfs", t, metric, ("stock", "mrkit"), fig))
    for b in ab_bad:
        print(f"nfs-report: {b}")
    bad |= bool(ab_bad)

    up, ours = fio.splice_loc(build)
    if up:
        print(f"LOC nfs stock={up} mrkit={ours}{k}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
