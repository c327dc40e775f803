# SPDX-License-Identifier: GPL-2.0-only
"""What went over a pair's wire: a RoCEv2 summary of a PAIR_PCAP capture.

    python3 -m mrkit_report.pcap FILE.pcap [FROM TO]   (FROM, TO: Unix times)

vm-pair.sh's PAIR_PCAP=DIR keeps 128 bytes of every frame each guest's NIC
saw (qemu's filter-dump); this reads the Base Transport Header and its
RETH/AETH of every UDP/4791 packet and prints, for the target (10.98.0.1)
and the initiator (10.98.0.2):
  - connections: the CM's DREQs by the side that sent them (a target DREQ
    is the target ending the connection, e.g. after its QP failed);
  - RDMA READ amplification: distinct READ work requests (QP, rkey, end
    address: a partial retry keeps the end) against READ requests sent,
    and response packets per distinct request;
  - every NAK (RNR, PSN sequence, access, operation) by its syndrome and
    the kind of request whose PSN it carries;
  - the segments the READs touched: pages per rkey.
Headers only: no payload is kept.
"""
import collections
import struct
import sys

OPS = {0: 'SEND_FIRST', 1: 'SEND_MIDDLE', 2: 'SEND_LAST', 4: 'SEND_ONLY',
       6: 'WRITE_FIRST', 7: 'WRITE_MIDDLE', 8: 'WRITE_LAST', 10: 'WRITE_ONLY',
       12: 'READ_REQ', 13: 'READ_RESP_FIRST', 14: 'READ_RESP_MIDDLE',
       15: 'READ_RESP_LAST', 16: 'READ_RESP_ONLY', 17: 'ACK',
       22: 'SEND_LAST_INV', 23: 'SEND_ONLY_INV'}
NAKS = {0x60: 'PSN sequence', 0x61: 'invalid request',
        0x62: 'remote access', 0x63: 'remote operation'}
CM = {0x10: 'REQ', 0x11: 'MRA', 0x12: 'REJ', 0x13: 'REP', 0x14: 'RTU', 0x15: 'DREQ',
      0x16: 'DREP'}
TARGET = '10.98.0.1'


def packets(name):
    """Yield (time, source, opcode, dest QP, PSN, rest) of RoCEv2 frames."""
    with open(name, 'rb') as f:
        head = f.read(24)
        order = '<' if head[:4] == b'\xd4\xc3\xb2\xa1' else '>'
        while True:
            rec = f.read(16)
            if len(rec) < 16:
                return
            sec, usec, incl, _ = struct.unpack(order + 'IIII', rec)
            d = f.read(incl)
            if len(d) < 54 or d[12:14] != b'\x08\x00' or d[23] != 17:
                continue
            u = 14 + (d[14] & 15) * 4
            if struct.unpack('>H', d[u + 2:u + 4])[0] != 4791:
                continue
            b = d[u + 8:]
            if len(b) < 12:
                continue
            yield (sec + usec / 1e6, '.'.join(map(str, d[26:30])), b[0],
                   int.from_bytes(b[5:8], 'big'),
                   int.from_bytes(b[9:12], 'big'), b[12:])


def side(src):
    return 'target' if src == TARGET else 'initiator'


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) not in (1, 3):
        sys.exit(__doc__.split('\n\n')[1])
    lo, hi = (float(argv[1]), float(argv[2])) if len(argv) == 3 \
        else (0.0, float('inf'))
    cm = collections.Counter()
    ops = collections.Counter()
    reads = set()
    nreq = nresp = 0
    kind = {}      # (QP the request went to, PSN) -> request kind
    naks = collections.Counter()
    spans = collections.defaultdict(lambda: [1 << 64, 0])
    first = last = None
    for t, src, op, qp, psn, rest in packets(argv[0]):
        if not lo <= t < hi:
            continue
        first = t if first is None else first
        last = t
        if qp == 1:
            if len(rest) >= 26:
                attr = struct.unpack('>H', rest[24:26])[0]
                cm['%s from the %s' % (CM.get(attr, hex(attr)), side(src))] += 1
            continue
        ops['%s %s' % (side(src), OPS.get(op, hex(op)))] += 1
        if op == 12 and len(rest) >= 16:
            va, rkey, ln = struct.unpack('>QII', rest[:16])
            reads.add((qp, rkey, va + ln))
            nreq += 1
            for p in range(psn, psn + max(1, (ln + 1023) // 1024)):
                kind[p & 0xffffff] = 'READ'
            s = spans[rkey]
            s[0], s[1] = min(s[0], va), max(s[1], va + ln)
        elif op in (13, 14, 15, 16):
            nresp += 1
        elif op != 17:
            kind[psn] = OPS.get(op, hex(op)).split('_')[0]
        elif rest:
            syn = rest[0]
            if syn & 0x60 == 0x20:
                what = 'RNR NAK'
            elif syn & 0x60 == 0x60:
                what = 'NAK ' + NAKS.get(syn, hex(syn))
            else:
                continue
            naks['%s from the %s to a %s' % (what, side(src),
                                               kind.get(psn, '?'))] += 1
    if first is None:
        print('roce-pcap: no RoCEv2 packet in %s' % argv[0])
        return
    print('roce-pcap: %s, %.1f s' % (argv[0], last - first))
    print('  connections: %s' % (', '.join('%s %d' % kv for kv in sorted(cm.items())) or 'none'))
    print('  READ work requests: %d distinct, %d requests (x%.1f), %d response packets (%.0f per distinct request)' %
          (len(reads), nreq, nreq / max(1, len(reads)), nresp,
           nresp / max(1, len(reads))))
    print('  NAKs: %s' % (', '.join('%s %d' % kv for kv in sorted(naks.items())) or 'none'))
    pages = collections.Counter((s[1] - s[0] + 4095) // 4096 for s in spans.values())
    print('  pages per rkey read: %s' % ', '.join('%d x%d' % kv for kv in sorted(pages.items())))
    print('  packets: %s' % ', '.join('%s %d' % kv for kv in sorted(ops.items())))


if __name__ == '__main__':
    main()
