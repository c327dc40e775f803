# SPDX-License-Identifier: GPL-2.0-only
"""make bench's report, from the benchmarks' raw per-burst lines.

  python3 -m mrkit_report.bench parse --uml LOG --vm LOG [--atomics LOG] [--icount LOG]
          [--ab OUT...] [--ab-logs LOG...] --out RESULTS.json [--proj DIR]
      every figure (PARITY lines: the median of the paired ratios, its 95%
      bootstrap interval, the extra ns per operation), the instructions of
      one cycle (ICOUNT lines, from scripts/host/icount.sh), MEMORY, the ULPs'
      A/B rows (their AB lines), the goals as met / not met from the
      intervals' upper bounds (the A/B goal: every row's simultaneous
      interval, from the rounds in the console logs, at or above 1.0), and for each goal
      not met a COST line saying what is left, from this run's figures;
      all of it, with the machine, the kernels, the date and the commit,
      into RESULTS.json.
  python3 -m mrkit_report.bench table RESULTS.json
      the short performance table for the documentation (Markdown), from
      such a file: nothing in it is written by hand.
  python3 -m mrkit_report.bench boots OLD_LOG NEW_LOG
      two builds of the guest's benchmark against each other, from boots
      of each taken in turn (scripts/host/bench-boots.sh): per figure,
      each boot's median ratio to the baseline, and the change from the
      old build to the new one boot by boot, with its 95% interval from
      the boots' order statistics (BOOTS lines).

The statistics are scripts/mrkit_report/stats.py's.
"""

import argparse
import datetime
import json
import os
import platform
import re
import subprocess
import sys

from mrkit_report import fio, stats

BASELINE = {"W1": "ib_mr_pool", "W2": "ib_map_mr_sg", "W3": "nvme_style",
            "W3SMP": "nvme_style"}
LOCAL_INV = ("local_inv", "caller_mapped")
REMOTE_INV = ("remote_inv", "caller_mapped_remote_inv")
MRKIT = ("mrkit_fence", "mrkit_lazy", "mrkit_cached")


def goal_defs():
    """(name, limit, predicate over a figure) for every goal."""
    g = []
    for where, w, pre in (("UML", "W3", ""), ("SMP guest, same CPU", "W3SMP", "same_")):
        loc = tuple(pre + v for v in LOCAL_INV)
        rem = tuple(pre + v for v in REMOTE_INV)
        g.append((f"W3 fence and lazy vs nvme_style, 1 and 16 pages ({where})", 1.00,
                  lambda f, w=w, loc=loc: f["w"] == w and f["variant"] in loc and
                  f["impl"] in MRKIT[:2] and f["pages"] in (1, 16)))
        g.append((f"W3 fence and lazy vs nvme_style, 256 pages ({where})", 1.05,
                  lambda f, w=w, loc=loc: f["w"] == w and f["variant"] in loc and
                  f["impl"] in MRKIT[:2] and f["pages"] == 256))
        g.append((f"W3 cached vs nvme_style, one page ({where})", 0.80,
                  lambda f, w=w, loc=loc, rem=rem: f["w"] == w and f["variant"] in loc + rem and
                  f["impl"] == "mrkit_cached" and f["pages"] == 1))
        g.append((f"W3 remote invalidation vs nvme_style ({where})", 1.00,
                  lambda f, w=w, rem=rem: f["w"] == w and f["variant"] in rem))
    for dev in ("rxe", "siw"):
        g.append((f"W2 map vs bare ib_map_mr_sg, every layout and size ({dev})", 1.05,
                  lambda f, dev=dev: f["w"] == "W2" and f["variant"].startswith(dev + "_")))
    g.append(("W1 with per-I/O caching vs ib_mr_pool (UML)", 0.50,
              lambda f: f["w"] == "W1" and f["impl"] == "mrkit_cached"))
    return g


def last(pattern, lines):
    """The groups of the last line matching pattern, or None."""
    m = None
    for line in lines:
        x = re.search(pattern, line)
        if x:
            m = x
    return m.groups() if m else None


def git(proj, *args):
    try:
        return subprocess.run(["git", "-C", proj, *args], capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


def machine():
    model = "?"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"cpu_model": model, "nproc": os.cpu_count(), "host_kernel": platform.release()}


def figures(lines):
    out = []
    for (w, var, pages, impl, base), pairs in stats.parse_pairs(lines).items():
        f = stats.figure(pairs, f"{w} {var} {pages} {impl} {base}")
        out.append({"w": w, "variant": var, "pages": pages, "impl": impl, "baseline": base, **f})
    return out


def find(figs, w, variant, pages, impl):
    for f in figs:
        if (f["w"], f["variant"], f["pages"], f["impl"]) == (w, variant, pages, impl):
            return f
    return None


def stage_line(f):
    """One stage of W2's map and release: its cost, from the pair (stage, previous)."""
    return (f"STAGE W2 {f['variant']} pages={f['pages']} {f['impl']} over={f['baseline']} "
            f"extra_ns={f['extra_ns']:.1f} ratio={f['ratio']:.3f} lo={f['lo']:.3f} hi={f['hi']:.3f}")


def stage_split(stages, dev, pages):
    """W2's cost over a bare map on one device, stage by stage, or None."""
    sel = [f for f in stages if f["variant"] == f"{dev}_pages" and f["pages"] == pages]
    if not sel:
        return None
    parts = ", ".join(f"{f['impl']} {f['extra_ns']:.1f}" for f in sel)
    tot = sum(f["extra_ns"] for f in sel)
    return f"{tot:.1f} ns over a bare map on {dev} at {pages} page(s), by stage (ns): {parts}"


_PROF_HEAD = re.compile(r"BENCH PROFILE (W\d\w*) (\S+) pages=(\d+) (\S+) ios=(\d+) elapsed_ns=(\d+) "
                        r"samples=(\d+)")
_PROF_FN = re.compile(r"BENCH PROFILE (W\d\w*) (\S+) pages=(\d+) (\S+) fn=(\S+) hits=(\d+)")


def profiles(lines):
    """W3PROF's sampling profiles: one dict per implementation profiled.

    ns_per_io is the profiled run's elapsed time over its I/Os; each
    function's ns its share of the samples of that; mrkit_ns the functions
    named mrkit_*.  A later profile of the same figure replaces an earlier.
    """
    out = {}
    for line in lines:
        m = _PROF_HEAD.search(line)
        if m:
            w, var, pages, impl, ios, ns, samples = m.groups()
            if int(ios) and int(samples):
                out[(w, var, int(pages), impl)] = {
                    "w": w, "variant": var, "pages": int(pages), "impl": impl,
                    "ns_per_io": int(ns) / int(ios), "samples": int(samples), "fns": []}
            continue
        m = _PROF_FN.search(line)
        if m:
            w, var, pages, impl, fn, hits = m.groups()
            p = out.get((w, var, int(pages), impl))
            if p:
                p["fns"].append({"fn": fn, "hits": int(hits),
                                 "ns": int(hits) / p["samples"] * p["ns_per_io"]})
    for p in out.values():
        p["mrkit_ns"] = sum(f["ns"] for f in p["fns"] if f["fn"].startswith("mrkit_"))
    return list(out.values())


def profile_line(p, top=8):
    """One profile: ns per I/O, how much of it in mrkit's functions, the top ones."""
    fns = " ".join(f"{f['fn']}:{f['ns']:.1f}" for f in p["fns"][:top])
    return (f"PROFILE {p['w']} {p['variant']} pages={p['pages']} {p['impl']} "
            f"ns_per_io={p['ns_per_io']:.1f} samples={p['samples']} mrkit_ns={p['mrkit_ns']:.1f} "
            f"top={fns}")


_ICOUNT = re.compile(r"^ICOUNT (W\d\w*) (\S+) pages=(\d+) (\S+) insns=(\d+) mrkit=(\d+)"
                     r"(?: irqemu=(\d+))? top=(\S*)")


def icounts(lines):
    """W3ICOUNT's counted cycles, each with its ratio to the baseline's count.

    insns: every instruction the cycle executed; mrkit: those in mrkit's
    functions; irqemu: those in UML's emulation of the interrupt flag
    (scripts/host/icount.py), which an x86 kernel does inline: the ratio
    without them on both sides is less_irqemu; top: the functions that
    executed most, with their counts.
    """
    out = {}
    for line in lines:
        m = _ICOUNT.search(line)
        if not m:
            continue
        w, var, pages, impl, insns, mrkit, irqemu, top = m.groups()
        fns = [(f, int(k)) for f, k in (t.rsplit(":", 1) for t in top.split(",") if ":" in t)]
        out[(w, var, int(pages), impl)] = {"w": w, "variant": var, "pages": int(pages), "impl": impl,
                                           "insns": int(insns), "mrkit": int(mrkit),
                                           "irqemu": None if irqemu is None else int(irqemu),
                                           "fns": fns}
    for c in out.values():
        base = out.get((c["w"], c["variant"], c["pages"], BASELINE.get(c["w"])))
        if base and c is not base and base["insns"]:
            c["base_insns"] = base["insns"]
            c["ratio"] = c["insns"] / base["insns"]
            if c["irqemu"] is not None and base["irqemu"] is not None and \
               base["insns"] > base["irqemu"]:
                c["base_irqemu"] = base["irqemu"]
                c["less_irqemu"] = (c["insns"] - c["irqemu"]) / (base["insns"] - base["irqemu"])
    return list(out.values())


def icount_line(c, top=6):
    """One counted cycle: its instructions, mrkit's share, the ratios, the top functions."""
    fns = ",".join(f"{f}:{k}" for f, k in c["fns"][:top])
    ratio = (f" ratio={c['ratio']:.3f} base={BASELINE.get(c['w'])} base_insns={c['base_insns']}"
             if "ratio" in c else "")
    if "less_irqemu" in c:
        ratio += f" less_irqemu={c['less_irqemu']:.3f}"
    irqemu = f" irqemu={c['irqemu']}" if c["irqemu"] is not None else ""
    return (f"ICOUNT {c['w']} {c['variant']} pages={c['pages']} {c['impl']} insns={c['insns']} "
            f"mrkit={c['mrkit']}{irqemu}{ratio} top={fns}")


def icount_cost(counts, variant, pages, impl):
    """The COST line's instruction count of one W3 figure, or None."""
    c = next((c for c in counts if (c["w"], c["variant"], c["pages"], c["impl"]) ==
              ("W3", variant, pages, impl) and "ratio" in c), None)
    if not c:
        return None
    mine = ", ".join(f"{f} {k}" for f, k in c["fns"] if f.startswith(("mrkit_", "__mrkit_")))
    line = (f"counted (W3ICOUNT, {variant}, pages={pages}), one {impl} cycle executes {c['insns']} "
            f"instructions against nvme_style's {c['base_insns']} ({c['ratio']:.3f} x); {c['mrkit']} of "
            f"them in mrkit's functions ({mine}): parity needs {c['insns'] - c['base_insns']} fewer")
    if "less_irqemu" in c:
        mine_less = c["insns"] - c["irqemu"]
        base_less = c["base_insns"] - c["base_irqemu"]
        line += (f"; {mine_less - base_less} fewer ({c['less_irqemu']:.3f} x) without the "
                 f"{c['base_irqemu'] - c['irqemu']} more of UML's interrupt-flag emulation the baseline "
                 f"executes, which an x86 kernel does inline")
    return line


def icount_entry_cost(counts, variant, impl, pages):
    """The COST line's per-entry instruction count of one W3 figure at
    @pages: from the counts at 1 and @pages pages where both are counted,
    else from those at 1 and 16; or None."""
    def get(n, who):
        return next((c for c in counts if (c["w"], c["variant"], c["pages"], c["impl"]) ==
                     ("W3", variant, n, who)), None)
    far = pages if get(pages, impl) and get(pages, BASELINE["W3"]) else 16
    one, end, b1, bend = (get(1, impl), get(far, impl), get(1, BASELINE["W3"]),
                          get(far, BASELINE["W3"]))
    if not (one and end and b1 and bend):
        return None
    steps = far - 1
    mine = (end["insns"] - one["insns"]) / steps
    base = (bend["insns"] - b1["insns"]) / steps
    own = (end["mrkit"] - one["mrkit"]) / steps
    total = one["insns"] + mine * (pages - 1)
    before = dict(one["fns"])
    grown = ", ".join(f"{f} {(k - before.get(f, 0)) / steps:.1f}" for f, k in end["fns"]
                      if f.startswith(("mrkit_", "__mrkit_")) and k > before.get(f, 0))
    return (f"counted (W3ICOUNT, {variant}, 1 and {far} pages), each further entry of the list costs "
            f"{mine:.1f} instructions against nvme_style's {base:.1f}, {own:.1f} of them in mrkit's "
            f"functions ({grown or 'none of them grows'}); at {pages} "
            f"pages that is {(mine - base) * (pages - 1):.0f} instructions more in a cycle of "
            f"{'' if far == pages else 'about '}{total:.0f} "
            f"({100 * (mine - base) * (pages - 1) / total:.1f}%)")


def profile_cost(profs, variant, impl):
    """The COST line's profile of one W3 figure against the baseline's, or None."""
    sel = {p["impl"]: p for p in profs if p["w"] == "W3" and p["variant"] == variant}
    m, base = sel.get(impl), sel.get("nvme_style")
    if not m or not base:
        return None
    top = ", ".join(f"{f['fn']} {f['ns']:.1f}" for f in m["fns"][:5])
    return (f"the sampling profile (W3PROF, {variant}, pages={m['pages']}) puts {m['mrkit_ns']:.1f} of "
            f"{impl}'s {m['ns_per_io']:.1f} ns per I/O in mrkit's own functions, spread over "
            f"{sum(1 for f in m['fns'] if f['fn'].startswith('mrkit_'))} of them (top: {top}), against "
            f"nvme_style's {base['ns_per_io']:.1f} ns per I/O in all")


def w3_split(figs, stages, var, pages, impl):
    """UML's W3 extra per I/O split by the figures that measure its parts
    apart, or None: the descriptor (W1 d32_get1: mrkit's get and put
    against ib_mr_pool's, which the baseline pays too), the map and
    release beyond a bare map less the descriptor (W2 rxe_page_entries
    less W2STAGE's pool stage, at the same size), and the rest.  Separate
    runs: when the parts exceed the whole, the line says so instead of
    printing a negative rest."""
    w3 = find(figs, "W3", var, pages, impl)
    pool = find(figs, "W1", "d32_get1", 1, "mrkit_fence")
    w2 = find(figs, "W2", "rxe_page_entries", pages, "mrkit_fence")
    desc = find(stages, "W2STAGE", "rxe_pages", pages, "pool")
    if not (w3 and pool and w2 and desc):
        return None
    tot = w3["extra_ns"]
    mapped = w2["extra_ns"] - desc["extra_ns"]
    rest = tot - pool["extra_ns"] - mapped
    share = (lambda v: f" ({100 * v / tot:.0f}%)") if tot > 0 else (lambda v: "")
    line = (f"UML's {tot:.1f} ns extra per I/O ({var}, pages={pages}, {impl}) = the descriptor's get "
            f"and put against ib_mr_pool's {pool['extra_ns']:.1f}{share(pool['extra_ns'])} (W1 d32_get1) "
            f"+ map and release beyond a bare map, less the descriptor, {mapped:.1f}{share(mapped)} "
            f"(W2 rxe_page_entries {w2['extra_ns']:.1f} less W2STAGE pool {desc['extra_ns']:.1f})")
    if rest >= 0:
        return line + (f" + the rest {rest:.1f}{share(rest)} (I/O state, chain building, "
                       f"invalidation bookkeeping)")
    return line + (f"; these parts, measured in separate runs, exceed the whole by {-rest:.1f} ns "
                   f"at this size, so nothing is left to the rest")


def costs(goal, limit, bad, figs, mem, stages=(), profs=(), counts=()):
    """What is left of one unmet goal: lines from this run's figures."""
    out = []
    worst = max(bad, key=lambda f: f["ratio"])
    left = (worst["ratio"] - limit) * worst["base_ns"]
    out.append(f"COST {goal}: {len(bad)} figure(s) with hi above {limit:.2f}; the furthest, {worst['w']} "
               f"{worst['variant']} pages={worst['pages']} {worst['impl']}: {worst['ratio']:.3f} x "
               f"(hi {worst['hi']:.3f}), {worst['extra_ns']:.1f} ns per operation over the baseline's "
               f"{worst['base_ns']:.1f}: " + (
                   f"{left:.1f} ns to remove for the median to reach {limit:.2f} x, more for the upper "
                   f"bound" if left > 0 else
                   f"the median is within {limit:.2f} x, the upper bound {worst['hi'] - limit:.3f} x "
                   f"({(worst['hi'] - limit) * worst['base_ns']:.1f} ns) over it"))
    if worst["w"] in ("W3", "W3SMP"):
        var = worst["variant"].removeprefix("same_").removeprefix("cross_")
        split = w3_split(figs, stages, var, worst["pages"], worst["impl"])
        if split:
            out.append(f"COST {goal}: {split}")
        prof = profile_cost(profs, var, worst["impl"]) or profile_cost(profs, "local_inv", worst["impl"])
        if prof and worst["pages"] == 1:
            out.append(f"COST {goal}: {prof}")
        counted = icount_cost(counts, var, worst["pages"], worst["impl"])
        if counted:
            out.append(f"COST {goal}: {counted}")
        if worst["pages"] > 16:
            counted = icount_entry_cost(counts, var, worst["impl"], worst["pages"])
            if counted:
                out.append(f"COST {goal}: {counted}")
    elif worst["w"] == "W2":
        dev, lay = worst["variant"].split("_", 1)
        one = find(figs, "W2", worst["variant"], 1, worst["impl"])
        if one:
            line = (f"COST {goal}: {worst['variant']}: {one['extra_ns']:.1f} ns per map is fixed "
                    f"(descriptor get/put and I/O set-up, the one-page figure)")
            if lay in ("page_entries", "aligned_gapped") and worst["pages"] > 1:
                per = (worst["extra_ns"] - one["extra_ns"]) / (worst["pages"] - 1)
                line += f", {per:.2f} ns per further entry ({worst['pages']} pages)"
            out.append(line)
        desc = find(stages, "W2STAGE", f"{dev}_pages", worst["pages"], "pool")
        w1 = find(figs, "W1", "d32_get1", 1, "mrkit_fence")
        if desc and w1 and desc["extra_ns"] > (limit - 1) * worst["base_ns"]:
            out.append(f"COST {goal}: at {worst['pages']} page(s) a descriptor's get and put alone "
                       f"(W2STAGE pool) takes {desc['extra_ns']:.1f} ns, "
                       f"{100 * desc['extra_ns'] / worst['base_ns']:.0f}% of the bare map's "
                       f"{worst['base_ns']:.1f}: the goal leaves {(limit - 1) * worst['base_ns']:.2f} ns "
                       f"for all of mrkit's work, where ib_mr_pool's get and put alone take "
                       f"{w1['base_ns']:.1f} (W1 d32_get1); W3 (nvme_style: ib_mr_pool's get and put, "
                       f"the map, the post) compares the same work on both sides")
        for pages in (1, worst["pages"]) if worst["pages"] > 1 else (1,):
            split = stage_split(stages, dev, pages)
            if split:
                out.append(f"COST {goal}: {split} (W2STAGE: init = mrkit_io_init, pool = a descriptor's "
                           f"get and put with its MR mapped instead, chunk = the walk, full = the rest of "
                           f"mrkit_io_map and mrkit_io_release)")
    return out


_AB = re.compile(r"^AB (\S+) (\S+) (\S+) stock=(\S+) mrkit=(\S+) ratio=(\S+) lo=(\S+) hi=(\S+)")
_AB_LOG = re.compile(r"ulp-([a-z]+)-([a-z]+)-bench\.log$")
AB_GOAL = ("end to end A/B, mrkit / stock, every row's simultaneous 95% interval "
           "(nvme, NFS, iSER, SRP; rxe, siw)")


def ab_rows(lines):
    """The AB lines of the ULPs' A/B runs (scripts/host/vm-ulp.sh ULP T bench)."""
    rows = []
    for line in lines:
        m = _AB.search(line)
        if m:
            ulp, dev, work = m.group(1, 2, 3)
            stock, mine, ratio, lo, hi = (float(x) for x in m.group(4, 5, 6, 7, 8))
            rows.append({"ulp": ulp, "transport": dev, "workload": work, "stock": stock,
                         "mrkit": mine, "ratio": ratio, "lo": lo, "hi": hi})
    return rows


def ab_simultaneous(rows, logs):
    """Give every AB row its simultaneous interval, from the guests' fio logs.

    Each row's own interval covers its true ratio with 95%; over m rows at
    exact parity, 1 - 0.975^m of runs would still show some row wholly
    below 1.0 (46% at 24 rows), so "every row" is judged on intervals
    that hold for all rows at once: each row's at level 1 - 0.05 / m
    (Bonferroni), from the same rounds and resamples as its AB line.
    @logs are the console logs, ulp-ULP-T-bench.log.  A row whose log is
    missing, or whose rounds no longer give its AB line's ratio, gets
    none.  Returns the level.
    """
    level = 1 - (1 - stats.LEVEL) / max(len(rows), 1)
    runs = {}
    for path in logs:
        m = _AB_LOG.search(os.path.basename(path))
        if m and os.path.exists(path):
            runs[m.group(1, 2)] = fio.runs(path)
    for r in rows:
        got = runs.get((r["ulp"], r["transport"]))
        fig = got and fio.ab_figure(got, r["ulp"], r["transport"], r["workload"],
                                    "stock", "mrkit", [], level)
        if fig and abs(fig[2]["ratio"] - r["ratio"]) < 0.0005:
            r["sim_lo"], r["sim_hi"], r["rounds"] = fig[2]["lo"], fig[2]["hi"], fig[2]["rounds"]
    return level


def ab_pooled(rows):
    """One figure per ULP over its rows' rounds (both transports, all
    three workloads): the median of the per-round ratios mrkit / stock
    and its 95% cluster-bootstrap interval, the rows as clusters.  Far
    narrower than a row's: the typical end-to-end ratio of each driver.
    Returns [(ulp, figure dict with ratio lo hi rows rounds)]."""
    out = []
    for ulp in dict.fromkeys(r["ulp"] for r in rows):
        groups = [r["rounds"] for r in rows if r["ulp"] == ulp and r.get("rounds")]
        if not groups:
            continue
        lo, hi = stats.bootstrap_median_ci_groups(groups, f"AB pooled {ulp}")
        out.append((ulp, {"ratio": stats.median([x for g in groups for x in g]), "lo": lo,
                          "hi": hi, "rows": len(groups), "rounds": sum(map(len, groups))}))
    return out


def ab_goal(rows, level=None):
    """The end-to-end goal: every row's interval contains or exceeds 1.0.

    Judged on the rows' simultaneous intervals (ab_simultaneous(), at
    @level each); a row without one counts with its own 95% interval,
    which can only fail it sooner.  Returns (goal, cost lines, info
    lines): the goal met when no upper bound is below 1.0, its "worst_hi"
    the lowest; info names rows below 1.0 by their own interval alone.
    """
    if not rows:
        return ({"goal": AB_GOAL, "op": ">=", "limit": 1.0, "result": "not measured"},
                [f"COST {AB_GOAL}: not measured: no AB line in the logs"], [])

    def sim_hi(r):
        return r.get("sim_hi", r["hi"])

    def name(r, lo, hi):
        return f"{r['ulp']} {r['transport']} {r['workload']} {r['ratio']:.3f} [{lo:.3f}, {hi:.3f}]"

    below = [r for r in rows if sim_hi(r) < 1.0]
    alone = [r for r in rows if r["hi"] < 1.0 and sim_hi(r) >= 1.0]
    plain = sum("sim_hi" not in r for r in rows)
    goal = {"goal": AB_GOAL, "op": ">=", "limit": 1.0, "result": "not met" if below else "met",
            "worst_hi": min(sim_hi(r) for r in rows), "figures": len(rows),
            "row_level": level, "rows_own_interval": plain}
    cost, info = [], []
    if below:
        cost.append(f"COST {AB_GOAL}: {len(below)} of {len(rows)} row(s) with the whole simultaneous "
                    "interval below 1.0: " + "; ".join(
                        name(r, r.get("sim_lo", r["lo"]), sim_hi(r)) for r in below))
    if plain:
        info.append(f"AB-INTERVALS {plain} of {len(rows)} row(s) judged on their own 95% interval "
                    "(no console log with their rounds)")
    if alone:
        info.append(f"AB-INTERVALS {len(alone)} row(s) below 1.0 by their own 95% interval, not "
                    "by the simultaneous one (at exact parity "
                    f"{1 - (1 - (1 - stats.LEVEL) / 2) ** len(rows):.0%} of runs of {len(rows)} "
                    "rows show one): " + "; ".join(
                        name(r, r["sim_lo"], r["sim_hi"]) for r in alone))
    return goal, cost, info


def boots_compare(old_lines, new_lines):
    """Each figure of two builds' boots taken in turn: [{key, old, new,
    change, lo, hi, boots}].  Boot k of one build ran next to boot k of
    the other, so they are compared as a pair: change is the median over
    such pairs of (the new boot's median ratio to the baseline) / (the old
    boot's), lo and hi its 95% interval from the pairs' order statistics
    (stats.sign_median_ci(); None with fewer than 6 pairs); old and new
    are the medians of the boots' ratios.  W3's cross-CPU figures
    (W3SMP cross_*), which no goal judges, are left out."""
    old, new = stats.parse_pairs(old_lines), stats.parse_pairs(new_lines)
    out = []
    for key, pairs in new.items():
        if key not in old or key[1].startswith("cross_"):
            continue

        def per_boot(ps):
            boots = {}
            for x, y, n, k in ps:
                if x > 0 and y > 0 and n > 0:
                    boots.setdefault(k, []).append(x / y)
            return {k: stats.median(rs) for k, rs in boots.items()}
        a, b = per_boot(old[key]), per_boot(pairs)
        common = sorted(set(a) & set(b))
        if not common:
            continue
        changes = [b[k] / a[k] for k in common]
        lo, hi = stats.sign_median_ci(changes) or (None, None)
        out.append({"key": key, "old": stats.median([a[k] for k in common]),
                    "new": stats.median([b[k] for k in common]),
                    "change": stats.median(changes), "lo": lo, "hi": hi, "boots": len(common)})
    return out


def boots_line(c):
    """The BOOTS line of one figure compared between two builds."""
    w, var, pages, impl, base = c["key"]
    if c["lo"] is None:
        bounds, verdict = "lo=- hi=-", "undecided"
    else:
        bounds = f"lo={c['lo']:.3f} hi={c['hi']:.3f}"
        verdict = "slower" if c["lo"] > 1 else "faster" if c["hi"] < 1 else "undecided"
    return (f"BOOTS {w} {var} pages={pages} {impl} vs={base} old={c['old']:.3f} new={c['new']:.3f} "
            f"change={c['change']:.3f} {bounds} boots={c['boots']} {verdict}")


def boots(args):
    """The BOOTS lines of two builds' interleaved boots."""
    cmp = boots_compare(fio.read(args.old).splitlines(), fio.read(args.new).splitlines())
    if not cmp:
        print(f"boots: no figure in both {args.old} and {args.new}")
        return 1
    verdicts = [boots_line(c).rsplit(" ", 1)[1] for c in cmp]
    for c in cmp:
        print(boots_line(c))
    print(f"BOOTS-SUMMARY figures={len(cmp)} " +
          " ".join(f"{v}={verdicts.count(v)}" for v in ("slower", "faster", "undecided")))
    return 0


def parse(args):
    def read(path):
        if not path or not os.path.exists(path):
            return []
        return open(path, errors="replace").read().splitlines()

    uml, vm, atom = read(args.uml), read(args.vm), read(args.atomics)
    counts = icounts(read(args.icount))
    figs = figures(uml + vm)
    res = {
        "machine": machine(),
        "kernel": {
            "host": platform.release(),
            "uml": (last(r"BENCH KERNEL uml release=(\S+)", uml) or ["?"])[0],
            "guest": (last(r"MRKIT-VM KERNEL release=(\S+)", vm) or ["?"])[0],
        },
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "commit": git(args.proj, "rev-parse", "HEAD"),
        "dirty": bool(git(args.proj, "status", "--porcelain", "--untracked-files=no")),
        "method": "paired bursts in rotating order; ratio = median of per-pair ratios, "
                  "lo/hi = 95% bootstrap interval, extra_ns = median per-pair difference per operation",
        "figures": figs,
    }
    stages = [f for f in figs if f["w"] == "W2STAGE"]
    figs = [f for f in figs if f["w"] != "W2STAGE"]
    res["figures"] = figs
    res["stages"] = stages
    profs = profiles(uml)
    res["profiles"] = profs
    for f in figs:
        print(stats.parity_line(f["w"], f["variant"], f["pages"], f["impl"], f))
    for f in stages:
        print(stage_line(f))
    for p in profs:
        print(profile_line(p))
    res["icount"] = counts
    for c in counts:
        print(icount_line(c))
    mem = last(r"BENCH MEMORY per_desc=(-?\d+) depth=(\d+) pools=(\d+) per_descriptor_part=(-?\d+) "
               r"per_pool_part=(-?\d+)", uml)
    if mem:
        mem = dict(zip(("per_desc", "depth", "pools", "per_descriptor_part", "per_pool_part"),
                       (int(x) for x in mem)))
        res["memory"] = mem
        print(f"MEMORY per_desc={mem['per_desc']}")
    info = [m.group(0) for line in uml + vm + atom
            for m in [re.search(r"ATOMICS .*|BENCH (W3ALLOC|SLAB|IOSIZE) .*", line)] if m]
    res["info"] = info
    goals, cost = [], []
    for name, limit, pred in goal_defs():
        sel = [f for f in figs if pred(f)]
        if not sel:
            goals.append({"goal": name, "limit": limit, "result": "not measured"})
            cost.append(f"COST {name}: not measured: no figure in the logs")
            continue
        bad = [f for f in sel if not stats.goal_met(f, limit)]
        worst = max(sel, key=lambda f: f["hi"])
        goals.append({"goal": name, "limit": limit, "result": "not met" if bad else "met",
                      "worst_hi": worst["hi"], "figures": len(sel)})
        if bad:
            cost += costs(name, limit, bad, figs, mem, stages, profs, counts)
    if mem:
        ok = mem["per_desc"] <= 128
        goals.append({"goal": "memory per descriptor beyond the provider's MR", "limit": 128,
                      "result": "met" if ok else "not met", "worst_hi": mem["per_desc"]})
        if not ok:
            cost.append(f"COST memory: {mem['per_desc']} bytes per descriptor, {mem['per_desc'] - 128} over 128: "
                        f"{mem['per_descriptor_part']} bytes grow with each descriptor (object with its slab "
                        f"rounding, slot, rkey index) and {mem['per_pool_part']} bytes per pool "
                        f"({mem['per_pool_part'] / mem['depth']:.1f} per descriptor at depth {mem['depth']}: "
                        f"the pool structure, its debugfs files)")
    else:
        goals.append({"goal": "memory per descriptor beyond the provider's MR", "limit": 128,
                      "result": "not measured"})
        cost.append("COST memory: not measured: no BENCH MEMORY line")
    ab = ab_rows([line for path in args.ab or () for line in read(path)])
    level = ab_simultaneous(ab, args.ab_logs or ())
    res["ab"] = ab
    goal, ab_cost, ab_info = ab_goal(ab, level)
    goals.append(goal)
    cost += ab_cost
    info += ab_info
    res["ab_pooled"] = {}
    for ulp, f in ab_pooled(ab):
        res["ab_pooled"][ulp] = f
        info.append(f"AB-POOLED {ulp} ratio={f['ratio']:.3f} lo={f['lo']:.3f} hi={f['hi']:.3f} "
                    f"rows={f['rows']} rounds={f['rounds']}")
    res["goals"] = goals
    res["costs"] = cost
    print()
    print("goals (met only when the 95% interval's upper bound meets the limit):")
    for g in goals:
        extra = f" (worst {g['worst_hi']:.3f}, {g['figures']} figures" if "figures" in g else (
            f" ({g['worst_hi']} bytes" if "worst_hi" in g else "")
        if extra and g.get("row_level"):
            extra += f", each interval at {g['row_level']:.2%}"
        extra += ")" if extra else ""
        print(f"  {g['goal']}: {g.get('op', '<=')} {g['limit']}: {g['result']}{extra}")
    for c in cost:
        print(c)
    for i in info:
        print(i)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(res, f, indent=1)
        print(f"results: {args.out}")
    return 0


def table(args):
    res = json.load(open(args.results))
    m, k = res["machine"], res["kernel"]
    o = [f"Generated by `make bench-table` from make bench's results "
         f"({res['date']}, commit {res['commit'][:12]}{' with local changes' if res.get('dirty') else ''}; "
         f"{m['cpu_model']}, {m['nproc']} CPUs, host kernel {k['host']}, UML {k['uml']}, guest {k['guest']}).",
         "Ratio: median of paired-burst ratios mrkit / baseline; interval: 95% bootstrap; "
         "extra: median ns per operation over the baseline.", ""]
    o += ["| goal | limit | result | worst upper bound |", "|---|---|---|---|"]
    for g in res["goals"]:
        w = g.get("worst_hi")
        o.append(f"| {g['goal']} | {g.get('op', '<=')} {g['limit']} | {g['result']} | "
                 f"{'-' if w is None else (w if isinstance(w, int) else f'{w:.3f}')} |")
    o += ["", "| workload | variant | pages | mrkit | ratio | 95% interval | extra ns |",
          "|---|---|---|---|---|---|---|"]
    # Short: W1 at depth 128 and in the guest, W2 each layout's worst size
    # on rxe and siw, W3 in UML and in the guest on one CPU.
    w2worst = {}
    for f in res["figures"]:
        if f["w"] == "W2" and f["variant"].split("_", 1)[0] in ("rxe", "siw"):
            k = f["variant"]
            if k not in w2worst or f["ratio"] > w2worst[k]["ratio"]:
                w2worst[k] = f
    for f in res["figures"]:
        if f["w"] == "W1" and not f["variant"].startswith(("d128_", "smp_", "io_cache")):
            continue
        if f["w"] == "W2" and w2worst.get(f["variant"]) is not f:
            continue
        if f["w"] == "W3SMP" and not f["variant"].startswith("same_"):
            continue
        o.append(f"| {f['w']} vs {f['baseline']} | {f['variant']} | {f['pages']} | {f['impl']} | "
                 f"{f['ratio']:.3f} | {f['lo']:.3f}-{f['hi']:.3f} | {f['extra_ns']:.1f} |")
    if res.get("ab_pooled"):
        o += ["", "| end to end, mrkit / stock | ratio | 95% interval | rows | rounds |",
              "|---|---|---|---|---|"]
        for ulp, f in res["ab_pooled"].items():
            o.append(f"| {ulp} | {f['ratio']:.3f} | {f['lo']:.3f}-{f['hi']:.3f} | {f['rows']} | "
                     f"{f['rounds']} |")
    if "memory" in res:
        mem = res["memory"]
        o += ["", f"Memory: {mem['per_desc']} bytes per descriptor beyond the provider's MR "
              f"({mem['per_descriptor_part']} per descriptor + {mem['per_pool_part']} per pool of "
              f"{mem['depth']})."]
    print("\n".join(o))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("parse")
    p.add_argument("--uml")
    p.add_argument("--vm")
    p.add_argument("--atomics", help="the counting (sanitizer) build's KUnit log")
    p.add_argument("--icount", help="scripts/host/icount.sh's ICOUNT lines")
    p.add_argument("--ab", nargs="*", help="the ULPs' A/B outputs (their AB lines)")
    p.add_argument("--ab-logs", nargs="*",
                   help="the ULPs' A/B console logs, ulp-ULP-T-bench.log (their rounds)")
    p.add_argument("--out")
    p.add_argument("--proj", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    t = sub.add_parser("table")
    t.add_argument("results")
    b = sub.add_parser("boots")
    b.add_argument("old", help="the old build's boots (BENCH BOOT k, then its PAIR lines)")
    b.add_argument("new", help="the new build's boots, boot k next to the old build's k")
    a = ap.parse_args()
    return {"parse": parse, "table": table, "boots": boots}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
