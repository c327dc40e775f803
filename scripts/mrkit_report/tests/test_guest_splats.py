# SPDX-License-Identifier: GPL-2.0-only
"""The guests' splat count (scripts/guest/ulp-lib.sh: ulp_splats and
ulp_known) on made-up kernel logs, with the host's sh and grep: with the
iSER guests' ULP_KNOWN (scripts/guest/iser-lib.sh), the iSCSI transport
class's known workqueue warning is counted apart in the forms the kernel
prints it, and nothing else is; without a ULP_KNOWN every warning
counts."""
import os
import subprocess

from mrkit_report.tests.util import SCRIPTS, LogTest

KNOWN = ("workqueue: WQ_MEM_RECLAIM iscsi_ctrl_0:6:__iscsi_unbind_session{0} is flushing "
         "!WQ_MEM_RECLAIM pm:pm_runtime_work\n"
         "WARNING: CPU: 1 PID: 61 at kernel/workqueue.c:2628 check_flush_dependency+0x10a/0x120\n")
OTHER = ("workqueue: WQ_MEM_RECLAIM nvme-wq:nvme_rdma_reconnect_ctrl_work [nvme_rdma] is flushing "
         "!WQ_MEM_RECLAIM events:some_work\n"
         "WARNING: CPU: 0 PID: 7 at kernel/workqueue.c:2628 check_flush_dependency+0x10a/0x120\n")
BOOT = "Linux version 6.1.0-41-amd64\n"


class GuestSplatsTest(LogTest):
    def counts(self, log, lib="iser-lib.sh"):
        """(ulp_known, ulp_splats) over the kernel log LOG, with LIB's
        ULP_KNOWN (none: no LIB)."""
        guest = os.path.join(SCRIPTS, "guest")
        prog = ('eval "$(sed -n "/^ulp_known() {/,/^}/p; /^ulp_splats() {/,/^}/p" '
                '"$G/ulp-lib.sh")"; ' + (f'. "$G/{lib}"; ' if lib else '') +
                'dmesg() { cat "$F"; }; echo "$(ulp_known) $(ulp_splats)"')
        env = dict(os.environ, G=guest, F=self.write("dmesg", log))
        out = subprocess.run(["sh", "-c", prog], env=env, check=True, capture_output=True,
                             text=True).stdout.split()
        return tuple(int(x) for x in out)

    def test_known_with_module_name(self):
        self.assertEqual(self.counts(BOOT + KNOWN.format(" [scsi_transport_iscsi]")), (1, 0))

    def test_known_built_in(self):
        self.assertEqual(self.counts(BOOT + KNOWN.format("")), (1, 0))

    def test_other_warning_still_counts(self):
        log = BOOT + KNOWN.format(" [scsi_transport_iscsi]") + OTHER
        self.assertEqual(self.counts(log), (1, 1))

    def test_clean_log(self):
        self.assertEqual(self.counts(BOOT), (0, 0))

    def test_no_known_list(self):
        log = BOOT + KNOWN.format(" [scsi_transport_iscsi]") + OTHER
        self.assertEqual(self.counts(log, lib=None), (0, 2))
