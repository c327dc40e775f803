# SPDX-License-Identifier: GPL-2.0-only
"""mrkit_report.kunit: a KUnit run is judged strictly."""
import json
import os

from mrkit_report import kunit
from mrkit_report.tests.util import LogTest

SUITES = ('static struct kunit_suite a_suite = {\n\t.name = "mrkit_a",\n};\n'
          'static struct kunit_suite b_suite = {\n\t.name = "mrkit_b",\n};\n')


class KunitTest(LogTest):
    def judge(self, cases, log="ok\n", suites=("mrkit_a", "mrkit_b")):
        res = {"sub_groups": [{"name": s, "test_cases": [{"name": f"c{i}", "status": st}
                                                          for i, st in enumerate(cases)]}
                              for s in suites]}
        j = self.write("r.json", json.dumps(res))
        rc, out = self.run_main(kunit, ["debug", j, self.write("test.log", log),
                                        self.write("t.c", SUITES)])
        with open(j + ".counts", encoding="utf-8") as f:
            return rc, out, f.read().split()

    def test_all_passed(self):
        rc, out, counts = self.judge(["PASS", "PASS"])
        self.assertEqual((rc, counts), (0, ["4", "0"]), out)

    def test_a_skip_fails(self):
        rc, out, _ = self.judge(["PASS", "SKIP"])
        self.assertEqual(rc, 1)
        self.assertIn("mrkit_a.c1: SKIP", out)

    def test_a_suite_that_did_not_run_fails(self):
        rc, out, counts = self.judge(["PASS"], suites=("mrkit_a",))
        self.assertEqual(rc, 1)
        self.assertIn("suite mrkit_b did not run", out)
        self.assertEqual(counts, ["1", "1"])

    def test_a_filter_expects_only_the_suites_it_names(self):
        os.environ["MRKIT_KUNIT_FILTER"] = "mrkit_a"
        try:
            rc, out, _ = self.judge(["PASS"], suites=("mrkit_a",))
        finally:
            del os.environ["MRKIT_KUNIT_FILTER"]
        self.assertEqual(rc, 0, out)

    def test_a_splat_in_the_kernel_log_fails(self):
        rc, out, _ = self.judge(["PASS"], log="x\nBUG: KASAN: use-after-free in f\nstack\n")
        self.assertEqual(rc, 1)
        self.assertIn("kernel log: BUG: KASAN", out)
