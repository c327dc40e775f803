#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The fault report's own rules, on made-up logs (make check's static
# step): pair_fail_hits (init-pair-lib.sh) sorts read-back verify failures
# into EOF reads (0-byte reads of a deleted disk), failed writes and the
# real ones inside completed writes; pair-report.py turns a step the
# initiator crashed in into a failed row without a FAULT2 line, and gives
# a step run twice a row per run;
# faults-ab.py counts the steps by which driver failed; roce-pcap.py
# sums up a capture's RoCE headers.
set -euo pipefail

proj=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp" /tmp/done-selftest${$}_clat.* /tmp/fio-selftest$$*.err' EXIT
bad=0
expect() {	# what, got, want
	if [ "$2" != "$3" ]; then
		echo "pair-selftest: $1: got '$2', want '$3'"
		bad=1
	fi
}

# pair_fail_hits: job 1 completed writes at 3195904 (4 KiB) and 11578368
# (16 KiB); a 0-byte read at 3195904; job 2 a 0-byte read at 9766912 and
# a write there.  The run's failures: 3195904 (EOF), 11578368 (inside),
# 9766912 (EOF), 5000000 (no write: a failed one); the read-back's at
# 9766912 is inside a completed write, not EOF (a read-back read is not
# the run's).
n=selftest$$
printf '1, 100, 1, 4096, 3195904\n2, 100, 0, 0, 3195904\n3, 100, 1, 16384, 11578368\n' \
	> "/tmp/done-${n}_clat.1.log"
printf '4, 100, 0, 0, 9766912\n5, 100, 1, 4096, 9766912\n' > "/tmp/done-${n}_clat.2.log"
v='fio: verify: bad header offset 1, wanted 2 at file /dev/sda offset %s, length 512 (requested block: offset=%s, length=%s)\n'
# shellcheck disable=SC2059
{ printf "$v" 3195904 3195904 4096; printf "$v" 11578368 11578368 16384
  printf "$v" 9766912 9766912 4096; printf "$v" 5000000 5000000 4096; } > "/tmp/fio-$n.err"
# shellcheck disable=SC2059
printf "$v" 9766912 9766912 4096 > "/tmp/fio-$n-readback.err"
sed -n '/^pair_fail_hits() {/,/^}/p' "$proj/scripts/vm/init-pair-lib.sh" > "$tmp/f.sh"
echo "pair_fail_hits $n" >> "$tmp/f.sh"
sh "$tmp/f.sh" > "$tmp/out"
expect "pair_fail_hits: EOF count" "$(sed -n 's/^eof //p' "$tmp/out")" 2
expect "pair_fail_hits: outside completed writes" "$(tail -n 1 "$tmp/out")" 1
expect "pair_fail_hits: inside completed writes" \
	"$(sed -n 's/.*inside completed writes://p' "$tmp/out")" \
	" /dev/sda@11578368+16384 /dev/sda@9766912+4096"

# pair-report.py: both steps crashed; a failed row each, no FAULT2 line.
{ echo "MRKIT-HOST crashed linkdown stock 3"; echo "MRKIT-HOST crashed linkdown mrkit 4"; } \
	> "$tmp/all.log"
: > "$tmp/target.log"
rc=0
python3 "$proj/scripts/ulp/pair-report.py" iser rxe stock:linkdown,mrkit:linkdown \
	"$tmp/all.log" "$tmp/target.log" > "$tmp/rep" || rc=$?
expect "pair-report: exit" "$rc" 1
expect "pair-report: FAULT2 lines" "$(grep -c '^FAULT2' "$tmp/rep" || true)" 0
expect "pair-report: crashed rows" "$(grep -c 'the initiator crashed (' "$tmp/rep" || true)" 4

# pair-report.py: a step run twice (PAIR_STEPS=mrkit:delay,mrkit:delay)
# is two rows with each run's own figures, not the last run's twice.
fio_run() {	# name write_ios read_ios
	echo "MRKIT-FIO-BEGIN $1 rc=0 verify_errors=0 io_errors=0"
	printf '{"jobs": [{"read": {"io_bytes": 1048576, "total_ios": %s, "bw": 1, "iops": 1},' "$3"
	printf ' "write": {"io_bytes": 1048576, "total_ios": %s, "bw": 1, "iops": 1}}]}\n' "$2"
	echo "MRKIT-FIO-END $1"
}
f='leaks=0 splats=0 tsplats=0 stale=5 replaced=5 reused=0 overrun=0 verify_inside=0'
{ fio_run pair-rxe-delay-mrkit 10 0; fio_run pair-rxe-delay-mrkit-readback 0 7
  echo "MRKIT-VM PAIR fault rxe delay mrkit reconnects=3 $f"
  fio_run pair-rxe-delay-mrkit 20 0; fio_run pair-rxe-delay-mrkit-readback 0 9
  echo "MRKIT-VM PAIR fault rxe delay mrkit reconnects=4 $f"
  echo "MRKIT-VM PASS pair full"; echo "MRKIT-VM PAIR target ok end_splats=0 unload=ok"; } \
	> "$tmp/rep2.log"
rc=0
python3 "$proj/scripts/ulp/pair-report.py" nfs rxe mrkit:delay,mrkit:delay \
	"$tmp/rep2.log" "$tmp/target.log" > "$tmp/rep2" || rc=$?
expect "pair-report: repeated step, exit" "$rc" 0
expect "pair-report: repeated step, rows" "$(grep '^FAULT2' "$tmp/rep2" | cut -d' ' -f6,7 | paste -sd' ')" \
	"ios=17 failed=0 ios=29 failed=0"
expect "pair-report: repeated step, reconnects" \
	"$(grep -o 'reconnects=[0-9]*' "$tmp/rep2" | paste -sd' ')" "reconnects=3 reconnects=4"
# A splat says whose console it was on (the target runs nothing of ours).
sed -i '0,/tsplats=0/{s/ splats=0 tsplats=0/ splats=0 tsplats=1/}' "$tmp/rep2.log"
python3 "$proj/scripts/ulp/pair-report.py" nfs rxe mrkit:delay,mrkit:delay \
	"$tmp/rep2.log" "$tmp/target.log" > "$tmp/rep3" || true
expect "pair-report: a target splat" "$(grep '^pair-report: FAILED' "$tmp/rep3")" \
	"pair-report: FAILED: delay mrkit: 1 splats on the target"

# faults-ab.py: loss5 ok with both, linkdown failed with both, logout
# failed with mrkit only.
cat > "$tmp/faults.out" <<'LOG'
=== faults: iser over rxe (full)
pair: iser built and packed in 1 s; rxe, full: stock:loss5,mrkit:loss5,stock:linkdown,mrkit:linkdown,stock:logout,mrkit:logout
FAULT2 iser rxe loss5 stock ios=1 failed=0 reconnects=0 stale=0 leaks=0 verify_errors=0 splats=0
FAULT2 iser rxe loss5 mrkit ios=1 failed=0 reconnects=0 stale=0 leaks=0 verify_errors=0 splats=0
FAULT2 iser rxe logout stock ios=1 failed=0 reconnects=0 stale=0 leaks=0 verify_errors=0 splats=0
FAULT2 iser rxe logout mrkit ios=1 failed=0 reconnects=0 stale=0 leaks=1 verify_errors=0 splats=0
pair-report: FAILED: linkdown stock: the initiator crashed
pair-report: FAILED: linkdown mrkit: the initiator crashed
pair-report: FAILED: logout mrkit: 1 leaked
LOG
rc=0
python3 "$proj/scripts/ulp/faults-ab.py" "$tmp/faults.out" > "$tmp/ab" || rc=$?
expect "faults-ab: exit" "$rc" 1
expect "faults-ab: count" "$(sed -n 's/^faults: 3 steps: //p' "$tmp/ab")" \
	"both ok 1, both failed 1, mrkit only failed 1, stock only failed 0, missing 0, one driver only 0 (of which mrkit failed 0)"

# roce-pcap.py on a made-up capture: the initiator connects, the target
# reads 2 KiB at psn 100 three times (two retries) and 1 KiB at psn 102
# once, two response packets come back, the initiator sends an RNR NAK
# on psn 102 and a remote access NAK on psn 100, the target disconnects.
python3 - "$tmp/w.pcap" <<'PY'
import struct
import sys

f = open(sys.argv[1], 'wb')
f.write(struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))


def frame(t, src, dst, op, qp, psn, rest):
    bth = bytes([op, 0, 0xff, 0xff, 0]) + qp.to_bytes(3, 'big') + \
        bytes([0]) + psn.to_bytes(3, 'big')
    udp = struct.pack('>HHHH', 49152, 4791, 8 + len(bth) + len(rest), 0)
    ip = bytes([0x45, 0]) + struct.pack('>H', 20 + len(udp) + len(bth) + len(rest)) + \
        bytes([0, 0, 0, 0, 64, 17, 0, 0]) + bytes(src) + bytes(dst)
    d = bytes(12) + b'\x08\x00' + ip + udp + bth + rest
    f.write(struct.pack('<IIII', t, 0, len(d), len(d)) + d)


T, I = (10, 98, 0, 1), (10, 98, 0, 2)
mad = bytes(8) + bytes(16)
frame(1, I, T, 0x64, 1, 0, mad + struct.pack('>H', 0x10) + bytes(30))
for t in (2, 3, 4):
    frame(t, T, I, 12, 17, 100, struct.pack('>QII', 0x1000, 7, 2048))
frame(4, T, I, 12, 17, 102, struct.pack('>QII', 0x1800, 7, 1024))
frame(5, I, T, 13, 18, 100, bytes([0x1f, 0, 0, 1]) + bytes(64))
frame(5, I, T, 15, 18, 101, bytes([0x1f, 0, 0, 1]) + bytes(64))
frame(6, I, T, 17, 18, 102, bytes([0x20, 0, 0, 1]))
frame(6, I, T, 17, 18, 100, bytes([0x62, 0, 0, 1]))
frame(7, T, I, 0x64, 1, 0, mad + struct.pack('>H', 0x15) + bytes(30))
PY
python3 "$proj/scripts/ulp/roce-pcap.py" "$tmp/w.pcap" > "$tmp/w" 2>&1 || true
expect "roce-pcap: connections" "$(sed -n 's/^  connections: //p' "$tmp/w")" \
	"DREQ from the target 1, REQ from the initiator 1"
expect "roce-pcap: READs" "$(sed -n 's/^  READ work requests: //p' "$tmp/w")" \
	"2 distinct, 4 requests (x2.0), 2 response packets (1 per distinct request)"
expect "roce-pcap: NAKs" "$(sed -n 's/^  NAKs: //p' "$tmp/w")" \
	"NAK remote access from the initiator to a READ 1, RNR NAK from the initiator to a READ 1"
expect "roce-pcap: segments" "$(sed -n 's/^  pages per rkey read: //p' "$tmp/w")" "1 x1"

[ $bad = 0 ] && echo "static: fault report rules (pair-selftest): ok"
exit $bad
