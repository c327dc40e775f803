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

    def test_ab_metric_spread_and_splice_loc(self):
        run = {"read_bw": 2048, "write_bw": 1024, "read_iops": 99.5}
        self.assertEqual(fio.ab_metric(run, "seqread"), 2.0)
        self.assertEqual(fio.ab_metric(run, "seqwrite"), 1.0)
        self.assertEqual(fio.ab_metric(run, "randread4k"), 99.5)
        self.assertAlmostEqual(fio.spread([9.0, 11.0]), 20.0)
        self.assertEqual(fio.spread([]), 0.0)
        build = self.write("b.log", "SPLICE-LOC a.c upstream=10 ours=4\nnoise\n"
                                    "SPLICE-LOC b.h upstream=1 ours=6\n")
        self.assertEqual(fio.splice_loc(build), (11, 10))
