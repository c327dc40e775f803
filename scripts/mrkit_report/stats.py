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

Kernel lines (anything may precede them on the line):
  PAIR <W> <variant> <pages> <impl> <base> <ops> <t_impl> <t_base>
  PAIRD <W> <variant> <pages> <impl> <base> <ops> <a> <b> <c> <d>
times in ns for <ops> operations each; a PAIRD group stands for the pair
(a - b + c, d): a differential figure (the implementation's cost is c
less what a saves against b).
"""

import random
import re
import zlib

LEVEL = 0.95
RESAMPLES = 2000
SEED = 0x6d726b74  # "mrkt"

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


def figure(pairs, key=""):
    """A figure from pairs [(t_impl, t_base, ops), ...].

    Returns a dict: ratio, lo, hi (of the per-pair ratios), extra_ns (median
    of the per-pair differences per operation), base_ns (median of the
    baseline's bursts per operation), pairs (how many).
    """
    good = [(a, b, n) for a, b, n in pairs if b > 0 and n > 0]
    if not good:
        raise ValueError("no usable pair")
    ratios = [a / b for a, b, _ in good]
    lo, hi = bootstrap_median_ci(ratios, key)
    return {
        "ratio": median(ratios),
        "lo": lo,
        "hi": hi,
        "extra_ns": median([(a - b) / n for a, b, n in good]),
        "base_ns": median([b / n for _, b, n in good]),
        "pairs": len(good),
    }


def goal_met(fig, limit):
    """True, False, or None (not measured): met only if hi <= limit."""
    if fig is None:
        return None
    return fig["hi"] <= limit


def parse_pairs(lines):
    """Collect PAIR/PAIRD lines: {(W, variant, pages, impl, base): [(x, y, ops)]}.

    The order of first appearance is kept (dicts are ordered).
    """
    out = {}
    for line in lines:
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
        out.setdefault((w, var, int(pages), impl, base), []).append((x, y, int(ops)))
    return out


def parity_line(w, variant, pages, impl, fig):
    """The report's PARITY line for one figure."""
    return (f"PARITY {w} {variant} pages={pages} {impl} ratio={fig['ratio']:.3f} "
            f"lo={fig['lo']:.3f} hi={fig['hi']:.3f} extra_ns={fig['extra_ns']:.1f}")
