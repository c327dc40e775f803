# SPDX-License-Identifier: GPL-2.0-only
"""Unit tests of scripts/mrkit_report/stats.py (python3 -m unittest)."""

import os
import random
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))

from mrkit_report import bench, fio, stats  # noqa: E402
from mrkit_report.tests.util import LogTest, fio_run  # noqa: E402


class MedianQuantile(unittest.TestCase):
    def test_median(self):
        self.assertEqual(stats.median([3, 1, 2]), 2)
        self.assertEqual(stats.median([4, 1, 3, 2]), 2.5)
        self.assertRaises(ValueError, stats.median, [])

    def test_quantile(self):
        s = [0, 10, 20, 30, 40]
        self.assertEqual(stats.quantile(s, 0), 0)
        self.assertEqual(stats.quantile(s, 1), 40)
        self.assertEqual(stats.quantile(s, 0.5), 20)
        self.assertAlmostEqual(stats.quantile(s, 0.1), 4)


class Bootstrap(unittest.TestCase):
    def test_same_input_same_interval(self):
        xs = [1 + random.Random(1).random() for _ in range(200)]
        a = stats.bootstrap_median_ci(xs, "W3 x")
        b = stats.bootstrap_median_ci(list(xs), "W3 x")
        self.assertEqual(a, b)

    def test_interval_brackets_median(self):
        rng = random.Random(7)
        xs = [rng.gauss(1.0, 0.05) for _ in range(301)]
        lo, hi = stats.bootstrap_median_ci(xs, "k")
        m = stats.median(xs)
        self.assertLessEqual(lo, m)
        self.assertGreaterEqual(hi, m)
        # 301 samples of sd 0.05: the median is known to about +-0.007.
        self.assertLess(hi - lo, 0.03)
        self.assertGreater(hi - lo, 0.002)

    def test_interval_narrows_with_more_pairs(self):
        rng = random.Random(3)
        small = [rng.gauss(1.0, 0.1) for _ in range(25)]
        big = [rng.gauss(1.0, 0.1) for _ in range(900)]
        lo, hi = stats.bootstrap_median_ci(small, "a")
        w_small = hi - lo
        lo, hi = stats.bootstrap_median_ci(big, "a")
        # sqrt(900 / 25) = 6 in theory; a median's resamples are lumpy.
        self.assertGreater(w_small, 2 * (hi - lo))

    def test_coverage(self):
        # Of 60 samples drawn around a true median of 1.0, the 95%
        # interval should miss it only a few times.
        rng = random.Random(11)
        miss = 0
        for k in range(60):
            xs = [rng.gauss(1.0, 0.1) for _ in range(101)]
            lo, hi = stats.bootstrap_median_ci(xs, f"c{k}", resamples=500)
            miss += not lo <= 1.0 <= hi
        self.assertLessEqual(miss, 9)


class Figure(unittest.TestCase):
    def test_paired_ratio_survives_drift(self):
        # The machine slows down 3x half way: ratios of independent
        # medians would blur, paired ratios do not.
        pairs = []
        for i in range(200):
            speed = 1.0 if i < 100 else 3.0
            pairs.append((1100 * speed, 1000 * speed, 100))
        f = stats.figure(pairs, "drift")
        self.assertAlmostEqual(f["ratio"], 1.1)
        self.assertAlmostEqual(f["lo"], 1.1)
        self.assertAlmostEqual(f["hi"], 1.1)
        # extra ns per operation: the median of (a - b) / ops
        self.assertAlmostEqual(f["extra_ns"], (1.0 + 3.0) / 2)
        self.assertEqual(f["pairs"], 200)

    def test_common_mode_noise_cancels(self):
        # Each pair shares the machine's state (s: up to 3x slower), the
        # bursts themselves vary by 1%: the interval is that of the 1%.
        rng = random.Random(9)
        pairs = []
        for _ in range(400):
            s = rng.uniform(1.0, 3.0)
            pairs.append((1100 * s * rng.gauss(1, 0.01), 1000 * s * rng.gauss(1, 0.01), 10))
        f = stats.figure(pairs, "cm")
        self.assertAlmostEqual(f["ratio"], 1.1, delta=0.005)
        self.assertLess(f["hi"] - f["lo"], 0.01)
        self.assertLess(f["hi"], 1.11)

    def test_outlier_pairs_do_not_move_the_median(self):
        pairs = [(1050, 1000, 10)] * 95 + [(90000, 1000, 10)] * 5
        f = stats.figure(pairs, "o")
        self.assertAlmostEqual(f["ratio"], 1.05)
        self.assertAlmostEqual(f["hi"], 1.05)

    def test_goal_uses_upper_bound(self):
        rng = random.Random(5)
        pairs = [(1000 * rng.gauss(0.99, 0.05), 1000, 1) for _ in range(60)]
        f = stats.figure(pairs, "g")
        self.assertLess(f["ratio"], 1.0)
        self.assertGreater(f["hi"], 1.0)
        self.assertFalse(stats.goal_met(f, 1.0))
        self.assertTrue(stats.goal_met(f, f["hi"]))
        self.assertIsNone(stats.goal_met(None, 1.0))

    def test_boots_widen_the_interval(self):
        # Five boots, each with its own level (1.05 to 1.25) and 1% noise
        # within: the pooled pairs alone give a narrow interval, the boots
        # one that covers their spread.
        rng = random.Random(11)
        pairs = []
        for k, level in enumerate((1.05, 1.10, 1.15, 1.20, 1.25), 1):
            pairs += [(1000 * level * rng.gauss(1, 0.01), 1000, 10, k) for _ in range(100)]
        f = stats.figure(pairs, "boots")
        flat = stats.figure([p[:3] for p in pairs], "boots")
        self.assertEqual(f["boots"], 5)
        self.assertEqual(flat["boots"], 1)
        self.assertAlmostEqual(f["ratio"], flat["ratio"])
        self.assertLess(flat["hi"] - flat["lo"], 0.03)
        self.assertGreater(f["hi"] - f["lo"], 0.08)
        self.assertGreaterEqual(f["hi"], 1.2)
        self.assertLessEqual(f["lo"], 1.1)

    def test_boots_alike_keep_it_narrow(self):
        rng = random.Random(12)
        pairs = [(1100 * rng.gauss(1, 0.01), 1000, 10, k) for k in range(1, 6)
                 for _ in range(100)]
        f = stats.figure(pairs, "alike")
        self.assertAlmostEqual(f["ratio"], 1.1, delta=0.005)
        self.assertLess(f["hi"] - f["lo"], 0.01)

    def test_no_pairs(self):
        self.assertRaises(ValueError, stats.figure, [], "n")
        self.assertRaises(ValueError, stats.figure, [(1, 0, 1)], "n")


class Parse(unittest.TestCase):
    LOG = [
        "[12:00:01]     # bench_w3_test: PAIR W3 local_inv 1 mrkit_fence nvme_style 500 31000 30000",
        "[12:00:01]     # bench_w3_test: PAIR W3 local_inv 1 mrkit_fence nvme_style 500 32000 30500",
        "MRKIT-VM PAIR W3SMP same_local_inv 16 mrkit_lazy nvme_style 8 9000 8000",
        "PAIRD W1 io_cache 1 mrkit_cached ib_mr_pool 500 100 300 400 1000",
        "PAIR W3 local_inv 1 mrkit_fence nvme_style 500 31000",  # cut short
        "PAIR W3 local_inv 1 mrkit_fence nvme_style 500 1 2 3",  # too long
        "something else PAIRS W3",
    ]

    def test_parse(self):
        p = stats.parse_pairs(self.LOG)
        self.assertEqual(list(p), [
            ("W3", "local_inv", 1, "mrkit_fence", "nvme_style"),
            ("W3SMP", "same_local_inv", 16, "mrkit_lazy", "nvme_style"),
            ("W1", "io_cache", 1, "mrkit_cached", "ib_mr_pool"),
        ])
        self.assertEqual(p[("W3", "local_inv", 1, "mrkit_fence", "nvme_style")],
                         [(31000, 30000, 500, 0), (32000, 30500, 500, 0)])
        # a - b + c against d
        self.assertEqual(p[("W1", "io_cache", 1, "mrkit_cached", "ib_mr_pool")],
                         [(200, 1000, 500, 0)])

    def test_parse_boots(self):
        log = ["MRKIT-VM PAIR W3SMP same_local_inv 1 mrkit_fence nvme_style 8 9000 8000",
               "BENCH BOOT 1",
               "MRKIT-VM PAIR W3SMP same_local_inv 1 mrkit_fence nvme_style 8 9100 8000",
               "[  1.0] BENCH BOOT 2",
               "MRKIT-VM PAIR W3SMP same_local_inv 1 mrkit_fence nvme_style 8 9200 8000"]
        p = stats.parse_pairs(log)
        self.assertEqual([t[3] for t in p[("W3SMP", "same_local_inv", 1, "mrkit_fence",
                                          "nvme_style")]], [0, 1, 2])

    def test_parity_line(self):
        f = {"ratio": 1.23456, "lo": 1.2, "hi": 1.26, "extra_ns": 12.34}
        self.assertEqual(stats.parity_line("W3", "local_inv", 1, "mrkit_fence", f),
                         "PARITY W3 local_inv pages=1 mrkit_fence ratio=1.235 "
                         "lo=1.200 hi=1.260 extra_ns=12.3")


class Stages(unittest.TestCase):
    """W2's stage figures: their own lines, and the W2 cost split by them."""

    LOG = [f"PAIR W2STAGE rxe_pages 1 {s} {b} 100 {100 * t} {100 * u}"
           for s, b, t, u in (("init", "bare", 30, 25), ("pool", "init", 45, 30),
                              ("chunk", "pool", 55, 45), ("full", "chunk", 80, 55))
           for _ in range(12)] + [
        f"PAIR W2 rxe_page_entries 1 mrkit_fence ib_map_mr_sg 100 {100 * 80} {100 * 25}"
        for _ in range(12)]

    def test_stage_line(self):
        figs = bench.figures(self.LOG)
        st = [f for f in figs if f["w"] == "W2STAGE"]
        self.assertEqual([f["impl"] for f in st], ["init", "pool", "chunk", "full"])
        self.assertEqual(bench.stage_line(st[0]),
                         "STAGE W2 rxe_pages pages=1 init over=bare extra_ns=5.0 "
                         "ratio=1.200 lo=1.200 hi=1.200")

    def test_cost_split(self):
        figs = bench.figures(self.LOG)
        st = [f for f in figs if f["w"] == "W2STAGE"]
        w2 = [f for f in figs if f["w"] == "W2"]
        lines = bench.costs("W2 goal", 1.05, w2, w2, None, st)
        self.assertTrue(any("55.0 ns over a bare map on rxe at 1 page(s), by stage (ns): "
                            "init 5.0, pool 15.0, chunk 10.0, full 25.0" in x for x in lines), lines)
        self.assertIsNone(bench.stage_split(st, "siw", 1))


class Profiles(unittest.TestCase):
    """W3PROF's sampling profiles: ns per function, their own lines, the W3 cost."""

    LOG = ["BENCH PROFILE W3 local_inv pages=1 mrkit_fence ios=1000 elapsed_ns=200000 samples=100",
           "BENCH PROFILE W3 local_inv pages=1 mrkit_fence fn=mrkit_io_map hits=50",
           "BENCH PROFILE W3 local_inv pages=1 mrkit_fence fn=w3_poll hits=30",
           "BENCH PROFILE W3 local_inv pages=1 mrkit_fence fn=mrkit_io_finish hits=20",
           "BENCH PROFILE W3 local_inv pages=1 nvme_style ios=1000 elapsed_ns=100000 samples=10",
           "BENCH PROFILE W3 local_inv pages=1 nvme_style fn=w3_once hits=10",
           "BENCH PROFILE W3 remote_inv pages=1 mrkit_fence ios=0 elapsed_ns=0 samples=0"]

    def test_parse(self):
        profs = bench.profiles(self.LOG)
        self.assertEqual(len(profs), 2)
        f = profs[0]
        self.assertEqual(f["ns_per_io"], 200.0)
        self.assertEqual([(x["fn"], x["ns"]) for x in f["fns"]],
                         [("mrkit_io_map", 100.0), ("w3_poll", 60.0), ("mrkit_io_finish", 40.0)])
        self.assertEqual(f["mrkit_ns"], 140.0)
        self.assertEqual(bench.profile_line(f, top=2),
                         "PROFILE W3 local_inv pages=1 mrkit_fence ns_per_io=200.0 samples=100 "
                         "mrkit_ns=140.0 top=mrkit_io_map:100.0 w3_poll:60.0")

    def test_cost(self):
        profs = bench.profiles(self.LOG)
        line = bench.profile_cost(profs, "local_inv", "mrkit_fence")
        self.assertIn("puts 140.0 of mrkit_fence's 200.0 ns per I/O in mrkit's own functions, "
                      "spread over 2 of them (top: mrkit_io_map 100.0, w3_poll 60.0, "
                      "mrkit_io_finish 40.0), against nvme_style's 100.0 ns per I/O", line)
        self.assertIsNone(bench.profile_cost(profs, "remote_inv", "mrkit_fence"))


class Icounts(unittest.TestCase):
    """W3ICOUNT's counted cycles: the ratio to the baseline, their lines, the W3 cost."""

    LOG = ["ICOUNT W3 local_inv pages=1 mrkit_fence insns=1200 mrkit=800 irqemu=0 "
           "top=mrkit_io_map:260,w3_poll:60,mrkit_io_finish:170",
           "ICOUNT W3 local_inv pages=1 nvme_style insns=600 mrkit=0 irqemu=100 top=w3_nvme:137",
           "ICOUNT W3 remote_inv pages=1 mrkit_fence insns=1100 mrkit=700 top=mrkit_io_map:260",
           "ICOUNT W3 remote_inv pages=16 mrkit_fence insns=1500 mrkit=700 top=mrkit_io_map:260",
           "ICOUNT W3 remote_inv pages=16 nvme_style insns=1000 mrkit=0 top=w3_nvme:137",
           "noise"]

    def test_parse(self):
        counts = bench.icounts(self.LOG)
        self.assertEqual(len(counts), 5)
        f = counts[0]
        self.assertEqual((f["insns"], f["mrkit"], f["base_insns"], f["ratio"]), (1200, 800, 600, 2.0))
        self.assertEqual((f["irqemu"], f["less_irqemu"]), (0, 2.4))
        self.assertEqual(f["fns"], [("mrkit_io_map", 260), ("w3_poll", 60), ("mrkit_io_finish", 170)])
        self.assertNotIn("ratio", counts[1])	# the baseline itself
        self.assertNotIn("ratio", counts[2])	# no baseline counted
        self.assertEqual(bench.icount_line(f, top=2),
                         "ICOUNT W3 local_inv pages=1 mrkit_fence insns=1200 mrkit=800 irqemu=0 ratio=2.000 "
                         "base=nvme_style base_insns=600 less_irqemu=2.400 top=mrkit_io_map:260,w3_poll:60")
        # Lines without irqemu= (older logs): the ratio alone.
        self.assertEqual(counts[3]["ratio"], 1.5)
        self.assertNotIn("less_irqemu", counts[3])
        self.assertEqual(bench.icount_line(counts[3], top=1),
                         "ICOUNT W3 remote_inv pages=16 mrkit_fence insns=1500 mrkit=700 ratio=1.500 "
                         "base=nvme_style base_insns=1000 top=mrkit_io_map:260")

    def test_entry_cost(self):
        counts = bench.icounts(self.LOG + [
            "ICOUNT W3 remote_inv pages=1 nvme_style insns=700 mrkit=0 top=w3_nvme:137",
            "ICOUNT W3 remote_inv pages=16 mrkit_fence insns=1550 mrkit=850 top=mrkit_io_map:400"])
        line = bench.icount_entry_cost(counts, "remote_inv", "mrkit_fence", 256)
        self.assertEqual(line, "counted (W3ICOUNT, remote_inv, 1 and 16 pages), each further entry of "
                         "the list costs 30.0 instructions against nvme_style's 20.0, 10.0 of them in "
                         "mrkit's functions (mrkit_io_map 9.3); at 256 pages that is 2550 "
                         "instructions more in a cycle of about "
                         "8750 (29.1%)")
        self.assertIsNone(bench.icount_entry_cost(counts, "caller_mapped", "mrkit_fence", 256))
        # Counted at 256 pages too: those counts, not the line through 1 and 16.
        counts = bench.icounts(self.LOG + [
            "ICOUNT W3 remote_inv pages=1 nvme_style insns=700 mrkit=0 top=w3_nvme:137",
            "ICOUNT W3 remote_inv pages=16 mrkit_fence insns=1550 mrkit=850 top=mrkit_io_map:400",
            "ICOUNT W3 remote_inv pages=256 mrkit_fence insns=6200 mrkit=1720 top=mrkit_io_map:1280",
            "ICOUNT W3 remote_inv pages=256 nvme_style insns=5800 mrkit=0 top=w3_nvme:137"])
        line = bench.icount_entry_cost(counts, "remote_inv", "mrkit_fence", 256)
        self.assertEqual(line, "counted (W3ICOUNT, remote_inv, 1 and 256 pages), each further entry of "
                         "the list costs 20.0 instructions against nvme_style's 20.0, 4.0 of them in "
                         "mrkit's functions (mrkit_io_map 4.0); at 256 pages that is 0 "
                         "instructions more in a cycle of 6200 (0.0%)")

    def test_cost(self):
        counts = bench.icounts(self.LOG)
        line = bench.icount_cost(counts, "local_inv", 1, "mrkit_fence")
        self.assertIn("executes 1200 instructions against nvme_style's 600 (2.000 x); 800 of them in "
                      "mrkit's functions (mrkit_io_map 260, mrkit_io_finish 170): parity needs 600 fewer; "
                      "700 fewer (2.400 x) without the 100 more of UML's interrupt-flag emulation the "
                      "baseline executes, which an x86 kernel does inline", line)
        self.assertIsNone(bench.icount_cost(counts, "remote_inv", 1, "mrkit_fence"))


class Boots(unittest.TestCase):
    """Two builds' boots taken in turn, compared boot by boot."""

    @staticmethod
    def log(boots):
        out = []
        for k, pairs in enumerate(boots, 1):
            out.append(f"BENCH BOOT {k}")
            out += [f"MRKIT-VM PAIR W3SMP same_local_inv 256 mrkit_fence nvme_style 100 {a} {b}"
                    for a, b in pairs]
        return out

    def test_compare(self):
        # Boot 2 is slower for both builds: the pair still shows the change.
        olds = [1045, 1130, 1040, 1050, 1060, 1035]
        old = self.log([[(o, 1000)] for o in olds])
        new = self.log([[(o + 50 + i, 1000)] for i, o in enumerate(olds)])
        new.append("MRKIT-VM PAIR W3SMP same_remote_inv 1 mrkit_fence nvme_style 100 1500 1000")
        new.append("MRKIT-VM PAIR W3SMP cross_local_inv 256 mrkit_fence nvme_style 100 1500 1000")
        old.append("MRKIT-VM PAIR W3SMP cross_local_inv 256 mrkit_fence nvme_style 100 1000 1000")
        cmp = bench.boots_compare(old, new)
        # Only the figure both builds have; cross-CPU ones are left out.
        self.assertEqual(len(cmp), 1)
        c = cmp[0]
        self.assertEqual(c["boots"], 6)
        self.assertAlmostEqual(c["old"], 1.0475)	# (1.045 + 1.05) / 2
        self.assertAlmostEqual(c["new"], 1.099)	# (1.095 + 1.103) / 2
        changes = sorted((o + 50 + i) / o for i, o in enumerate(olds))
        self.assertAlmostEqual(c["lo"], changes[0])
        self.assertAlmostEqual(c["hi"], changes[-1])
        self.assertEqual(bench.boots_line(c),
                         "BOOTS W3SMP same_local_inv pages=256 mrkit_fence vs=nvme_style "
                         f"old={c['old']:.3f} "
                         f"new=1.099 change={c['change']:.3f} lo={changes[0]:.3f} "
                         f"hi={changes[-1]:.3f} boots=6 slower")

    def test_undecided_and_unpaired(self):
        # One boot of six the other way round: the interval holds 1.
        old = self.log([[(1040, 1000)]] * 5 + [[(1100, 1000)]])
        new = self.log([[(1060, 1000)]] * 5 + [[(1040, 1000)], [(1000, 1000)]])
        c = bench.boots_compare(old, new)[0]
        self.assertEqual(c["boots"], 6)	# boot 7 has no partner
        self.assertTrue(bench.boots_line(c).endswith(" undecided"))
        # Too few boots for a 95% interval: no bounds, no verdict.
        c = bench.boots_compare(old[:4], new[:4])[0]
        self.assertEqual(c["boots"], 2)
        self.assertIn(" lo=- hi=- boots=2 undecided", bench.boots_line(c))
        self.assertEqual(bench.boots_compare(old, []), [])

    def test_sign_interval(self):
        self.assertIsNone(stats.sign_median_ci([1, 2, 3, 4, 5]))
        self.assertEqual(stats.sign_median_ci([6, 1, 5, 2, 4, 3]), (1, 6))
        self.assertEqual(stats.sign_median_ci(list(range(1, 10))), (2, 8))
        self.assertEqual(stats.sign_median_ci(list(range(1, 13))), (3, 10))


class CostSplit(unittest.TestCase):
    """The COST lines that split a W3 or W2 figure by the figures measuring its parts."""

    @staticmethod
    def pairs(w, var, pages, impl, base, t, u):
        return [f"PAIR {w} {var} {pages} {impl} {base} 100 {100 * t} {100 * u}" for _ in range(12)]

    def figs(self, w3_extra):
        log = (self.pairs("W3", "local_inv", 1, "mrkit_fence", "nvme_style", 30 + w3_extra, 30)
               + self.pairs("W1", "d32_get1", 1, "mrkit_fence", "ib_mr_pool", 9, 10)
               + self.pairs("W2", "rxe_page_entries", 1, "mrkit_fence", "ib_map_mr_sg", 20, 7)
               + self.pairs("W2STAGE", "rxe_pages", 1, "pool", "init", 16, 10))
        figs = bench.figures(log)
        return ([f for f in figs if f["w"] != "W2STAGE"], [f for f in figs if f["w"] == "W2STAGE"])

    def test_w3_parts_without_the_descriptor_twice(self):
        figs, stages = self.figs(15)
        line = bench.w3_split(figs, stages, "local_inv", 1, "mrkit_fence")
        # 15 = -1 (descriptor vs ib_mr_pool) + (13 - 6) (map beyond a bare map, less the
        # descriptor W2 already holds) + 9.
        self.assertIn("UML's 15.0 ns extra per I/O (local_inv, pages=1, mrkit_fence) = the "
                      "descriptor's get and put against ib_mr_pool's -1.0 (-7%)", line)
        self.assertIn("less the descriptor, 7.0 (47%) (W2 rxe_page_entries 13.0 less W2STAGE pool "
                      "6.0) + the rest 9.0 (60%)", line)

    def test_w3_parts_exceeding_the_whole(self):
        figs, stages = self.figs(4)
        line = bench.w3_split(figs, stages, "local_inv", 1, "mrkit_fence")
        self.assertIn("exceed the whole by 2.0 ns at this size, so nothing is left to the rest", line)
        self.assertNotIn("the rest -", line)
        self.assertIsNone(bench.w3_split(figs, [], "local_inv", 1, "mrkit_fence"))

    def test_w2_descriptor_alone_over_the_limit(self):
        figs, stages = self.figs(15)
        w2 = [f for f in figs if f["w"] == "W2"]
        lines = bench.costs("W2 goal", 1.05, w2, figs, None, stages)
        self.assertTrue(any("a descriptor's get and put alone (W2STAGE pool) takes 6.0 ns, 86% of "
                            "the bare map's 7.0: the goal leaves 0.35 ns for all of mrkit's work, "
                            "where ib_mr_pool's get and put alone take 10.0" in x for x in lines), lines)

    def test_median_within_the_limit(self):
        figs = bench.figures(self.pairs("W3SMP", "same_local_inv", 256, "mrkit_fence", "nvme_style",
                                        104, 100))
        line = bench.costs("W3 goal", 1.05, figs, figs, None)[0]
        self.assertIn("the median is within 1.05 x", line)
        self.assertNotIn("to remove", line)


class AbGoal(unittest.TestCase):
    """The end-to-end goal: every AB row's interval contains or exceeds 1.0."""
    LOG = [
        "ulp: nvme over rxe (bench): guest ran 300 s",
        "AB nvme rxe seqread stock=75.9 mrkit=72.4 ratio=0.952 lo=0.833 hi=0.994",
        "AB nvme rxe seqwrite stock=70.3 mrkit=72.6 ratio=1.021 lo=0.968 hi=1.076",
        "FENCE iser rxe seqread lazy=66.8 fence=64.9 ratio=0.975 lo=0.716 hi=1.240",
        "AB srp siw randread4k stock=2189 mrkit=3780 ratio=1.174 lo=1.025 hi=2.005",
    ]

    def test_rows(self):
        rows = bench.ab_rows(self.LOG)
        self.assertEqual([(r["ulp"], r["transport"], r["workload"]) for r in rows],
                         [("nvme", "rxe", "seqread"), ("nvme", "rxe", "seqwrite"),
                          ("srp", "siw", "randread4k")])
        self.assertEqual(rows[0]["hi"], 0.994)

    def test_a_row_below_fails_it(self):
        goal, cost, info = bench.ab_goal(bench.ab_rows(self.LOG))
        self.assertEqual(goal["result"], "not met")
        self.assertEqual(goal["worst_hi"], 0.994)
        self.assertEqual(goal["figures"], 3)
        self.assertEqual(len(cost), 1)
        self.assertIn("1 of 3 row(s) with the whole simultaneous interval below 1.0: nvme rxe "
                      "seqread 0.952 [0.833, 0.994]", cost[0])
        self.assertEqual(info, ["AB-INTERVALS 3 of 3 row(s) judged on their own 95% interval "
                                "(no console log with their rounds)"])

    def test_containing_or_above_meets_it(self):
        goal, cost, _ = bench.ab_goal(bench.ab_rows(self.LOG[2:] + [
            "AB nfs siw seqread stock=87.5 mrkit=86.1 ratio=1.007 lo=0.936 hi=1.000"]))
        self.assertEqual(goal["result"], "met")
        self.assertEqual(cost, [])

    def test_no_rows_not_measured(self):
        goal, cost, info = bench.ab_goal([])
        self.assertEqual(goal["result"], "not measured")
        self.assertIn("not measured", cost[0])
        self.assertEqual(info, [])


class AbSimultaneous(LogTest):
    """Every row at once: each row's interval at 1 - 0.05 / rows, from its rounds."""

    def console(self, name, ratios):
        """A guest's A/B console log: seqread rounds at mrkit/stock = ratios."""
        text = "".join(fio_run("ab-rxe-prefill", write_ios=1))
        for rnd, r in enumerate(ratios, 1):
            text += fio_run(f"ab-rxe-seqread-stock-{rnd}", read_ios=9, bw=100 * 1024)
            text += fio_run(f"ab-rxe-seqread-mrkit-{rnd}", read_ios=9, bw=r * 100 * 1024)
        return self.write(name, text)

    def rows(self, log, others=23):
        """The row of @log as its report prints it, and @others more rows
        (of other drivers, with no log) that only widen the family."""
        runs = fio.runs(log)
        _, _, f = fio.ab_figure(runs, "nvme", "rxe", "seqread", "stock", "mrkit", [])
        row = bench.ab_rows([f"AB nvme rxe seqread stock=100.0 mrkit=100.0 ratio={f['ratio']:.3f} "
                             f"lo={f['lo']:.3f} hi={f['hi']:.3f}"])
        return row + bench.ab_rows(["AB srp siw seqwrite stock=1 mrkit=1 ratio=1.000 lo=0.900 "
                                    "hi=1.100"] * others)

    def test_below_by_its_own_interval_only(self):
        log = self.console("ulp-nvme-rxe-bench.log",
                           [0.813, 0.833, 1.007, 0.844, 0.967, 0.994, 0.936, 0.985])
        rows = self.rows(log)
        level = bench.ab_simultaneous(rows, [log, self.path("ulp-srp-siw-bench.log")])
        self.assertAlmostEqual(level, 1 - 0.05 / 24)
        row = rows[0]
        self.assertLess(row["hi"], 1.0)
        self.assertLessEqual(row["sim_lo"], row["lo"])
        self.assertGreaterEqual(row["sim_hi"], 1.0)
        self.assertEqual(len(row["rounds"]), 8)
        self.assertNotIn("sim_hi", rows[1])
        goal, cost, info = bench.ab_goal(rows, level)
        self.assertEqual(goal["result"], "met")
        self.assertEqual(cost, [])
        self.assertIn("AB-INTERVALS 23 of 24 row(s) judged on their own", info[0])
        self.assertIn("1 row(s) below 1.0 by their own 95% interval, not by the simultaneous one "
                      "(at exact parity 46% of runs of 24 rows show one): nvme rxe seqread 0.952",
                      info[1])

    def test_below_at_once_fails_it(self):
        log = self.console("ulp-nvme-rxe-bench.log",
                           [0.90, 0.91, 0.92, 0.89, 0.93, 0.90, 0.91, 0.92])
        rows = self.rows(log)
        level = bench.ab_simultaneous(rows, [log])
        goal, cost, _ = bench.ab_goal(rows, level)
        self.assertEqual(goal["result"], "not met")
        self.assertLess(goal["worst_hi"], 1.0)
        self.assertIn("1 of 24 row(s) with the whole simultaneous interval below 1.0: nvme rxe "
                      "seqread", cost[0])

    def test_rounds_that_do_not_give_the_line_are_not_used(self):
        log = self.console("ulp-nvme-rxe-bench.log", [1.2] * 8)
        rows = bench.ab_rows(["AB nvme rxe seqread stock=1 mrkit=1 ratio=0.950 lo=0.900 hi=0.990"])
        level = bench.ab_simultaneous(rows, [log])
        self.assertEqual(level, 0.95)
        self.assertNotIn("sim_hi", rows[0])
        self.assertEqual(bench.ab_goal(rows, level)[0]["result"], "not met")

    def test_pooled_per_driver(self):
        log = self.console("ulp-nvme-rxe-bench.log", [0.97, 1.0, 1.01, 0.99, 1.02, 0.98, 1.0, 1.03])
        rows = self.rows(log, others=0)
        bench.ab_simultaneous(rows, [log])
        (ulp, f), = bench.ab_pooled(rows + bench.ab_rows(["AB srp rxe seqread stock=1 mrkit=1 "
                                                          "ratio=1.000 lo=0.9 hi=1.1"]))
        self.assertEqual((ulp, f["rows"], f["rounds"]), ("nvme", 1, 8))
        self.assertAlmostEqual(f["ratio"], 1.0)
        self.assertLessEqual(f["lo"], f["ratio"])
        self.assertGreaterEqual(f["hi"], f["ratio"])


if __name__ == "__main__":
    unittest.main()
