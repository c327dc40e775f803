# SPDX-License-Identifier: GPL-2.0-only
"""mrkit_report.pair: the two-guest fault report's rules on made-up logs."""
import os
from unittest import mock

from mrkit_report import pair
from mrkit_report.tests.util import LogTest, fio_run

FACTS = ("leaks=0 splats=0 tsplats=0 stale=5 replaced=5 reused=0 overrun=0 "
         "verify_inside=0")
END = "MRKIT-VM PASS pair full\nMRKIT-VM PAIR target ok end_splats=0 unload=ok\n"


class PairTest(LogTest):
    def setUp(self):
        super().setUp()
        self.target = self.write("target.log", "")

    def report(self, steps, text, ulp="nfs"):
        log = self.write("all.log", text)
        return self.run_main(pair, [ulp, "rxe", steps, log, self.target])

    def test_a_crashed_step_is_a_failed_row_without_fault2(self):
        rc, out = self.report("stock:linkdown,mrkit:linkdown",
                              "MRKIT-HOST crashed linkdown stock 3\n"
                              "MRKIT-HOST crashed linkdown mrkit 4\n", ulp="iser")
        self.assertEqual(rc, 1)
        self.assertNotIn("FAULT2", out)
        self.assertEqual(out.count("the initiator crashed ("), 4)

    def repeated(self, tsplats="0"):
        text = ""
        for n, (w, r, rec) in enumerate(((10, 7, 3), (20, 9, 4))):
            facts = FACTS if n else FACTS.replace("tsplats=0", f"tsplats={tsplats}")
            text += (fio_run("pair-rxe-delay-mrkit", write_ios=w)
                     + fio_run("pair-rxe-delay-mrkit-readback", read_ios=r)
                     + f"MRKIT-VM PAIR fault rxe delay mrkit reconnects={rec} {facts}\n")
        return self.report("mrkit:delay,mrkit:delay", text + END)

    def test_a_repeated_step_is_a_row_per_run(self):
        rc, out = self.repeated()
        self.assertEqual(rc, 0, out)
        rows = [line.split()[5:7] for line in out.splitlines() if line.startswith("FAULT2")]
        self.assertEqual(rows, [["ios=17", "failed=0"], ["ios=29", "failed=0"]])
        self.assertEqual([w for w in out.split() if w.startswith("reconnects=")],
                         ["reconnects=3", "reconnects=4"])

    def test_a_splat_says_whose_console_it_was_on(self):
        rc, out = self.repeated(tsplats="1")
        self.assertEqual(rc, 1)
        self.assertIn("pair-report: FAILED: delay mrkit: 1 splats on the target", out)

    def test_fault2_names_a_kernel_other_than_6_1(self):
        step = (fio_run("pair-rxe-delay-mrkit", write_ios=5)
                + fio_run("pair-rxe-delay-mrkit-readback", read_ios=5)
                + f"MRKIT-VM PAIR fault rxe delay mrkit reconnects=1 {FACTS}\n")
        for release, tail in (("6.1.0-44-amd64", "splats=0"),
                              ("6.12.57+deb12-amd64", "splats=0 kernel=6.12")):
            rc, out = self.report("mrkit:delay", f"MRKIT-VM kernel {release}\n" + step + END)
            self.assertEqual(rc, 0, out)
            line = [x for x in out.splitlines() if x.startswith("FAULT2")][0]
            self.assertTrue(line.endswith(tail), line)

    def test_no_reconnect_after_linkdown_fails(self):
        text = (fio_run("pair-rxe-linkdown-mrkit", write_ios=5)
                + fio_run("pair-rxe-linkdown-mrkit-readback", read_ios=5)
                + f"MRKIT-VM PAIR fault rxe linkdown mrkit reconnects=0 {FACTS}\n" + END)
        rc, out = self.report("mrkit:linkdown", text)
        self.assertEqual(rc, 1)
        self.assertIn("linkdown mrkit: no reconnect", out)

    def test_srp_needs_a_reconnect_after_targetkill_only(self):
        def text(fault):
            return (fio_run(f"pair-rxe-{fault}-mrkit", write_ios=5)
                    + fio_run(f"pair-rxe-{fault}-mrkit-readback", read_ios=5)
                    + f"MRKIT-VM PAIR mrs rxe {fault} mrkit per_request_max=2 "
                      "multi_mr_requests=3 maps=40\n"
                    + f"MRKIT-VM PAIR fault rxe {fault} mrkit reconnects=0 {FACTS}\n" + END)
        rc, out = self.report("mrkit:linkdown", text("linkdown"), ulp="srp")
        self.assertEqual(rc, 0, out)
        rc, out = self.report("mrkit:targetkill", text("targetkill"), ulp="srp")
        self.assertEqual(rc, 1)
        self.assertIn("targetkill mrkit: no reconnect", out)

    def srp_steps(self, counts):
        text = ""
        for fault, count in zip(("loss5", "dup"), counts):
            text += (fio_run(f"pair-rxe-{fault}-mrkit", write_ios=5)
                     + fio_run(f"pair-rxe-{fault}-mrkit-readback", read_ios=5))
            if count:
                text += f"MRKIT-VM PAIR mrs rxe {fault} mrkit {count} maps=50\n"
            text += f"MRKIT-VM PAIR fault rxe {fault} mrkit reconnects=0 {FACTS}\n"
        return self.report("mrkit:loss5,mrkit:dup", text + END, ulp="srp")

    def test_srp_prints_mrs_over_its_steps(self):
        rc, out = self.srp_steps(("per_request_max=3 multi_mr_requests=4",
                                  "per_request_max=2 multi_mr_requests=5"))
        self.assertEqual(rc, 0, out)
        self.assertIn("MRS srp rxe per_request_max=3 multi_mr_requests=9\n", out)

    def test_srp_without_a_multi_mr_request_or_a_count_fails(self):
        rc, out = self.srp_steps(("per_request_max=1 multi_mr_requests=0",) * 2)
        self.assertEqual(rc, 1)
        self.assertIn("MRS srp rxe per_request_max=1 multi_mr_requests=0", out)
        self.assertIn("pair-report: FAILED: MRS rxe: no request took several MRs", out)
        rc, out = self.srp_steps((None, None))
        self.assertEqual(rc, 1)
        self.assertNotIn("MRS srp", out)
        self.assertIn("pair-report: FAILED: no MRS count from the steps of mrkit's driver",
                      out)

    def test_verify_errors_at_failed_writes_and_eof_do_not_count(self):
        facts = FACTS.replace("verify_inside=0", "verify_inside=1")
        text = (fio_run("pair-rxe-loss5-mrkit", write_ios=5, verify_errors=2)
                + fio_run("pair-rxe-loss5-mrkit-readback", read_ios=5, verify_errors=2)
                + f"MRKIT-VM PAIR fault rxe loss5 mrkit reconnects=1 {facts} "
                  "verify_at_failed_writes=2 verify_at_eof=1\n" + END)
        rc, out = self.report("mrkit:loss5", text)
        self.assertEqual(rc, 1)
        self.assertIn("verify_errors=1 ", out)

    def test_only_the_known_target_warnings_are_left_out(self):
        known = ("[   11.1] WARNING: CPU: 1 PID: 151 at drivers/infiniband/ulp/srpt/"
                 "ib_srpt.c:1403 srpt_rdma_read_done+0x60/0x70 [ib_srpt]\n")
        other = ("[   12.2] WARNING: CPU: 0 PID: 9 at drivers/infiniband/ulp/srpt/"
                 "ib_srpt.c:2697 srpt_queue_response+0x1/0x2 [ib_srpt]\n")
        step = (fio_run("pair-rxe-delay-mrkit", write_ios=5)
                + fio_run("pair-rxe-delay-mrkit-readback", read_ios=5)
                + f"MRKIT-VM PAIR fault rxe delay mrkit reconnects=1 {FACTS}\n")
        regex = r"ib_srpt\.c:[0-9]+.srpt_(rdma_read|send)_done\+"
        for env, console, rc_want in (("", known, 1), (regex, known, 0),
                                      (regex, known + other, 1)):
            self.write("target.log", console)
            with mock.patch.dict(os.environ, {"MRKIT_PAIR_TKNOWN": env}):
                rc, out = self.report("mrkit:delay", step + END)
            self.assertEqual(rc, rc_want, out)
            if rc:
                self.assertIn("1 splats on the target's consoles", out)
