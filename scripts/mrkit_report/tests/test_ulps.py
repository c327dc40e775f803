# SPDX-License-Identifier: GPL-2.0-only
"""mrkit_report.nvme, .iser and .nfs: a single-guest run's verdict."""
from mrkit_report import iser, nfs, nvme
from mrkit_report.tests.util import LogTest, fio_run

MIB = 1 << 20
# Corruption runs that fail: a miss, an attempt not injected, corrupt data
# delivered, nothing tried.
BAD_PIERR = ("tried=12 injected=12 detected=11 delivered_corrupt=0",
             "tried=12 injected=11 detected=11 delivered_corrupt=0",
             "tried=12 injected=12 detected=11 delivered_corrupt=1",
             "tried=0 injected=0 detected=0 delivered_corrupt=0")


class NvmeTest(LogTest):
    def log(self, verify_errors=0, leaks=0, rec=1, t="rxe", written=16 * MIB):
        return self.write("c.log", (
            fio_run(f"verify-{t}-mrkit", write_ios=9, read_ios=9, write_bytes=written,
                    read_bytes=written, verify_errors=verify_errors)
            + fio_run(f"readback-{t}-mrkit", read_ios=9, read_bytes=written)
            + fio_run(f"fault-{t}-portcycle-mrkit", write_ios=5)
            + fio_run(f"fault-{t}-portcycle-mrkit-readback", read_ios=5)
            + f"MRKIT-VM NVME fault {t} portcycle mrkit reconnects={rec} leaks={leaks} splats=0\n"
            + "MRKIT-VM NVME end splats=0\n"))

    def judge(self, log):
        build = self.write("b.log", "SPLICE-LOC rdma.c upstream=300 ours=350\n")
        return self.run_main(nvme, [log, build, "check"])

    def test_a_clean_run_passes(self):
        rc, out = self.judge(self.log())
        self.assertEqual(rc, 0, out)
        self.assertIn(f"VERIFY nvme rxe mrkit bytes={16 * MIB} errors=0", out)
        self.assertIn("LOC nvme stock=300 mrkit=350", out)

    def test_a_guest_on_6_12_says_so_in_its_lines(self):
        log = self.log()
        with open(log, "a") as f:
            f.write("MRKIT-VM kernel 6.12.117+deb12-amd64\n")
        rc, out = self.judge(log)
        self.assertEqual(rc, 0, out)
        self.assertIn(f"VERIFY nvme rxe mrkit bytes={16 * MIB} errors=0 kernel=6.12\n", out)
        self.assertIn("FAULT nvme rxe portcycle mrkit ios=10 failed=0 reconnects=1 leaks=0 "
                      "verify_errors=0 splats=0 kernel=6.12\n", out)
        # The code lines of 6.12's conversion are 6.12's too.
        self.assertIn("LOC nvme stock=300 mrkit=350 kernel=6.12\n", out)
        # 6.1's lines stay as they were.
        log = self.log()
        with open(log, "a") as f:
            f.write("MRKIT-VM kernel 6.1.0-56-amd64\n")
        rc, out = self.judge(log)
        self.assertEqual(rc, 0, out)
        self.assertNotIn("kernel=", out)

    def test_a_provider_named_with_a_hyphen_is_judged_too(self):
        rc, out = self.judge(self.log(t="rxe-pi"))
        self.assertEqual(rc, 0, out)
        self.assertIn(f"VERIFY nvme rxe-pi mrkit bytes={16 * MIB} errors=0", out)
        rc, out = self.judge(self.log(t="rxe-pi", written=MIB))
        self.assertEqual(rc, 1)
        self.assertIn("nvme-report: FAILED: VERIFY rxe-pi mrkit", out)

    def test_a_verify_error_fails(self):
        rc, out = self.judge(self.log(verify_errors=1))
        self.assertEqual(rc, 1)
        self.assertIn("nvme-report: FAILED: VERIFY rxe mrkit", out)

    def test_a_leak_or_a_port_fault_without_reconnect_fails(self):
        self.assertEqual(self.judge(self.log(leaks=1))[0], 1)
        rc, out = self.judge(self.log(rec=0))
        self.assertEqual(rc, 1)
        self.assertIn("portcycle mrkit: no reconnect", out)


class NvmePiTest(LogTest):
    """Mode pi: a PI line per driver; a namespace without PI fails it."""

    def judge(self, fmt="T10-DIF-TYPE1-CRC", drivers=("stock", "mrkit"), errors=0,
              pierr="tried=12 injected=12 detected=12 delivered_corrupt=0", sig_errors=6,
              decode="reads=6 decoded=6", named=None):
        text = f"MRKIT-VM NVME pi_drivers {named}\n" if named else ""
        for d in drivers:
            text += (fio_run(f"pi-rxe-pi-{d}", write_ios=9, read_ios=9, write_bytes=16 * MIB,
                             read_bytes=16 * MIB, verify_errors=errors)
                     + fio_run(f"pireadback-rxe-pi-{d}", read_ios=9, read_bytes=16 * MIB)
                     + f"MRKIT-VM NVME pierr rxe-pi {d} {pierr}\n"
                     + (f"MRKIT-VM NVME pidecode rxe-pi {d} {decode}\n" if d == "mrkit" else "")
                     + f"MRKIT-VM NVME pi rxe-pi {d} integrity={fmt} pools: in_use=0 "
                     f"sig_checks=9 sig_errors={sig_errors}\n")
        log = self.write("c.log", text + "MRKIT-VM NVME end splats=0\n")
        build = self.write("b.log", "SPLICE-LOC rdma.c upstream=300 ours=350\n")
        return self.run_main(nvme, [log, build, "pi"])

    def test_both_drivers_pass(self):
        rc, out = self.judge()
        self.assertEqual(rc, 0, out)
        self.assertIn(f"PI nvme rxe-pi stock bytes={16 * MIB} errors=0", out)
        self.assertIn(f"PI nvme rxe-pi mrkit bytes={16 * MIB} errors=0", out)

    def test_no_integrity_or_an_error_or_a_missing_driver_fails(self):
        rc, out = self.judge(fmt="none")
        self.assertEqual(rc, 1)
        self.assertIn("PI nvme rxe-pi mrkit bytes=16777216 errors=1", out)
        self.assertIn("the namespace has no T10-PI", out)
        self.assertEqual(self.judge(errors=1)[0], 1)
        rc, out = self.judge(drivers=("mrkit",))
        self.assertEqual(rc, 1)
        self.assertIn("PI: a run per driver expected", out)

    def test_the_drivers_the_guest_names(self):
        rc, out = self.judge(drivers=("mrkit",), named="mrkit")
        self.assertEqual(rc, 0, out)
        rc, out = self.judge(drivers=("mrkit",), named="stock,mrkit")
        self.assertEqual(rc, 1)
        self.assertIn("PI: a run per driver expected", out)
        rc, out = self.judge(drivers=("stock",), named="stock", decode="")
        self.assertEqual(rc, 1)
        self.assertIn("PI: mrkit's driver did not run", out)

    def test_pierr_needs_every_injection_detected_and_nothing_delivered(self):
        rc, out = self.judge()
        self.assertIn("PIERR nvme rxe-pi mrkit injected=12 detected=12 delivered_corrupt=0", out)
        for pierr in BAD_PIERR:
            rc, out = self.judge(pierr=pierr)
            self.assertEqual(rc, 1, pierr)
            self.assertIn("nvme-report: FAILED: PIERR rxe-pi", out)
        rc, out = self.judge(sig_errors=0)
        self.assertEqual(rc, 1)
        self.assertIn("PIERR rxe-pi mrkit: its integrity pools reported no signature error", out)

    def test_pidecode_needs_every_corrupted_read_decoded(self):
        rc, out = self.judge()
        self.assertIn("PIDECODE nvme rxe-pi mrkit reads=6 decoded=6", out)
        for decode in ("reads=6 decoded=5", "reads=0 decoded=0"):
            rc, out = self.judge(decode=decode)
            self.assertEqual(rc, 1, decode)
            self.assertIn("PIDECODE rxe-pi mrkit:", out)
        rc, out = self.judge(decode="")
        self.assertEqual(rc, 1)
        self.assertIn("PIDECODE: mrkit's run expected", out)


class IserTest(LogTest):
    def judge(self, leaks=0):
        log = self.write("c.log", (
            fio_run("verify-siw-mrkit", write_ios=3, read_ios=3)
            + fio_run("readback-siw-mrkit", read_ios=3)
            + f"MRKIT-VM ISER verify siw mrkit leaks={leaks}\n"
            + "MRKIT-VM ISER end splats=0\n"))
        return self.run_main(iser, ["--transport", "siw", log])

    def test_verify_line_and_leak(self):
        rc, out = self.judge()
        self.assertEqual(rc, 0, out)
        self.assertIn(f"VERIFY iser siw mrkit bytes={MIB} errors=0", out)
        self.assertEqual(self.judge(leaks=2)[0], 1)


class IserPiTest(LogTest):
    """Mode pi: a PI and a PIERR line per driver, judged like nvme's."""

    def judge(self, fmt="T10-DIF-TYPE1-IP", drivers=("stock", "mrkit"), errors=0,
              pierr="tried=12 injected=12 detected=12 delivered_corrupt=0", sig_errors=6,
              readback=32 * MIB, end=True, decode="reads=6 decoded=6"):
        text = ""
        for d in drivers:
            text += (fio_run(f"pi-rxe-pi-{d}", write_ios=9, read_ios=9, write_bytes=32 * MIB,
                             read_bytes=32 * MIB, verify_errors=errors)
                     + fio_run(f"pireadback-rxe-pi-{d}", read_ios=9, read_bytes=readback)
                     + f"MRKIT-VM ISER pierr rxe-pi {d} {pierr}\n"
                     + (f"MRKIT-VM ISER pidecode rxe-pi {d} {decode}\n" if d == "mrkit" else "")
                     + f"MRKIT-VM ISER pi rxe-pi {d} integrity={fmt} pools:"
                     + (f" in_use=0 sig_checks=9 sig_errors={sig_errors}" if d == "mrkit" else "")
                     + "\n")
        log = self.write("c.log", text + ("MRKIT-VM ISER end splats=0\n" if end else ""))
        return self.run_main(iser, ["--transport", "rxe-pi", "--mode", "pi", log])

    def test_both_drivers_pass(self):
        rc, out = self.judge()
        self.assertEqual(rc, 0, out)
        for d in ("stock", "mrkit"):
            self.assertIn(f"PI iser rxe-pi {d} bytes={32 * MIB} errors=0", out)
            self.assertIn(f"PIERR iser rxe-pi {d} injected=12 detected=12 delivered_corrupt=0",
                          out)

    def test_no_integrity_an_error_or_a_short_read_back_fails(self):
        rc, out = self.judge(fmt="none")
        self.assertEqual(rc, 1)
        self.assertIn(f"PI iser rxe-pi mrkit bytes={32 * MIB} errors=1", out)
        self.assertIn("the disk has no T10-PI", out)
        self.assertEqual(self.judge(errors=1)[0], 1)
        rc, out = self.judge(readback=MIB)
        self.assertEqual(rc, 1)
        self.assertIn(f"PI iser rxe-pi stock bytes={MIB} errors=1", out)

    def test_pidecode_needs_every_corrupted_read_decoded(self):
        rc, out = self.judge()
        self.assertIn("PIDECODE iser rxe-pi mrkit reads=6 decoded=6", out)
        for decode in ("reads=6 decoded=4", "reads=0 decoded=0"):
            rc, out = self.judge(decode=decode)
            self.assertEqual(rc, 1, decode)
            self.assertIn("PIDECODE mrkit:", out)

    def test_a_missing_driver_or_an_unfinished_guest_fails(self):
        rc, out = self.judge(drivers=("stock",))
        self.assertEqual(rc, 1)
        self.assertIn("PIDECODE: mrkit's run expected", out)
        rc, out = self.judge(drivers=("mrkit",))
        self.assertEqual(rc, 1)
        self.assertIn("PI: a run per driver expected", out)
        self.assertIn("PIERR: a run per driver expected", out)
        rc, out = self.judge(end=False)
        self.assertEqual(rc, 1)
        self.assertIn("the guest did not finish", out)

    def test_pierr_needs_every_injection_detected_and_nothing_delivered(self):
        for pierr in BAD_PIERR:
            rc, out = self.judge(pierr=pierr)
            self.assertEqual(rc, 1, pierr)
            self.assertIn("iser-report: FAIL PIERR stock", out)
        rc, out = self.judge(sig_errors=0)
        self.assertEqual(rc, 1)
        self.assertIn("PIERR mrkit: its integrity pools reported no signature error", out)


class NfsTest(LogTest):
    def judge(self, readback_bytes, expect_v3=""):
        log = self.write("c.log", (
            fio_run("verify-rxe-direct-mrkit", write_ios=2, read_ios=2)
            + fio_run("verify-rxe-buffered-mrkit", write_ios=2, read_ios=2)
            + fio_run("readback-rxe-buffered-mrkit", read_ios=2, read_bytes=readback_bytes)
            + "MRKIT-VM NFS inv rxe mrkit remote=5 local=2 stale=0\n"))
        build = self.write("b.log", "SPLICE-LOC frwr_ops.c upstream=400 ours=500\n")
        return self.run_main(nfs, [log, build, "--expect-v3", expect_v3])

    def test_verify_inv_and_loc(self):
        rc, out = self.judge(MIB)
        self.assertEqual(rc, 0, out)
        self.assertIn(f"VERIFY nfs rxe mrkit bytes={2 * MIB} errors=0", out)
        self.assertIn("INV nfs rxe mrkit remote=5 local=2 stale_replaced=0", out)
        self.assertIn("LOC nfs stock=400 mrkit=500", out)

    def test_a_short_read_back_or_a_missing_v3_run_fails(self):
        self.assertEqual(self.judge(MIB // 2)[0], 1)
        rc, out = self.judge(MIB, expect_v3="mrkit:4")
        self.assertEqual(rc, 1)
        self.assertIn("no NFSv3 verify run with the mrkit module", out)
