# SPDX-License-Identifier: GPL-2.0-only
"""mrkit_report.pcap on a made-up capture.

The initiator connects, the target reads 2 KiB at psn 100 three times (two
retries) and 1 KiB at psn 102 once, two response packets come back, the
initiator sends an RNR NAK on psn 102 and a remote access NAK on psn 100,
the target disconnects.
"""
import struct

from mrkit_report import pcap
from mrkit_report.tests.util import LogTest

TARGET, INITIATOR = (10, 98, 0, 1), (10, 98, 0, 2)


def frame(t, src, dst, op, qp, psn, rest):
    bth = bytes([op, 0, 0xff, 0xff, 0]) + qp.to_bytes(3, "big") + \
        bytes([0]) + psn.to_bytes(3, "big")
    udp = struct.pack(">HHHH", 49152, 4791, 8 + len(bth) + len(rest), 0)
    ip = bytes([0x45, 0]) + struct.pack(">H", 20 + len(udp) + len(bth) + len(rest)) + \
        bytes([0, 0, 0, 0, 64, 17, 0, 0]) + bytes(src) + bytes(dst)
    d = bytes(12) + b"\x08\x00" + ip + udp + bth + rest
    return struct.pack("<IIII", t, 0, len(d), len(d)) + d


def capture():
    out = struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1)
    mad = bytes(8) + bytes(16)
    out += frame(1, INITIATOR, TARGET, 0x64, 1, 0, mad + struct.pack(">H", 0x10) + bytes(30))
    for t in (2, 3, 4):
        out += frame(t, TARGET, INITIATOR, 12, 17, 100, struct.pack(">QII", 0x1000, 7, 2048))
    out += frame(4, TARGET, INITIATOR, 12, 17, 102, struct.pack(">QII", 0x1800, 7, 1024))
    out += frame(5, INITIATOR, TARGET, 13, 18, 100, bytes([0x1f, 0, 0, 1]) + bytes(64))
    out += frame(5, INITIATOR, TARGET, 15, 18, 101, bytes([0x1f, 0, 0, 1]) + bytes(64))
    out += frame(6, INITIATOR, TARGET, 17, 18, 102, bytes([0x20, 0, 0, 1]))
    out += frame(6, INITIATOR, TARGET, 17, 18, 100, bytes([0x62, 0, 0, 1]))
    out += frame(7, TARGET, INITIATOR, 0x64, 1, 0, mad + struct.pack(">H", 0x15) + bytes(30))
    return out


class PcapTest(LogTest):
    def setUp(self):
        super().setUp()
        with open(self.path("w.pcap"), "wb") as f:
            f.write(capture())
        _, out = self.run_main(pcap, [self.path("w.pcap")])
        self.lines = {k.strip(): v for k, _, v in
                      (line.partition(": ") for line in out.splitlines()[1:])}

    def test_connections_by_side(self):
        self.assertEqual(self.lines["connections"],
                         "DREQ from the target 1, REQ from the initiator 1")

    def test_read_amplification(self):
        self.assertEqual(self.lines["READ work requests"],
                         "2 distinct, 4 requests (x2.0), 2 response packets "
                         "(1 per distinct request)")

    def test_naks_by_syndrome_and_request(self):
        self.assertEqual(self.lines["NAKs"],
                         "NAK remote access from the initiator to a READ 1, "
                         "RNR NAK from the initiator to a READ 1")

    def test_pages_per_rkey(self):
        self.assertEqual(self.lines["pages per rkey read"], "1 x1")

    def test_a_time_window_leaves_packets_out(self):
        _, out = self.run_main(pcap, [self.path("w.pcap"), "100", "200"])
        self.assertIn("no RoCEv2 packet", out)
