# SPDX-License-Identifier: GPL-2.0-only
# Read-back verify failures of one fio run of a pair step, sorted (guest
# side, busybox awk; pair-lib.sh's pair_fail_hits runs it, and the unit
# tests of scripts/mrkit_report run it on made-up logs):
#   awk -F', ' -f fail-hits.awk RUN_clat.N.log... RUN.err RUN-readback.err
# The completion-latency logs (one per job, offsets on: only successful
# completions are logged) say which writes completed; fio's stderr of the
# run and of its read-back say where verify failed.  A failure outside
# every completed write is at a block fio never saw written (a failed
# write, or one in flight when a failure ended the job): counted, last
# line.  A failure at a read of the run that returned 0 bytes (a disk
# deleted under fio reads as EOF, and fio verifies the stale buffer) is
# counted apart ("eof N").  Before them, for the record: the writes fio
# saw fail, the EOF failures, and the failures inside completed writes
# (the real verify errors).  A file named pair.N is job N's (NFS); a
# shared device's jobs have disjoint offsets.
	FILENAME ~ /_clat\.[0-9]+\.log$/ {
		j = FILENAME; sub(/.*_clat\./, "", j); sub(/\.log$/, "", j)
		if ($3 == 1) {
			n++; jo[n] = j - 1; o[n] = $5 + 0; l[n] = $4 + 0
		} else if ($3 == 0 && $4 == 0) {
			z[(j - 1) " " ($5 + 0)] = 1
		}
		next
	}
	/io_u error on file .*: write offset=/ {
		w = $0; sub(/.*: write offset=/, "", w); sub(/,.*/, "", w)
		k = $0; sub(/.*buflen=/, "", k); sub(/[^0-9].*/, "", k)
		ws = ws " " w "+" k
		next
	}
	/ at file .*requested block: offset=/ {
		f = $0; sub(/.* at file /, "", f); sub(/ offset .*/, "", f)
		jf = -1
		if (f ~ /pair\.[0-9]+$/) { jf = f; sub(/.*pair\./, "", jf); jf += 0 }
		v = $0; sub(/.*requested block: offset=/, "", v); sub(/,.*/, "", v)
		k = $0; sub(/.*requested block: offset=[0-9]*, length=/, "", k); sub(/[^0-9].*/, "", k)
		# A read of the run that returned 0 bytes (any job,
		# unless the file names it).
		e = 0
		if (FILENAME !~ /-readback\.err$/) for (key in z) {
			split(key, kz, " ")
			if ((jf < 0 || kz[1] == jf) && kz[2] == v + 0)
				e = 1
		}
		if (e) {
			es = es " " f "@" v "+" k
			eof++
			next
		}
		for (i = 1; i <= n; i++)
			if ((jf < 0 || jo[i] == jf) && v + 0 >= o[i] && v + 0 < o[i] + l[i])
				break
		if (i <= n) vs = vs " " f "@" v "+" k
		else never++
	}
	END {
		print "MRKIT-VM PAIR note: writes completed " n + 0 ", failed:" (ws == "" ? " none" : ws)
		if (es != "") print "MRKIT-VM PAIR note: verify failures at reads that returned 0 bytes (EOF):" es
		if (vs != "") print "MRKIT-VM PAIR note: read-back failures inside completed writes:" vs
		print "eof " eof + 0
		print never + 0
	}
