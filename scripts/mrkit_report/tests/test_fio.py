# SPDX-License-Identifier: GPL-2.0-only
"""mrkit_report.fio: fio's JSON between the guest's markers."""
from mrkit_report import fio
from mrkit_report.tests.util import LogTest, fio_run


class FioTest(LogTest):
    def test_runs_sums_jobs_and_keeps_the_guest_counts(self):
        log = self.write("c.log", "[    1.0] boot\n" + fio_run("verify-rxe-mrkit", write_ios=7,
                                                          read_ios=5, verify_errors=2))
        r = fio.runs(log)["verify-rxe-mrkit"]
        self.assertEqual((r["write_ios"], r["read_ios"], r["verify_errors"], r["rc"]), (7, 5, 2, 0))
        self.assertEqual(r["write_bytes"], 1 << 20)

    def test_a_repeated_name_keeps_every_run(self):
        log = self.write("c.log", fio_run("x", write_ios=1) + fio_run("x", write_ios=2)
                         + fio_run("x", write_ios=3))
        r = fio.runs(log)
        self.assertEqual([r[k]["write_ios"] for k in ("x", "x#2", "x#3")], [1, 2, 3])

    def test_kernel_lines_inside_the_json_are_dropped(self):
        text = fio_run("y", write_ios=4).replace("\n{", "\n[   12.5] rxe: noise\n{", 1)
        self.assertEqual(fio.runs(self.write("c.log", text))["y"]["write_ios"], 4)

    def test_unreadable_json_is_a_parse_error(self):
        log = self.write("c.log", "MRKIT-FIO-BEGIN z rc=0\n{ no json\nMRKIT-FIO-END z\n")
        self.assertIn("parse_error", fio.runs(log)["z"])

    def test_ab_metric_and_splice_loc(self):
        run = {"read_bw": 2048, "write_bw": 1024, "read_iops": 99.5}
        self.assertEqual(fio.ab_metric(run, "seqread"), 2.0)
        self.assertEqual(fio.ab_metric(run, "seqwrite"), 1.0)
        self.assertEqual(fio.ab_metric(run, "randread4k"), 99.5)
        build = self.write("b.log", "SPLICE-LOC a.c upstream=10 ours=4\nnoise\n"
                                    "SPLICE-LOC b.h upstream=1 ours=6\n")
        self.assertEqual(fio.splice_loc(build), (11, 10))


def _ab(bw):
    return {"read_bw": bw * 1024.0, "write_bw": bw * 1024.0, "read_iops": bw}


class AbFigureTest(LogTest):
    def test_the_ratio_is_taken_round_by_round(self):
        # The machine's speed moves between rounds; mrkit is 10% faster in
        # each: the per-round ratio says 1.1 exactly, whatever the spread.
        runs = {"ab-rxe-seqread-stock-0": _ab(1.0)}
        for r, base in enumerate((100.0, 300.0, 50.0, 200.0, 120.0), 1):
            runs[f"ab-rxe-seqread-stock-{r}"] = _ab(base)
            runs[f"ab-rxe-seqread-mrkit-{r}"] = _ab(base * 1.1)
        bad = []
        x, y, f = fio.ab_figure(runs, "nvme", "rxe", "seqread", "stock", "mrkit", bad)
        self.assertEqual(bad, [])
        self.assertEqual((x, y), (120.0, 132.0))
        self.assertAlmostEqual(f["ratio"], 1.1)
        self.assertAlmostEqual(f["lo"], 1.1)
        self.assertAlmostEqual(f["hi"], 1.1)
        self.assertEqual(f["pairs"], 5)
        line = fio.ab_line("AB", "nvme", "rxe", "seqread", ("stock", "mrkit"), (x, y, f))
        self.assertEqual(line, "AB nvme rxe seqread stock=120.0 mrkit=132.0 "
                               "ratio=1.100 lo=1.100 hi=1.100")

    def test_a_round_without_both_runs_or_with_errors_is_named(self):
        runs = {"ab-siw-randread4k-stock-1": _ab(10.0), "ab-siw-randread4k-mrkit-1": _ab(9.0),
                "ab-siw-randread4k-stock-2": _ab(10.0),
                "ab-siw-randread4k-stock-3": _ab(10.0),
                "ab-siw-randread4k-mrkit-3": dict(_ab(11.0), verify_errors=1)}
        bad = []
        x, y, f = fio.ab_figure(runs, "srp", "siw", "randread4k", "stock", "mrkit", bad)
        self.assertEqual(len(bad), 2)
        self.assertTrue(all("round" in b for b in bad))
        self.assertEqual(f["pairs"], 1)
        self.assertAlmostEqual(f["ratio"], 0.9)
        self.assertEqual(fio.ab_line("AB", "srp", "siw", "randread4k", ("stock", "mrkit"),
                                     (x, y, f)).split()[4:6], ["stock=10", "mrkit=9"])

    def test_no_round_no_figure(self):
        bad = []
        self.assertIsNone(fio.ab_figure({"ab-rxe-seqread-stock-0": _ab(1.0)}, "nfs", "rxe",
                                        "seqread", "stock", "mrkit", bad))
        self.assertEqual(bad, [])

    def test_an_interval_follows_the_rounds_disagreement(self):
        runs = {}
        for r, q in enumerate((0.8, 1.3, 0.9, 1.2, 1.0, 1.1, 0.95, 1.05), 1):
            runs[f"ab-rxe-seqwrite-mrkit-{r}"] = _ab(100.0)
            runs[f"ab-rxe-seqwrite-fence-{r}"] = _ab(100.0 * q)
        f = fio.ab_figure(runs, "iser", "rxe", "seqwrite", "mrkit", "fence", [])[2]
        self.assertLess(f["lo"], 1.0)
        self.assertGreater(f["hi"], 1.0)

    def test_not_a_ratio_of_medians(self):
        # Per-round ratios 1.2, 1.2, 0.5: their median is 1.2, while the
        # medians' ratio (150 / 200) would say 0.75.
        runs = {}
        for r, (s, m) in enumerate(((100.0, 120.0), (200.0, 240.0), (300.0, 150.0)), 1):
            runs[f"ab-rxe-seqread-stock-{r}"] = _ab(s)
            runs[f"ab-rxe-seqread-mrkit-{r}"] = _ab(m)
        x, y, f = fio.ab_figure(runs, "nvme", "rxe", "seqread", "stock", "mrkit", [])
        self.assertEqual((x, y), (200.0, 150.0))
        self.assertAlmostEqual(f["ratio"], 1.2)
