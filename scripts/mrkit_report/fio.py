# SPDX-License-Identifier: GPL-2.0-only
"""Read the fio runs a ULP guest printed (scripts/guest/ulp-lib.sh ulp_fio).

Each run is a "MRKIT-FIO-BEGIN NAME k=v..." line, fio's JSON output, and a
"MRKIT-FIO-END NAME" line in the console log.  As a module: runs(log)
returns {name: summary}; run as "python3 -m mrkit_report.fio LOG" it prints one
"FIO NAME key=value..." line per run.  A summary sums over fio's jobs:
read_bytes write_bytes read_ios write_ios (completed I/Os), read_bw and
write_bw (KiB/s), read_iops write_iops, job_errors (jobs that ended with an
error), total_err (errors fio counted and continued past), and the
guest's own counts from fio's stderr (rc, verify_errors, io_errors).
Shared by the ULP reports as well: ab_metric(run, name) (MiB/s for
seqread/seqwrite, IOPS for randread4k), errors_of(run), ab_figure() and
ab_line() (an interleaved A/B taken round by round, with its interval),
splice_loc(build_log) (summed SPLICE-LOC upstream and ours), and
kernel_field(text) (the " kernel=SERIES" their lines end with when the
guest booted another kernel than 6.1).
"""
import json
import re
import sys

from mrkit_report import stats

TS = re.compile(r"^\[\s*\d+\.\d+\]")


def summarize(doc, meta):
    s = dict(meta)
    for d in ("read", "write"):
        s[d + "_bytes"] = sum(j[d]["io_bytes"] for j in doc["jobs"])
        s[d + "_ios"] = sum(j[d]["total_ios"] for j in doc["jobs"])
        s[d + "_bw"] = sum(j[d]["bw"] for j in doc["jobs"])
        s[d + "_iops"] = round(sum(j[d]["iops"] for j in doc["jobs"]), 1)
    s["job_errors"] = sum(1 for j in doc["jobs"] if j.get("error"))
    s["total_err"] = sum(j.get("total_err", 0) for j in doc["jobs"])
    return s


def read(path):
    """A log's text (undecodable bytes replaced)."""
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def runs(path):
    out, cur, buf, meta = {}, None, [], {}
    with open(path, errors="replace") as f:
        for raw in f:
            line = raw.rstrip("\r\n")
            m = re.search(r"MRKIT-FIO-BEGIN (\S+)(.*)", line)
            if m:
                cur, buf = m.group(1), []
                meta = dict(kv.split("=", 1) for kv in m.group(2).split() if "=" in kv)
                meta = {k: int(v) if v.lstrip("-").isdigit() else v for k, v in meta.items()}
                continue
            if cur and re.search(r"MRKIT-FIO-END " + re.escape(cur) + r"\b", line):
                # A name run again (a step repeated) keeps each run:
                # NAME, NAME#2, NAME#3, ...
                key, n = cur, 2
                while key in out:
                    key, n = f"{cur}#{n}", n + 1
                try:
                    out[key] = summarize(json.loads("\n".join(buf)), meta)
                except (ValueError, KeyError) as e:
                    out[key] = dict(meta, parse_error=str(e))
                cur = None
                continue
            if cur and not TS.match(line):
                buf.append(line)
    return out


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    for name, s in runs(argv[0]).items():
        print("FIO " + name + " " + " ".join(f"{k}={v}" for k, v in s.items()))


def ab_metric(run, name):
    """An A/B job's figure: IOPS for randread4k, else MiB/s."""
    if name == "randread4k":
        return run["read_iops"]
    return run["read_bw" if name == "seqread" else "write_bw"] / 1024.0


AB_METRICS = ("seqread", "seqwrite", "randread4k")


def errors_of(run):
    """Errors fio reported for one run: verify failures, I/O errors, exits."""
    return (run.get("verify_errors", 0) + run.get("io_errors", 0) + run.get("job_errors", 0)
            + run.get("total_err", 0) + (1 if run.get("rc", 0) else 0)
            + (1 if "parse_error" in run else 0))


def ab_rounds(runs, t, metric, drivers):
    """{round: {driver: run}} of the runs named ab-T-METRIC-DRIVER-ROUND.

    Round 0 only writes the data the later rounds read, and is left out.
    """
    got = {}
    pat = re.compile(rf"ab-{re.escape(t)}-{re.escape(metric)}-({'|'.join(drivers)})-(\d+)")
    for k, r in runs.items():
        m = pat.fullmatch(k)
        if m and int(m.group(2)) > 0:
            got.setdefault(int(m.group(2)), {})[m.group(1)] = r
    return got


def ab_figure(runs, ulp, t, metric, base, other, bad, level=stats.LEVEL):
    """One A/B figure of an interleaved schedule, taken round by round.

    The two drivers' runs of a round ran back to back, in an order that
    alternates from round to round, so each round gives one ratio
    other/base: the figure is the median of those ratios and its
    bootstrap interval (stats.figure; 95% unless @level says otherwise),
    never a ratio of two medians.  A
    round with a run missing or failed is named in @bad and left out.
    Returns (base's median, other's median, figure with its per-round
    ratios as "rounds"), or None if no round has both runs.
    """
    pairs, vals = [], {base: [], other: []}
    for rnd, p in sorted(ab_rounds(runs, t, metric, (base, other)).items()):
        if len(p) != 2 or any(errors_of(r) for r in p.values()):
            bad.append(f"AB {t} {metric} round {rnd}: a run is missing or failed")
            continue
        x, y = ab_metric(p[base], metric), ab_metric(p[other], metric)
        vals[base].append(x)
        vals[other].append(y)
        pairs.append((y, x, 1))
    if not pairs:
        return None
    fig = stats.figure(pairs, f"{ulp} {t} {metric} {other}/{base}", level)
    fig["rounds"] = [y / x for y, x, _ in pairs]
    return stats.median(vals[base]), stats.median(vals[other]), fig


def ab_line(tag, ulp, t, metric, names, fig):
    """The report line of ab_figure()'s result: TAG ULP T METRIC A=x B=y ratio lo hi."""
    x, y, f = fig
    fmt = "%.0f" if metric == "randread4k" else "%.1f"
    return (f"{tag} {ulp} {t} {metric} {names[0]}={fmt % x} {names[1]}={fmt % y} "
            f"ratio={f['ratio']:.3f} lo={f['lo']:.3f} hi={f['hi']:.3f}")


def kernel_field(text):
    """" kernel=6.12" when the guest's "MRKIT-VM kernel RELEASE" line names
    another kernel series than 6.1, else "" (6.1's lines are as they were)."""
    m = re.search(r"MRKIT-VM kernel (\d+)\.(\d+)", text)
    if not m or (m.group(1), m.group(2)) == ("6", "1"):
        return ""
    return f" kernel={m.group(1)}.{m.group(2)}"


def splice_loc(build_log):
    """(upstream, ours) code lines from splice.py's SPLICE-LOC lines."""
    up = ours = 0
    with open(build_log, errors="replace") as f:
        for line in f:
            m = re.match(r"SPLICE-LOC (\S+) upstream=(\d+) ours=(\d+)", line)
            if m:
                up += int(m.group(2))
                ours += int(m.group(3))
    return up, ours


if __name__ == "__main__":
    main()
