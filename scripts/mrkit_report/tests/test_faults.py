# SPDX-License-Identifier: GPL-2.0-only
"""mrkit_report.faults: each step's verdict, the stock driver beside mrkit's."""
from mrkit_report import faults
from mrkit_report.tests.util import LogTest

ROW = "ios=1 failed=0 reconnects=0 stale=0 leaks={} verify_errors=0 splats=0"
LOG = f"""=== faults: iser over rxe (full)
pair: iser built and packed in 1 s; rxe, full: stock:loss5,mrkit:loss5,stock:linkdown,mrkit:linkdown,stock:logout,mrkit:logout
FAULT2 iser rxe loss5 stock {ROW.format(0)}
FAULT2 iser rxe loss5 mrkit {ROW.format(0)}
FAULT2 iser rxe logout stock {ROW.format(0)}
FAULT2 iser rxe logout mrkit {ROW.format(1)}
pair-report: FAILED: linkdown stock: the initiator crashed
pair-report: FAILED: linkdown mrkit: the initiator crashed
pair-report: FAILED: logout mrkit: 1 leaked
"""


class FaultsTest(LogTest):
    def count(self, text):
        rc, out = self.run_main(faults, [self.write("faults.out", text)])
        line = [x for x in out.splitlines() if x.startswith("faults: ")]
        return rc, line[0].split(": ", 2)[2] if line else out

    def test_steps_counted_by_which_driver_failed(self):
        rc, got = self.count(LOG)
        self.assertEqual(rc, 1)
        self.assertEqual(got, "both ok 1, both failed 1, mrkit only failed 1, stock only failed 0, "
                              "missing 0, one driver only 0 (of which mrkit failed 0)")

    def test_mrkit_failing_only_where_stock_fails_passes(self):
        rc, got = self.count(LOG.replace(ROW.format(1), ROW.format(0))
                             .replace("pair-report: FAILED: logout mrkit: 1 leaked\n", ""))
        self.assertEqual(rc, 0, got)

    def test_a_driver_the_schedule_ran_without_a_row_is_missing(self):
        rc, got = self.count(LOG.replace(f"FAULT2 iser rxe loss5 mrkit {ROW.format(0)}\n", ""))
        self.assertEqual(rc, 1)
        self.assertIn("missing 1", got)
