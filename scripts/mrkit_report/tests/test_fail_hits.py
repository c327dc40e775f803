# SPDX-License-Identifier: GPL-2.0-only
"""scripts/guest/fail-hits.awk (the pair guests' sorting of read-back verify
failures) on made-up fio logs, with the host's awk.

Job 1 completed writes at 3195904 (4 KiB) and 11578368 (16 KiB), and read
0 bytes at 3195904; job 2 read 0 bytes at 9766912 and completed a write
there.  The run's verify failures: 3195904 (EOF), 11578368 (inside a
completed write), 9766912 (EOF), 5000000 (no write there: a failed one);
the read-back's failure at 9766912 is inside a completed write, not EOF (a
read-back read is not the run's).
"""
import os
import subprocess

from mrkit_report.tests.util import SCRIPTS, LogTest

VERIFY = ("fio: verify: bad header offset 1, wanted 2 at file /dev/sda offset {0}, "
          "length 512 (requested block: offset={0}, length={1})\n")


class FailHitsTest(LogTest):
    def setUp(self):
        super().setUp()
        self.write("done-r_clat.1.log", "1, 100, 1, 4096, 3195904\n2, 100, 0, 0, 3195904\n"
                                        "3, 100, 1, 16384, 11578368\n")
        self.write("done-r_clat.2.log", "4, 100, 0, 0, 9766912\n5, 100, 1, 4096, 9766912\n")
        self.write("fio-r.err", "".join(VERIFY.format(o, n) for o, n in
                                        ((3195904, 4096), (11578368, 16384),
                                         (9766912, 4096), (5000000, 4096))))
        self.write("fio-r-readback.err", VERIFY.format(9766912, 4096))
        prog = os.path.join(SCRIPTS, "guest", "fail-hits.awk")
        files = [self.path(f) for f in ("done-r_clat.1.log", "done-r_clat.2.log",
                                        "fio-r.err", "fio-r-readback.err")]
        self.out = subprocess.run(["awk", "-F", ", ", "-f", prog] + files, check=True,
                                  capture_output=True, text=True).stdout.splitlines()

    def test_eof_reads_counted_apart(self):
        self.assertIn("eof 2", self.out)

    def test_failures_outside_completed_writes(self):
        self.assertEqual(self.out[-1], "1")

    def test_failures_inside_completed_writes(self):
        inside = [x.split("writes:", 1)[1] for x in self.out if "inside completed writes:" in x]
        self.assertEqual(inside, [" /dev/sda@11578368+16384 /dev/sda@9766912+4096"])
