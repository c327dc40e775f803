#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0-only
# Guest /init of scripts/host/vm-rxe-pi.sh: rxe with integrity MRs
# (rdma_rxe_pi, in place of the stock rxe) on a dummy netdev, and the
# signature conformance module (mrkit_sigconf) against the block layer's
# T10-PI code: mrkit_sigconf_cases (kernel command line) random cases on
# the verbs, then mrkit_sigmr_ios through mrkit's integrity pool.
. /base-lib.sh
# The kernel the guest booted: vm-rxe-pi.sh's kernel= field.
say "kernel $(uname -r)"
fabric rxe-pi
[ -d /sys/module/rdma_rxe ] && fail "the stock rdma_rxe is loaded"
grep -q . /sys/class/infiniband/mrkd0/node_type || fail "no mrkd0"
# The T10-PI code: a module on 6.1, built into 6.12's block layer.
case $(uname -r) in
6.1.*) modprobe t10-pi || fail "modprobe t10-pi" ;;
esac
# sigconf's guards on 6.12 (crc_t10dif()).
modprobe crc-t10dif || fail "modprobe crc-t10dif"
modprobe mrkit || fail "modprobe mrkit"
cases=${mrkit_sigconf_cases:-400}
ios=${mrkit_sigmr_ios:-100}
insmod /pi/mrkit_sigconf.ko ibdev=mrkd0 label=rxe-pi cases="$cases" \
	mrkit_cases="$ios" || fail "insmod mrkit_sigconf"
dmesg | grep -a 'SIGCONF\|SIGMR' | sed 's/^\[[^]]*\] //; s/^/MRKIT-VM /'
line=$(dmesg | grep -ao 'SIGCONF rxe-pi cases=[0-9]* failed=[0-9]*' | tail -n 1)
mline=$(dmesg | grep -ao 'SIGMR rxe-pi ios=[0-9]* reported=[0-9]* failed=[0-9]*' | tail -n 1)
# shellcheck disable=SC2046
set -- $(echo "$line" | sed 's/.*cases=\([0-9]*\) failed=\([0-9]*\)/\1 \2/') \
	$(echo "$mline" | sed 's/.*ios=\([0-9]*\) .*failed=\([0-9]*\)/\1 \2/')
dmesg | grep -ai 'rxe\|infiniband' | sed 's/^/MRKIT-VM dmesg: /'
rmmod mrkit_sigconf
rmmod mrkit || fail "rmmod mrkit"
rdma link delete mrkd0 || fail "rdma link delete mrkd0"
rmmod rdma_rxe_pi || fail "rmmod rdma_rxe_pi"
if dmesg | grep -E 'BUG:|WARNING:|Oops|general protection|UBSAN|KASAN'; then
	fail "kernel splat"
fi
if [ -n "$line" ] && [ -n "$mline" ] && [ "$1" -gt "$cases" ] &&
   [ "$2" = 0 ] && [ "$3" = "$ios" ] && [ "$4" = 0 ]; then
	say "PASS rxe-pi signature conformance"
else
	say "FAIL rxe-pi signature conformance (${line:-no SIGCONF line}; ${mline:-no SIGMR line})"
fi
poweroff -f
