# SPDX-License-Identifier: GPL-2.0-only
"""Paired-burst statistics for make bench.

The benchmarks run an implementation and its baseline in short bursts of
the same number of operations, in rotating order (A B, B A, A B, ...), and
print every pair of neighbouring bursts.  A figure is taken pair by pair,
never as a ratio of independent medians: a host preemption or a frequency
change spoils the pairs it falls in, not one side of the comparison.

  ratio     median of the per-pair ratios implementation / baseline
  lo, hi    95% percentile-bootstrap interval of that median (resampling
            the pairs, a fixed seed per figure, so a rerun on the same log
            gives the same interval, whatever else the log holds)
  extra_ns  median of the per-pair differences, in ns per operation

A goal "ratio <= L" is met only when hi <= L.

Runs that boot a machine several times (the guest part of make bench)
print a line "BENCH BOOT <k>" ahead of each boot's lines.  Pairs carry
their boot, and with more than one the interval resamples boots first,
then pairs within each boot drawn (a cluster bootstrap): what stays
fixed for one boot (such as where the guest's memory lands) moves a
figure more than the pairs of one boot vary, and an interval from the
pairs alone would be too narrow.

Kernel lines (anything may precede them on the line):
  PAIR <W> <variant> <pages> <impl> <base> <ops> <t_impl> <t_base>
  PAIRD <W> <variant> <pages> <impl> <base> <ops> <a> <b> <c> <d>
times in ns for <ops> operations each; a PAIRD group stands for the pair
(a - b + c, d): a differential figure (the implementation's cost is c
less what a saves against b).
"""

import math
import random
import re
import zlib

LEVEL = 0.95
RESAMPLES = 2000
SEED = 0x6d726b74  # "mrkt"

_BOOT = re.compile(r"\bBENCH BOOT (\d+)\s*$")
_PAIR = re.compile(r"\bPAIR(D?) (\S+) (\S+) (\d+) (\S+) (\S+) (\d+)((?: -?\d+)+)\s*$")


def median(xs):
    """The median of a non-empty sequence (the mean of the middle two)."""
    s = sorted(xs)
    n = len(s)
    if not n:
        raise ValueError("median of nothing")
    m = n // 2
    return s[m] if n % 2 else (s[m - 1] + s[m]) / 2


def quantile(sorted_xs, q):
    """Linear-interpolation quantile (q in [0, 1]) of a sorted sequence."""
    n = len(sorted_xs)
    if not n:
        raise ValueError("quantile of nothing")
    pos = q * (n - 1)
    i = int(pos)
    if i >= n - 1:
        return sorted_xs[-1]
    return sorted_xs[i] + (sorted_xs[i + 1] - sorted_xs[i]) * (pos - i)


def sign_median_ci(xs, level=LEVEL):
    """Distribution-free interval (lo, hi) of the median of xs, from their
    order statistics (the sign test's): the widest k with
    P(Binomial(n, 1/2) < k) <= (1 - level) / 2 gives the k-th smallest and
    the k-th largest value, which hold the median with probability at least
    @level whatever the values' distribution.  None when there are too few
    values for @level even with the smallest and the largest (fewer than 6
    for 95%): a bootstrap of so few values gives an interval that holds the
    median far less often than it claims."""
    s = sorted(xs)
    n = len(s)
    tail = (1 - level) / 2
    below, k = 0.0, 0		# P(Binomial(n, 1/2) < k + 1)
    while k < n // 2:
        below += math.comb(n, k) / 2 ** n
        if below > tail:
            break
        k += 1
    if k == 0:
        return None
    return s[k - 1], s[n - k]


def figure_seed(key):
    """The resampling seed of one figure: fixed, and its own."""
    return SEED ^ zlib.crc32(key.encode())


def bootstrap_median_ci(xs, key="", resamples=RESAMPLES, level=LEVEL):
    """Percentile-bootstrap interval (lo, hi) of the median of xs."""
    n = len(xs)
    if not n:
        raise ValueError("interval of nothing")
    rng = random.Random(figure_seed(key))
    meds = sorted(median(rng.choices(xs, k=n)) for _ in range(resamples))
    tail = (1 - level) / 2
    return quantile(meds, tail), quantile(meds, 1 - tail)


def bootstrap_median_ci_groups(groups, key="", resamples=RESAMPLES, level=LEVEL):
    """Cluster-bootstrap interval (lo, hi) of the median of the pooled groups.

    Each resample draws as many groups as there are, with replacement, and
    from each drawn group as many of its values, with replacement; the
    statistic is the median of all values drawn.
    """
    groups = [g for g in groups if g]
    if not groups:
        raise ValueError("interval of nothing")
    rng = random.Random(figure_seed(key))
    meds = []
    for _ in range(resamples):
        drawn = []
        for g in rng.choices(groups, k=len(groups)):
            drawn.extend(rng.choices(g, k=len(g)))
        meds.append(median(drawn))
    meds.sort()
    tail = (1 - level) / 2
    return quantile(meds, tail), quantile(meds, 1 - tail)


def figure(pairs, key="", level=LEVEL):
    """A figure from pairs [(t_impl, t_base, ops[, boot]), ...].

    Returns a dict: ratio, lo, hi (the @level interval of the median of
    the per-pair ratios; resampled by boot when the pairs come from more
    than one), extra_ns (median of the
    per-pair differences per operation), base_ns (median of the
    baseline's bursts per operation), pairs (how many), boots (how many).
    """
    good = [(p[0], p[1], p[2], p[3] if len(p) > 3 else 0)
            for p in pairs if p[1] > 0 and p[2] > 0]
    if not good:
        raise ValueError("no usable pair")
    ratios = [a / b for a, b, _, _ in good]
    boots = {}
    for (_, _, _, k), r in zip(good, ratios):
        boots.setdefault(k, []).append(r)
    if len(boots) > 1:
        lo, hi = bootstrap_median_ci_groups(list(boots.values()), key, level=level)
    else:
        lo, hi = bootstrap_median_ci(ratios, key, level=level)
    return {
        "ratio": median(ratios),
        "lo": lo,
        "hi": hi,
        "extra_ns": median([(a - b) / n for a, b, n, _ in good]),
        "base_ns": median([b / n for _, b, n, _ in good]),
        "pairs": len(good),
        "boots": len(boots),
    }


def goal_met(fig, limit):
    """True, False, or None (not measured): met only if hi <= limit."""
    if fig is None:
        return None
    return fig["hi"] <= limit


def parse_pairs(lines):
    """Collect PAIR/PAIRD lines: {(W, variant, pages, impl, base): [(x, y, ops, boot)]}.

    boot: the k of the last "BENCH BOOT k" line before the pair (0 when
    none).  The order of first appearance is kept (dicts are ordered).
    """
    out = {}
    boot = 0
    for line in lines:
        b = _BOOT.search(line)
        if b:
            boot = int(b.group(1))
            continue
        m = _PAIR.search(line)
        if not m:
            continue
        diff, w, var, pages, impl, base, ops, ts = m.groups()
        t = [int(x) for x in ts.split()]
        if diff:
            if len(t) != 4:
                continue
            x, y = t[0] - t[1] + t[2], t[3]
        else:
            if len(t) != 2:
                continue
            x, y = t
        out.setdefault((w, var, int(pages), impl, base), []).append((x, y, int(ops), boot))
    return out


def parity_line(w, variant, pages, impl, fig):
    """The report's PARITY line for one figure."""
    return (f"PARITY {w} {variant} pages={pages} {impl} ratio={fig['ratio']:.3f} "
            f"lo={fig['lo']:.3f} hi={fig['hi']:.3f} extra_ns={fig['extra_ns']:.1f}")
