# SPDX-License-Identifier: GPL-2.0-only
"""The nvme-rdma report: VERIFY / FAULT / AB / PI / LOC lines, from measured values.

  python3 -m mrkit_report.nvme CONSOLE_LOG BUILD_LOG MODE

CONSOLE_LOG is the guest console of scripts/guest/init-ulp-nvme.sh: fio's JSON
for every run (read with mrkit_report.fio) and the guest's "NVME ..." lines
(reconnects counted in dmesg, leaks from mrkit's debugfs and pool
teardown messages plus MRs left on the device, splats in dmesg).
BUILD_LOG holds splice.py's "SPLICE-LOC" line: code lines (neither blank
nor comment-only) of the upstream regions the conversion replaced or
deleted, and of ours that replaced them.  Exits 1 when a number says the
run failed: a verify error, too few bytes verified, a leak, a splat, an
expected run missing, or a port fault without a reconnect.  Mode pi
(over rxe-pi): for each driver the guest names on its "NVME pi_drivers"
line (both when it names none), a verify run and its read-back on the
namespace with T10-PI, as

  PI nvme PROVIDER DRIVER bytes=N errors=N

where a namespace the host saw without integrity counts as an error (the
run would not have tested PI), and

  PIERR nvme PROVIDER DRIVER injected=N detected=N delivered_corrupt=N

for the single-block writes and reads that rdma_rxe_pi sent with a byte
of data, guard or ref tag flipped: each must have failed (detected equal
to injected, every attempt injected), none may have returned other data
than was written; with mrkit's driver, its integrity pools must have
reported signature errors (sig_errors: the reads' corruption, which the
host's own MRs catch), and

  PIDECODE nvme PROVIDER mrkit reads=N decoded=N

for mrkit's driver: of the corrupted reads, those whose mrkit_sig_err
trace events all named the block the read began at and the kind of
error (bad guard for a flipped data byte or guard, bad ref tag for a
flipped ref tag); every read must be decoded.
"""
import re
import sys

from mrkit_report import fio as fio_report

MIN_BYTES = {"check": 16 << 20, "demo": 256 << 20, "pi": 16 << 20}


def errors_of(r):
    """Errors fio reported for one run: verify failures, I/O errors, exits."""
    return (r.get("verify_errors", 0) + r.get("total_err", 0) + r.get("job_errors", 0)
            + (1 if r.get("rc", 0) else 0) + (1 if "parse_error" in r else 0))


def main(argv=None):
    log, build, mode = (sys.argv[1:] if argv is None else argv)[:3]
    runs = fio_report.runs(log)
    bad = []
    text = fio_report.read(log)
    k = fio_report.kernel_field(text)
    faults = re.findall(r"NVME fault (\S+) (\S+) (\S+) reconnects=(\d+) leaks=(-?\d+) splats=(\d+)", text)
    # The provider is what stands between the run's kind and its driver
    # ("verify-rxe-pi-mrkit": rxe-pi); the A/B runs name it after "ab-".
    transports = sorted({m.group(1) for m in (re.fullmatch(r"(?:verify|readback)-(.+)-(?:stock|mrkit)", k)
                                              for k in runs) if m} |
                        {k.split("-")[1] for k in runs if k.startswith("ab-")})

    for t in transports:
        for drv in ("stock", "mrkit"):
            v, rb = runs.get(f"verify-{t}-{drv}"), runs.get(f"readback-{t}-{drv}")
            if v is None:
                continue
            if rb is None:
                bad.append(f"no read-back pass for {t} {drv}")
                rb = {"read_bytes": 0}
            verified = min(v["write_bytes"], v["read_bytes"])
            errs = errors_of(v) + errors_of(rb)
            if rb["read_bytes"] < v["write_bytes"]:
                errs += 1
            print(f"VERIFY nvme {t} {drv} bytes={verified} errors={errs}{k}")
            print(f"  (fio verify=crc32c: {v['write_bytes']} bytes written, {v['read_bytes']} read back "
                  f"and checked in the run, {rb['read_bytes']} in the separate read-back pass)")
            if errs or verified < MIN_BYTES.get(mode, 1):
                bad.append(f"VERIFY {t} {drv}")

    pis = re.findall(r"NVME pi (\S+) (\S+) integrity=(\S+)", text)
    for t, drv, fmt in pis:
        v, rb = runs.get(f"pi-{t}-{drv}"), runs.get(f"pireadback-{t}-{drv}")
        if v is None or rb is None:
            bad.append(f"PI {t} {drv}: a run is missing")
            continue
        verified = min(v["write_bytes"], v["read_bytes"])
        errs = errors_of(v) + errors_of(rb) + (rb["read_bytes"] < v["write_bytes"])
        if not fmt.startswith("T10-DIF"):
            errs += 1
            bad.append(f"PI {t} {drv}: the namespace has no T10-PI (integrity {fmt})")
        print(f"PI nvme {t} {drv} bytes={verified} errors={errs}{k}")
        print(f"  (fio verify=crc32c on a namespace with {fmt}: {v['write_bytes']} bytes written, "
              f"{v['read_bytes']} read back in the run, {rb['read_bytes']} in the read-back pass)")
        if errs or verified < MIN_BYTES["pi"]:
            bad.append(f"PI {t} {drv}")
    # The drivers the guest ran with PI (vm-ulp.sh's ULP_DRIVERS), mrkit's
    # always among them; both when the guest did not say.
    m = re.search(r"NVME pi_drivers (\S+)", text)
    want = sorted(m.group(1).split(",")) if m else ["mrkit", "stock"]
    if mode == "pi" and "mrkit" not in want:
        bad.append("PI: mrkit's driver did not run")
    if mode == "pi" and sorted(d for _, d, _ in pis) != want:
        bad.append("PI: a run per driver expected")
    errs = re.findall(r"NVME pierr (\S+) (\S+) tried=(\d+) injected=(\d+) detected=(\d+) "
                      r"delivered_corrupt=(\d+)", text)
    for t, drv, tried, inj, det, corrupt in errs:
        print(f"PIERR nvme {t} {drv} injected={inj} detected={det} delivered_corrupt={corrupt}{k}")
        if int(tried) == 0 or inj != tried or det != inj or int(corrupt):
            bad.append(f"PIERR {t} {drv}: {tried} tried, {inj} injected, {det} detected, "
                       f"{corrupt} delivered corrupt")
    sig = dict(re.findall(r"NVME pi (\S+) mrkit integrity=\S+ pools:.*?sig_errors=(\d+)", text))
    for t, drv, *_ in errs:
        if drv == "mrkit" and not int(sig.get(t, 0)):
            bad.append(f"PIERR {t} mrkit: its integrity pools reported no signature error")
    if mode == "pi" and sorted(d for _, d, *_ in errs) != want:
        bad.append("PIERR: a run per driver expected")
    decs = re.findall(r"NVME pidecode (\S+) mrkit reads=(\d+) decoded=(\d+)", text)
    for t, reads, dec in decs:
        print(f"PIDECODE nvme {t} mrkit reads={reads} decoded={dec}{k}")
        if not int(reads) or dec != reads:
            bad.append(f"PIDECODE {t} mrkit: {dec} of {reads} corrupted reads decoded")
    if mode == "pi" and len(decs) != 1:
        bad.append("PIDECODE: mrkit's run expected")

    for t, fault, drv, rec, leaks, splats in faults:
        f = runs.get(f"fault-{t}-{fault}-{drv}", {"parse_error": "missing"})
        rb = runs.get(f"fault-{t}-{fault}-{drv}-readback", {})
        ios = f.get("read_ios", 0) + f.get("write_ios", 0) + rb.get("read_ios", 0)
        verr = f.get("verify_errors", 0) + rb.get("verify_errors", 0)
        # I/Os fio saw fail (each reported on its stderr): allowed, unlike
        # a verify error.
        failed = f.get("io_errors", 0) + rb.get("io_errors", 0)
        print(f"FAULT nvme {t} {fault} {drv} ios={ios} failed={failed} reconnects={rec} "
              f"leaks={leaks} verify_errors={verr} splats={splats}{k}")
        if verr or int(leaks) or int(splats) or "parse_error" in f or ios == 0:
            bad.append(f"FAULT {t} {fault} {drv}")
        if fault == "portcycle" and int(rec) == 0:
            bad.append(f"FAULT {t} portcycle {drv}: no reconnect")

    for t in transports:
        for name in fio_report.AB_METRICS:
            fig = fio_report.ab_figure(runs, "nvme", t, name, "stock", "mrkit", bad)
            if fig:
                print(fio_report.ab_line("AB", "nvme", t, name, ("stock", "mrkit"), fig))

    loc = re.search(r"SPLICE-LOC rdma.c upstream=(\d+) ours=(\d+)", fio_report.read(build))
    if loc:
        print(f"LOC nvme stock={loc.group(1)} mrkit={loc.group(2)}{k}")
    else:
        bad.append("no SPLICE-LOC line in the build log")

    for name, r in runs.items():
        if r.get("verify_errors", 0) or "parse_error" in r:
            bad.append(f"fio run {name}: {r.get('verify_errors', 0)} verify errors"
                       f"{' (unreadable output)' if 'parse_error' in r else ''}")
    if not re.search(r"NVME end splats=0", text):
        bad.append("splats in dmesg (or the guest did not finish)")
    if mode in ("check", "demo") and not any(k.startswith("verify-") for k in runs):
        bad.append("no verify run")
    if mode in ("check", "demo") and not faults:
        bad.append("no fault run")
    if mode == "bench" and not any(k.startswith("ab-") for k in runs):
        bad.append("no A/B run")
    for b in bad:
        print(f"nvme-report: FAILED: {b}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
