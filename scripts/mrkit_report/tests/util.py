# SPDX-License-Identifier: GPL-2.0-only
"""What the report tests share: made-up logs in a temporary directory, and
a module's main() run with its output captured."""
import contextlib
import io
import json
import os
import shutil
import tempfile
import unittest

SCRIPTS = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class LogTest(unittest.TestCase):
    """A test case with a temporary directory and a runner for main()."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="mrkit-report-test.")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def path(self, name):
        return os.path.join(self.tmp, name)

    def write(self, name, text):
        with open(self.path(name), "w", encoding="utf-8") as f:
            f.write(text)
        return self.path(name)

    def run_main(self, module, argv):
        """(exit status, stdout) of module.main(argv)."""
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            try:
                rc = module.main(argv)
            except SystemExit as e:
                rc = e.code
        return rc or 0, out.getvalue()


def fio_run(name, write_ios=0, read_ios=0, write_bytes=1 << 20, read_bytes=1 << 20,
            verify_errors=0, io_errors=0, bw=1024, iops=1.0, rc=0):
    """The console lines of one fio run, as the guest's ulp_fio prints them."""
    job = {"read": {"io_bytes": read_bytes, "total_ios": read_ios, "bw": bw, "iops": iops},
           "write": {"io_bytes": write_bytes, "total_ios": write_ios, "bw": bw, "iops": iops}}
    return (f"MRKIT-FIO-BEGIN {name} rc={rc} verify_errors={verify_errors} io_errors={io_errors}\n"
            + json.dumps({"jobs": [job]}) + "\n"
            + f"MRKIT-FIO-END {name}\n")
