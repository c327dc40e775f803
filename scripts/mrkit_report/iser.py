# SPDX-License-Identifier: GPL-2.0-only
"""Turn one iSER guest run (scripts/guest/init-ulp-iser.sh) into report lines.

  python3 -m mrkit_report.iser --transport T [--mode M] [--build-log LOG] CONSOLE_LOG

Reads the console log (fio runs through mrkit_report.fio, the guest's
"MRKIT-VM ISER ..." lines) and the build log (the splice tool's
SPLICE-LOC lines) and prints, from measured values only:

  VERIFY iser T stock|mrkit bytes=N errors=N     bytes written and verified
  FENCE iser T verify bytes=N errors=N           the same with mrkit_fence=1
  FAULT iser T logout|portal|linkdel stock|mrkit ios=N failed=N reconnects=N
        leaks=N verify_errors=N splats=N
  AB iser T seqread|seqwrite|randread4k stock=x mrkit=y ratio=r lo=l hi=h
  FENCE iser T seqread|... lazy=x fence=y ratio=r lo=l hi=h
  LOC iser stock=N mrkit=N                       registration code lines

and in mode pi (over rxe-pi, T10-PI end to end on a LUN with protection
information), per driver:

  PI iser T stock|mrkit bytes=N errors=N
  PIERR iser T stock|mrkit injected=N detected=N delivered_corrupt=N
  PIDECODE iser T mrkit reads=N decoded=N

PI: the fio verify run on the disk and its read-back; a disk the
initiator saw without T10-DIF integrity counts as an error (the run would
not have tested PI).  PIERR: the single-block writes and reads that
rdma_rxe_pi sent with a byte of data, guard or ref tag flipped; each must
have failed (detected equal to injected, every attempt injected), none
may have returned other data than was written; with mrkit's driver its
integrity pools must have reported signature errors (sig_errors: the
reads' corruption, which the initiator's own MRs catch).  PIDECODE: of
the corrupted reads with mrkit's driver, those whose mrkit_sig_err trace
events all named the block the read began at and the kind of error; all
of them must be.

Throughput is MiB/s, random reads IOPS, medians of the rounds; r is the
median of the per-round ratios, lo-hi its 95% interval
(mrkit_report.fio.ab_figure).  Exits 1 when a
verify or fault run shows a verify error, a leak or a splat, when a run
the guest announced is missing, or when a PI or PIERR rule fails.
"""
import argparse
import os
import re
import sys

from mrkit_report import fio as fio_report


def guest_lines(log):
    out = []
    with open(log, errors="replace") as f:
        for raw in f:
            m = re.search(r"MRKIT-VM (ISER .*)", raw)
            if m:
                out.append(m.group(1).strip())
    return out


def kv(words):
    return dict(w.split("=", 1) for w in words if "=" in w)


def verify_errors(run):
    """Verify failures of one fio run (fio's own count, or a failed job)."""
    return run.get("verify_errors", 0)


def ok_verify(runs, name):
    """(bytes written and verified, errors) of a verify run and its read-back."""
    w, rb = runs.get(name), runs.get(name.replace("verify-", "readback-", 1))
    if not w or not rb or "parse_error" in w or "parse_error" in rb:
        return None
    errs = (verify_errors(w) + verify_errors(rb) + w.get("io_errors", 0) +
            rb.get("io_errors", 0) + w["job_errors"] + rb["job_errors"])
    # Written by the first pass, read back and checked by both.
    done = min(w["write_bytes"], w["read_bytes"], rb["read_bytes"])
    return done, errs


# Mode pi: bytes a driver's verify run must have written and checked.
PI_MIN_BYTES = 8 << 20


def pi_lines(runs, t, pis, pierrs, mode, bad, decodes=(), k=""):
    """The PI, PIERR and PIDECODE lines of mode pi (k: kernel_field), and
    their verdicts into bad."""
    for drv, g in pis:
        v, rb = runs.get(f"pi-{t}-{drv}"), runs.get(f"pireadback-{t}-{drv}")
        if v is None or rb is None:
            bad.append(f"PI {drv}: a run is missing")
            continue
        done = min(v.get("write_bytes", 0), v.get("read_bytes", 0), rb.get("read_bytes", 0))
        errs = fio_report.errors_of(v) + fio_report.errors_of(rb)
        errs += rb.get("read_bytes", 0) < v.get("write_bytes", 0)
        fmt = g.get("integrity", "none")
        if not fmt.startswith("T10-DIF"):
            errs += 1
            bad.append(f"PI {drv}: the disk has no T10-PI (integrity {fmt})")
        print(f"PI iser {t} {drv} bytes={done} errors={errs}{k}")
        print(f"  (fio verify=crc32c on a disk with {fmt}: {v.get('write_bytes', 0)} bytes "
              f"written, {v.get('read_bytes', 0)} read back in the run, "
              f"{rb.get('read_bytes', 0)} in the read-back pass)")
        if errs or done < PI_MIN_BYTES:
            bad.append(f"PI {drv}: errors={errs} bytes={done}")
    for drv, g in pierrs:
        n = {f: int(g.get(f, "0")) for f in ("tried", "injected", "detected",
                                             "delivered_corrupt")}
        print(f"PIERR iser {t} {drv} injected={n['injected']} detected={n['detected']} "
              f"delivered_corrupt={n['delivered_corrupt']}{k}")
        if not n["tried"] or n["injected"] != n["tried"] or n["detected"] != n["injected"] \
           or n["delivered_corrupt"]:
            bad.append(f"PIERR {drv}: {n['tried']} tried, {n['injected']} injected, "
                       f"{n['detected']} detected, {n['delivered_corrupt']} delivered corrupt")
        sig = dict(pis).get(drv, {}).get("sig_errors", "0")
        if drv == "mrkit" and not int(sig):
            bad.append("PIERR mrkit: its integrity pools reported no signature error")
    for drv, g in decodes:
        reads, dec = int(g.get("reads", "0")), int(g.get("decoded", "0"))
        print(f"PIDECODE iser {t} {drv} reads={reads} decoded={dec}{k}")
        if not reads or dec != reads:
            bad.append(f"PIDECODE {drv}: {dec} of {reads} corrupted reads decoded")
    if mode == "pi":
        if [d for d, _ in decodes] != ["mrkit"]:
            bad.append("PIDECODE: mrkit's run expected")
        if sorted(d for d, _ in pis) != ["mrkit", "stock"]:
            bad.append("PI: a run per driver expected")
        if sorted(d for d, _ in pierrs) != ["mrkit", "stock"]:
            bad.append("PIERR: a run per driver expected")


def main(argv=None):
    ap = argparse.ArgumentParser(prog="mrkit_report.iser")
    ap.add_argument("--transport", required=True)
    ap.add_argument("--mode", default="")
    ap.add_argument("--build-log")
    ap.add_argument("log")
    a = ap.parse_args(argv)
    t = a.transport
    runs = fio_report.runs(a.log)
    k = fio_report.kernel_field(fio_report.read(a.log))
    bad = []
    pis, pierrs, decodes, ended = [], [], [], False

    for line in guest_lines(a.log):
        w = line.split()
        if w[1] == "verify" and len(w) >= 4:
            drv = w[3]
            got = ok_verify(runs, f"verify-{t}-{drv}")
            leaks = int(kv(w[4:]).get("leaks", "0"))
            if got is None:
                bad.append(f"verify run {drv} missing")
                continue
            done, errs = got
            if drv == "fence":
                print(f"FENCE iser {t} verify bytes={done} errors={errs}{k}")
            else:
                print(f"VERIFY iser {t} {drv} bytes={done} errors={errs}{k}")
            if errs or leaks or done == 0:
                bad.append(f"verify {drv}: errors={errs} leaks={leaks} bytes={done}")
        elif w[1] == "fault" and len(w) >= 5:
            fault, drv, g = w[3], w[4], kv(w[5:])
            base = f"fault-{t}-{fault}-{drv}"
            parts = [runs.get(base + s) for s in ("-pre", "", "-after", "-after-b")]
            if parts[0] is None or parts[1] is None or parts[2] is None:
                bad.append(f"fault {fault} {drv}: fio runs missing")
                continue
            load = parts[1]
            ios = load["read_ios"] + load["write_ios"]
            failed = max(load["total_err"], load.get("io_errors", 0))
            verr = sum(verify_errors(p) for p in parts if p)
            # Runs after the fault must pass completely.
            verr += sum(p["job_errors"] + p.get("io_errors", 0) for p in parts[2:] if p)
            print(f"FAULT iser {t} {fault} {drv} ios={ios} failed={failed} "
                  f"reconnects={g.get('reconnects', '?')} leaks={g.get('leaks', '?')} "
                  f"verify_errors={verr} splats={g.get('splats', '?')}{k}")
            if verr or g.get("leaks") != "0" or g.get("splats") != "0" or \
               g.get("reconnects", "0") == "0":
                bad.append(f"fault {fault} {drv}")
        elif w[1] == "pi" and len(w) >= 4:
            pis.append((w[3], kv(w[4:])))
        elif w[1] == "pierr" and len(w) >= 4:
            pierrs.append((w[3], kv(w[4:])))
        elif w[1] == "pidecode" and len(w) >= 4:
            decodes.append((w[3], kv(w[4:])))
        elif w[1] == "stats":
            print("STATS iser " + " ".join(w[2:]))
        elif w[1] == "end":
            ended = True
            if kv(w[2:]).get("splats") != "0":
                bad.append("splats at the end")

    pi_lines(runs, t, pis, pierrs, a.mode, bad, decodes, k)
    if a.mode == "pi" and not ended:
        bad.append("the guest did not finish")

    # A/B rounds: ab-T-METRIC-DRIVER-ROUND, each round's runs back to back.
    for mname in fio_report.AB_METRICS:
        for base, other, tag, names in (("stock", "mrkit", "AB", ("stock", "mrkit")),
                                        ("mrkit", "fence", "FENCE", ("lazy", "fence"))):
            fig = fio_report.ab_figure(runs, "iser", t, mname, base, other, bad)
            if fig:
                print(fio_report.ab_line(tag, "iser", t, mname, names, fig))

    if a.build_log and os.path.exists(a.build_log):
        up, ours = fio_report.splice_loc(a.build_log)
        if up:
            print(f"LOC iser stock={up} mrkit={ours}{k}")
    for b in bad:
        print(f"iser-report: FAIL {b}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
