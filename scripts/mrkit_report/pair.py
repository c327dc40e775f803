# SPDX-License-Identifier: GPL-2.0-only
"""The two-guest fault report (scripts/host/vm-pair.sh): a table and FAULT2 lines.

  python3 -m mrkit_report.pair ULP TRANSPORT STEPS INITIATOR_LOG TARGET_LOG...

STEPS is the schedule vm-pair.sh gave the initiator (DRIVER:FAULT,...).  Per
step, from the initiator's console: fio's JSON for the run under the fault
and for the read-back pass after it (mrkit_report.fio), and the guest's
"PAIR fault T FAULT DRIVER reconnects=N stale=N replaced=N reused=N ...
leaks=N splats=N known=N tsplats=N" line (reconnects counted in dmesg;
stale, replaced and reused from mrkit's trace; leaks from mrkit's debugfs
and pool teardown plus MRs left on the device; splats in the initiator's
dmesg, less the warnings of a known cause its guest library names, which
known counts; and tsplats on the target's console over the step).
Prints one row per step and one line

  FAULT2 ULP T FAULT DRIVER ios=N failed=N reconnects=N stale=N leaks=N verify_errors=N splats=N

(ending with " kernel=6.12" when the initiator ran Debian's 6.12 kernel)

and, for a ULP whose guest counts the descriptors its requests took (srp:
"PAIR mrs T FAULT mrkit per_request_max=N multi_mr_requests=N maps=N" per
step of mrkit's driver, from mrkit's map events), one line over the steps

  MRS ULP T per_request_max=N multi_mr_requests=N

(the most descriptors one request's data took, the requests that took
more than one; a run with a step of mrkit's driver and no such request,
or no count, fails)

where ios are the I/Os fio completed (run and read-back), failed the I/Os
fio saw fail, verify_errors fio's verify failures less those at blocks whose
write fio saw fail (never reported written; matched by offset in the guest,
shown apart as vfy@fail) and at reads that returned 0 bytes (a disk
deleted under fio: EOF, not data; vfy@eof), splats the initiator's plus
the target's.  Exits 1 when a
row is missing, a number says the step failed (leaks, verify errors,
splats, a stale descriptor registered again, no I/O, a read-back that did
not finish, no reconnect after linkdown or targetkill), or either guest did
not finish cleanly (initiator PASS, the target's end line with its modules
unloaded).  ULP is nvme, iser, nfs or srp (the same guest lines; a step whose
fio could not be ended, stuck=1, still gets its row, with zeros for what
fio never reported).  A step the initiator crashed in (vm-pair.sh's
"MRKIT-HOST crashed FAULT DRIVER SPLATS" line; it boots the initiator again
for the rest of the schedule) is a failed row with no FAULT2 line.
"""
import os
import re
import sys

from mrkit_report import fio as fio_report

# Faults after which the ULP must have reconnected by itself.  ib_srp has
# no keep-alive: a link down that its RC connection outlives (siw's TCP,
# rxe's retries) is recovered by the SCSI error handler - the commands
# time out, the aborts and the LUN reset are answered once the wire is
# back - on the same connection; only a target that went away needs a
# reconnect.
MUST_RECONNECT = ("linkdown", "targetkill")
MUST_RECONNECT_ULP = {"srp": ("targetkill",)}
# ULPs whose guest counts the descriptors of each request (PAIR_MRS).
MRS_ULPS = ("srp",)
# The fio figures of a run that never ended.
UNFINISHED = dict(read_ios=0, write_ios=0, read_bytes=0, write_bytes=0, unfinished=1)
SPLAT = re.compile(r"BUG:|WARNING:|Oops|general protection|UBSAN|KASAN|"
                   r"list_(add|del) corruption|refcount_t:|blocked for more than")


def target_splats(text, known=""):
    """Splat lines of a target's console, without those matching KNOWN
    (an extended regular expression: warnings of a known cause that
    vm-pair.sh counts apart, from the ULP's #PAIR-HOST line)."""
    kre = re.compile(known) if known else None
    return sum(1 for line in text.splitlines()
               if SPLAT.search(line) and not (kre and kre.search(line)))


def mrs_line(ulp, t, steps, text):
    """The MRS line over the steps' counts; what it proves missing."""
    counts = [dict(x.split("=") for x in m.group(1).split())
              for m in re.finditer(r"MRKIT-VM PAIR mrs \S+ \S+ mrkit ((?:\w+=\d+ ?)+)", text)]
    if counts:
        per = max(int(c.get("per_request_max", 0)) for c in counts)
        multi = sum(int(c.get("multi_mr_requests", 0)) for c in counts)
        print(f"MRS {ulp} {t} per_request_max={per} multi_mr_requests={multi}"
              f"{fio_report.kernel_field(text)}")
    if ulp not in MRS_ULPS or not any(s.startswith("mrkit:") for s in steps.split(",")):
        return []
    if not counts:
        return ["no MRS count from the steps of mrkit's driver"]
    if per < 2 or multi == 0:
        return [f"MRS {t}: no request took several MRs"]
    return []


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    ulp, t, steps, ilog = argv[:4]
    tlogs = argv[4:]
    runs = fio_report.runs(ilog)
    text = fio_report.read(ilog)
    # Each step's facts in schedule order; a step repeated (PAIR_STEPS)
    # has one entry per run, and its fio runs are NAME, NAME#2, ...
    facts = {}
    for m in re.finditer(r"MRKIT-VM PAIR fault (\S+) (\S+) (\S+) ((?:\w+=-?\d+ ?)+)", text):
        kv = dict(x.split("=") for x in m.group(4).split())
        facts.setdefault((m.group(2), m.group(3)), []).append(
            {k: int(v) for k, v in kv.items()})
    # Steps the initiator did not survive (pair.sh booted it again for the
    # rest of the schedule): "MRKIT-HOST crashed FAULT DRIVER SPLATS".
    crashes = {(m.group(1), m.group(2)): int(m.group(3))
               for m in re.finditer(r"MRKIT-HOST crashed (\S+) (\S+) (\d+)", text)}
    bad, rows, seen = [], [], {}
    for step in steps.split(","):
        drv, fault = step.split(":")
        nth = seen.get((fault, drv), 0)
        seen[(fault, drv)] = nth + 1
        sfx = f"#{nth + 1}" if nth else ""
        g = (facts.get((fault, drv)) or [])[nth:nth + 1]
        g = g[0] if g else None
        if g is None and (fault, drv) in crashes:
            # Nothing measured but the crash: a row in the table, no
            # FAULT2 line (its numbers would not be measured ones).
            rows.append(dict(fault=fault, drv=drv, crashed=crashes[(fault, drv)], tsplats=0))
            bad.append(f"{fault} {drv}: the initiator crashed ({crashes[(fault, drv)]} "
                       f"splat lines on its console); the rest of the schedule ran on a new boot")
            continue
        run = runs.get(f"pair-{t}-{fault}-{drv}{sfx}")
        rb = runs.get(f"pair-{t}-{fault}-{drv}-readback{sfx}")
        if g is None or ((run is None or rb is None) and not g.get("stuck")):
            bad.append(f"{fault} {drv}: row missing (the guest did not finish the step)")
            continue
        # A step whose fio could not be ended (stuck=1, pair-lib.sh's
        # pair_step): the row with what was measured, and a failure.
        run = run or dict(UNFINISHED)
        rb = rb or dict(UNFINISHED)
        ios = run["read_ios"] + run["write_ios"] + rb["read_ios"]
        failed = run.get("io_errors", 0) + rb.get("io_errors", 0)
        # Read-back failures at blocks whose write fio saw fail are not
        # silent corruption (never reported written); the guest matched
        # them by offset.
        atfail = g.get("verify_at_failed_writes", 0)
        # fio's verify of reads that returned 0 bytes: EOF of a disk
        # deleted under fio, not data (guest/fail-hits.awk).
        ateof = g.get("verify_at_eof", 0)
        fio_verr = run.get("verify_errors", 0) + rb.get("verify_errors", 0)
        if "verify_inside" in g:
            # The failures the guest placed inside completed writes, plus
            # any fio counted that it could not place (never fewer).
            inside = g["verify_inside"]
            verr = inside + max(0, fio_verr - inside - atfail - ateof)
        else:
            verr = fio_verr - atfail
        splats = g["splats"] + g["tsplats"]
        row = dict(fault=fault, drv=drv, ios=ios, failed=failed, rec=g["reconnects"],
                   stale=g["stale"], replaced=g["replaced"], reused=g["reused"],
                   overrun=g["overrun"], leaks=g["leaks"], verr=verr, splats=splats,
                   tsplats=g["tsplats"], written=run["write_bytes"] >> 20,
                   checked=rb["read_bytes"] >> 20, secs=g.get("secs", 0), atfail=atfail,
                   ateof=ateof)
        rows.append(row)
        why = []
        if g["leaks"]:
            why.append(f"{g['leaks']} leaked")
        if verr:
            why.append(f"{verr} verify errors")
        # Whose kernel: the initiator runs the driver under test, the
        # target only the kernel's own target (nothing of mrkit).
        if g["splats"]:
            why.append(f"{g['splats']} splats on the initiator")
        if g["tsplats"]:
            why.append(f"{g['tsplats']} splats on the target")
        if g["reused"]:
            why.append(f"{g['reused']} REG_MRs of stale MRs")
        if g["overrun"]:
            why.append(f"trace lost {g['overrun']} events (reuse not proven)")
        if "parse_error" in run or "parse_error" in rb:
            why.append("fio output unreadable")
        if not run["write_ios"]:
            why.append("no write completed")
        # fio's job error after a verify failure is EILSEQ; any other
        # (an I/O error) means the read-back did not finish.
        if g.get("target_resets"):
            why.append(f"the target took no new session until power-cycled "
                       f"({g['target_resets']}x)")
        if g.get("stuck"):
            why.append("fio did not end, even after the session or mount was deleted")
        if rb.get("unfinished") or ((rb.get("job_errors") or rb.get("rc"))
                                    and not rb.get("verify_errors")):
            why.append("the read-back did not finish")
        if fault in MUST_RECONNECT_ULP.get(ulp, MUST_RECONNECT) and not g["reconnects"]:
            why.append("no reconnect")
        bad += [f"{fault} {drv}: {w}" for w in why]

    hdr = ("fault", "provider", "driver", "ios", "failed", "reconn", "stale", "replaced",
           "reused", "leaks", "verify_err", "vfy@fail", "vfy@eof", "splats", "MiB wr", "MiB chk",
           "secs")
    fmt = ("{:<11} {:<8} {:<6} {:>7} {:>6} {:>6} {:>5} {:>8} {:>6} {:>5} {:>10} {:>8} {:>7} {:>6}"
           " {:>6} {:>7} {:>5}")
    print(fmt.format(*hdr))
    for r in rows:
        if "crashed" in r:
            print(f"{r['fault']:<11} {t:<8} {r['drv']:<6} the initiator crashed "
                  f"({r['crashed']} splat lines), no figures")
            continue
        print(fmt.format(r["fault"], t, r["drv"], r["ios"], r["failed"], r["rec"], r["stale"],
                         r["replaced"], r["reused"], r["leaks"], r["verr"], r["atfail"], r["ateof"],
                         r["splats"], r["written"], r["checked"], r["secs"]))
    kernel = fio_report.kernel_field(text)
    for r in rows:
        if "crashed" in r:
            continue
        print(f"FAULT2 {ulp} {t} {r['fault']} {r['drv']} ios={r['ios']} failed={r['failed']} "
              f"reconnects={r['rec']} stale={r['stale']} leaks={r['leaks']} "
              f"verify_errors={r['verr']} splats={r['splats']}{kernel}")

    bad += mrs_line(ulp, t, steps, text)

    if not re.search(r"MRKIT-VM PASS pair", text):
        bad.append("the initiator did not pass (modules not unloaded, a splat, or it stopped)")
    end = re.search(r"MRKIT-VM PAIR target ok end_splats=(\d+) unload=(\S+)", text)
    if not end or end.group(1) != "0" or end.group(2) != "ok":
        bad.append("the target did not end cleanly (splats, its modules not unloaded, or no end line)")
    # Splats on a target's console outside any step (boot, teardown).
    total = sum(target_splats(fio_report.read(p), os.environ.get("MRKIT_PAIR_TKNOWN", ""))
                for p in tlogs)
    if total > sum(r["tsplats"] for r in rows):
        bad.append(f"{total} splats on the target's consoles")
    for b in bad:
        print(f"pair-report: FAILED: {b}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
