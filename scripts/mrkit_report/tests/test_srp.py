# SPDX-License-Identifier: GPL-2.0-only
"""mrkit_report.srp: a single-guest SRP run's verdict and its A/B lines."""
from mrkit_report import srp
from mrkit_report.tests.util import LogTest, fio_run

MIB = 1 << 20


class SrpTest(LogTest):
    def log(self, verify_errors=0, leaks=0, rec=1, multi=18, per=3, splats=0,
            cross_errors=0, t="rxe"):
        return self.write("c.log", (
            fio_run(f"verify-{t}-mrkit", write_ios=9, read_ios=9, write_bytes=24 * MIB,
                    read_bytes=24 * MIB, verify_errors=verify_errors)
            + fio_run(f"readback-{t}-mrkit", read_ios=9, read_bytes=24 * MIB)
            + fio_run(f"crossread-{t}-mrkit", read_ios=8, read_bytes=24 * MIB,
                      verify_errors=cross_errors)
            + f"MRKIT-VM SRP mrs {t} mrkit per_request_max={per} multi_mr_requests={multi} maps=99\n"
            + f"MRKIT-VM SRP verify {t} mrkit leaks={leaks}\n"
            + fio_run(f"fault-{t}-tpg-mrkit-pre", write_ios=4, read_ios=4)
            + fio_run(f"fault-{t}-tpg-mrkit", write_ios=5, read_ios=5)
            + fio_run(f"fault-{t}-tpg-mrkit-after-b", read_ios=5)
            + fio_run(f"fault-{t}-tpg-mrkit-after", read_ios=4)
            + f"MRKIT-VM SRP fault {t} tpg mrkit reconnects={rec} leaks=0 splats={splats}\n"
            + f"MRKIT-VM SRP end splats={splats}\n"))

    def judge(self, log, mode="check", build_text="SPLICE-LOC ib_srp.c upstream=450 ours=340\n"
              "SPLICE-LOC ib_srp.h upstream=14 ours=7\n", t="rxe"):
        build = self.write("b.log", build_text)
        return self.run_main(srp, ["--transport", t, "--mode", mode,
                                   "--build-log", build, log])

    def test_a_clean_run_passes(self):
        rc, out = self.judge(self.log())
        self.assertEqual(rc, 0, out)
        self.assertIn(f"VERIFY srp rxe mrkit bytes={24 * MIB} errors=0", out)
        self.assertIn("MRS srp rxe per_request_max=3 multi_mr_requests=18", out)
        self.assertIn("FAULT srp rxe tpg mrkit ios=10 failed=0 reconnects=1 leaks=0 "
                      "verify_errors=0 splats=0", out)
        self.assertIn("LOC srp stock=464 mrkit=347", out)

    def test_a_siw_run_has_its_own_rows(self):
        # One guest runs SRP over siw too; its rows name the transport.
        rc, out = self.judge(self.log(t="siw", per=5), t="siw")
        self.assertEqual(rc, 0, out)
        self.assertIn(f"VERIFY srp siw mrkit bytes={24 * MIB} errors=0", out)
        self.assertIn("MRS srp siw per_request_max=5 multi_mr_requests=18", out)
        self.assertIn("FAULT srp siw tpg mrkit ios=10 failed=0 reconnects=1 leaks=0 "
                      "verify_errors=0 splats=0", out)
        # The runs of one transport are not taken for the other's.
        rc, out = self.judge(self.log(t="siw"), t="rxe")
        self.assertEqual(rc, 1, out)
        self.assertIn("srp-report: FAILED: verify mrkit: fio runs missing", out)

    def fails(self, log, why):
        rc, out = self.judge(log)
        self.assertEqual(rc, 1, out)
        self.assertIn(f"srp-report: FAILED: {why}", out)

    def test_a_verify_error_or_a_leak_fails(self):
        self.fails(self.log(verify_errors=1), "VERIFY rxe mrkit")
        self.fails(self.log(leaks=1), "VERIFY rxe mrkit")
        # A mapping wrong the same way for writes and reads shows only when
        # the blocks are read in other pieces.
        self.fails(self.log(cross_errors=3), "VERIFY rxe mrkit")

    def test_no_multi_mr_request_fails(self):
        self.fails(self.log(multi=0, per=1), "MRS rxe: no request took several MRs")

    def test_a_fault_without_reconnect_or_with_a_splat_fails(self):
        self.fails(self.log(rec=0), "FAULT rxe tpg mrkit")
        self.fails(self.log(splats=1), "FAULT rxe tpg mrkit")

    def abort_log(self, eh):
        return self.write("a.log", (
            fio_run("fault-rxe-abort-mrkit-pre", write_ios=4, read_ios=4)
            + fio_run("fault-rxe-abort-mrkit", write_ios=5, read_ios=5)
            + fio_run("fault-rxe-abort-mrkit-after-b", read_ios=5)
            + fio_run("fault-rxe-abort-mrkit-after", read_ios=4)
            + f"MRKIT-VM SRP fault rxe abort mrkit reconnects=1 leaks=0 splats=0 {eh}\n"
            + "MRKIT-VM SRP end splats=0\n"))

    def test_the_abort_fault_shows_and_needs_the_error_handlers_steps(self):
        ok = "aborts_failed=3 lun_resets=2 host_resets=1 late_responses=2 lazy_released=2"
        rc, out = self.judge(self.abort_log(ok))
        self.assertIn("FAULT srp rxe abort mrkit ios=10 failed=0 reconnects=1 leaks=0 "
                      f"verify_errors=0 splats=0 {ok}\n", out)
        # Only the verify run and MRS are missing from this log.
        self.assertNotIn("FAILED: FAULT", out)
        for eh in ("aborts_failed=0 lun_resets=2 host_resets=1 late_responses=0 lazy_released=1",
                   "aborts_failed=2 lun_resets=0 host_resets=1 late_responses=0 lazy_released=1",
                   "aborts_failed=2 lun_resets=2 host_resets=0 late_responses=0 lazy_released=1",
                   # srp_mrkit_drop() gave nothing back after the LUN reset.
                   "aborts_failed=2 lun_resets=2 host_resets=1 late_responses=0 lazy_released=0",
                   "aborts_failed=2 lun_resets=2 host_resets=1 late_responses=0",
                   ""):
            rc, out = self.judge(self.abort_log(eh))
            self.assertEqual(rc, 1, out)
            self.assertIn("srp-report: FAILED: FAULT rxe abort mrkit: ", out)

    def test_a_build_log_without_loc_fails(self):
        rc, out = self.judge(self.log(), build_text="make: nothing to be done\n")
        self.assertEqual(rc, 1, out)
        self.assertNotIn("LOC srp", out)
        self.assertIn("srp-report: FAILED: no SPLICE-LOC lines in the build log", out)

    def test_too_few_bytes_for_the_demo_fails(self):
        self.assertEqual(self.judge(self.log(), mode="demo")[0], 1)

    def test_ab_is_paired_by_round(self):
        # Round 1 is slow for both drivers, round 2 fast: the per-round
        # ratio is 0.9 in both, which medians of each side would not say.
        text = fio_run("ab-rxe-prefill", write_ios=1)
        for rnd, scale in ((1, 1), (2, 4)):
            text += fio_run(f"ab-rxe-seqread-stock-{rnd}", read_ios=1, bw=1000 * scale)
            text += fio_run(f"ab-rxe-seqread-mrkit-{rnd}", read_ios=1, bw=900 * scale)
        text += "MRKIT-VM SRP end splats=0\n"
        rc, out = self.judge(self.write("ab.log", text), mode="bench")
        self.assertEqual(rc, 0, out)
        self.assertIn("AB srp rxe seqread stock=2.4 mrkit=2.2 ratio=0.900 lo=0.900 hi=0.900",
                      out)
