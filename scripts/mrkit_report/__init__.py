# SPDX-License-Identifier: GPL-2.0-only
"""mrkit's report parsers: guest console logs in, verdict lines out.

Each module reads what one kind of run prints and prints lines built from
measured values only, exiting 1 when a number says the run failed:

  fio     the fio runs a guest printed (MRKIT-FIO-BEGIN/END around fio's
          JSON); shared by the others
  nvme    one nvme-rdma guest (VERIFY / FAULT / AB / LOC)
  iser    one iSER guest (VERIFY / FENCE / FAULT / AB / LOC)
  nfs     one NFS/RDMA guest (VERIFY / FAULT / AB / INV / LOC)
  pair    a two-guest fault schedule (a table and FAULT2 lines)
  faults  make faults' steps, the stock driver beside mrkit's
  pcap    a RoCEv2 summary of a pair's wire capture
  kunit   the verdict on one KUnit run (kunit.py's JSON and kernel log)

Run one as "PYTHONPATH=scripts python3 -m mrkit_report.MODULE ARG...";
each has main(argv) for the unit tests (scripts/mrkit_report/tests, stdlib
unittest: "cd scripts && python3 -m unittest discover -s
mrkit_report/tests -t .").
"""
