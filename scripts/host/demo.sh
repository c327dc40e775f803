#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make demo: the kernel's own NVMe/RDMA host driver (nvme-rdma of
# linux-source-6.1) with its memory registration replaced by mrkit, built
# at build time (scripts/host/splice.py), against the kernel's nvmet-rdma
# target on a RAM-backed namespace, in a qemu guest running Debian's own
# kernel, over rxe (RoCE) and siw (iWARP): fio verify=crc32c (256 MiB of
# random writes, 512 B..1 MiB, then a read-back pass), and faults under
# load for the mrkit driver and Debian's stock nvme-rdma.ko (the target's
# port removed and re-added, the controller deleted).  Prints the
# VERIFY / FAULT / LOC report (scripts/mrkit_report/nvme.py); exits 0 only if
# every number says so.  (The scripted sample initiator, samples/
# nvme_demo.c, still runs in make check: scripts/host/vm-samples.sh demo.)
# Then NFS/RDMA: the kernel's NFS client (rpcrdma.ko with frwr_ops.c on
# mrkit) mounting knfsd over RDMA in the guest, fio verify on files
# (256 MiB, O_DIRECT and buffered), and faults under load with both the
# stock and the mrkit module (nfsd restarted, umount right after I/O);
# VERIFY / FAULT / LOC lines from scripts/mrkit_report/nfs.py.
# Then iSER: the kernel's iSER initiator (ib_iser with its registration
# code on mrkit) logged in by open-iscsi to LIO's ib_isert on a RAM LUN,
# fio verify on the SCSI disk (256 MiB; 32 MiB with mrkit's rkey fence and
# with the stock ib_iser.ko), logout+login and the portal removed under
# load; VERIFY / FENCE / FAULT / LOC lines from scripts/mrkit_report/iser.py.
# Then SRP: the kernel's SRP initiator (ib_srp with its registration code
# on mrkit) logged in through add_target to LIO's ib_srpt on a RAM LUN,
# over rxe: fio verify on the SCSI disk with 4 MiB requests that span
# several MRs and with 4 KiB ones (256 MiB, for the mrkit and the stock
# module), and for both the TPG disabled and enabled, the target port
# removed and added, the RDMA link deleted and added, and a target that
# holds commands until the SCSI error handler's aborts have failed (a LUN
# reset, then a host reset) under load;
# VERIFY / MRS / FAULT / LOC lines from scripts/mrkit_report/srp.py.  Then
# the same over siw with the TPG and target port faults: there the link's
# deletion can wait for good for one of ib_srpt's channels, with Debian's
# ib_srp too, and the LUN reset of the abort fault is answered after
# ib_srp's 5 s, so the error handler resets the host in both rounds
# (scripts/host/ulp-srp.sh).  So the link's deletion over siw runs on two
# guests, the target in the other (vm-pair.sh's linkdel, stock and mrkit,
# each followed by the target's killing); two guests run SRP over siw
# under the wire's faults in make check and make faults.
# Then rdma_rxe_pi (rxe with integrity MRs) in a guest against the block
# layer's T10-PI code (SIGCONF, SIGMR; as in make check).  Then T10-PI end
# to end: nvme-rdma (mrkit's and the stock one) against
# nvmet-rdma with pi_enable, on a namespace over a scsi_debug disk with
# DIF type 1 and DIX, over rdma_rxe_pi (rxe with integrity MRs, built at
# build time): fio verify (128 MiB) with the block layer generating and
# checking the protection information; then single-block writes and reads
# with data, guard or ref tag corrupted on the wire, each of which must
# fail; PI and PIERR lines.  The same for iSER: ib_iser (mrkit's and the
# stock one, with pi_enable) against LIO's ib_isert with t10_pi on a RAM
# LUN that keeps DIF type 1 protection information, over rdma_rxe_pi: fio
# verify (64 MiB), then the corrupted single-block writes and reads.
# Last, the same four ULPs on Debian's 6.12 kernel, built from
# linux-source-6.12 with the same splice files (and ulp/ULP/6.12/ where
# upstream differs: scripts/host/splice.py --kernel): for the stock 6.12
# module and then mrkit's, the short verify run and the first fault of
# make check's schedule (ULP_DRIVERS=stock,mrkit), over rxe and siw
# (SRP over rxe only);
# their lines end with kernel=6.12.  Then T10-PI end to end on
# 6.12: rdma_rxe_pi from linux-source-6.12 (provider/rxe/6.12/ where
# upstream differs): the signature conformance (SIGCONF, SIGMR), and
# nvme-rdma and iSER, the stock 6.12 module and mrkit's, with PI (PI,
# PIERR, PIDECODE lines), all ending with kernel=6.12.
set -uo pipefail

proj=$(cd "$(dirname "$0")/../.." && pwd)
"$proj/scripts/host/deps.sh" need check || exit 1
start=$(date +%s)
rc=0
for t in rxe siw; do
	echo "=== nvme-rdma on mrkit vs nvmet-rdma over $t"
	"$proj/scripts/host/vm-ulp.sh" nvme "$t" demo || rc=1
done
for t in rxe siw; do
	echo "=== NFS/RDMA: the kernel's NFS client, frwr_ops.c on mrkit, vs knfsd over $t"
	"$proj/scripts/host/vm-ulp.sh" nfs "$t" demo || rc=1
done
for t in rxe siw; do
	echo "=== iSER: the kernel's iSER initiator, ib_iser on mrkit, vs LIO ib_isert over $t"
	"$proj/scripts/host/vm-ulp.sh" iser "$t" demo || rc=1
done
echo "=== SRP: the kernel's SRP initiator, ib_srp on mrkit, vs LIO ib_srpt over rxe"
"$proj/scripts/host/vm-ulp.sh" srp rxe demo || rc=1
echo "=== SRP over siw: ib_srp on mrkit vs LIO ib_srpt, the TPG and target port faults"
SRP_FAULTS=tpg,rport "$proj/scripts/host/vm-ulp.sh" srp siw demo || rc=1
echo "=== SRP over siw on two guests: the initiator's RDMA link deleted under load"
PAIR_STEPS=stock:linkdel,stock:targetkill,mrkit:linkdel,mrkit:targetkill \
	"$proj/scripts/host/vm-pair.sh" srp siw full || rc=1
echo "=== rdma_rxe_pi: integrity MRs against the block layer's T10-PI code"
"$proj/scripts/host/vm-rxe-pi.sh" 2000 || rc=1
echo "=== T10-PI: nvme-rdma on mrkit vs nvmet-rdma with pi_enable over rdma_rxe_pi"
NVME_PI_MIB=64 "$proj/scripts/host/vm-ulp.sh" nvme rxe-pi pi || rc=1
echo "=== T10-PI: iSER, ib_iser on mrkit vs LIO ib_isert with t10_pi over rdma_rxe_pi"
ISER_PI_MIB=64 "$proj/scripts/host/vm-ulp.sh" iser rxe-pi pi || rc=1
for u in nvme nfs iser srp; do
	for t in rxe siw; do
		# ib_srpt's zero-length RDMA Write often finds siw's initiator
		# on 6.12 still reading the MPA reply, which resets the
		# connection (scripts/host/faults.sh): SRP on 6.12 over rxe.
		[ "$u/$t" != srp/siw ] || continue
		echo "=== Debian's 6.12 kernel: $u from linux-source-6.12 on mrkit and stock over $t"
		MRKIT_KERNEL=6.12 ULP_DRIVERS=stock,mrkit \
			"$proj/scripts/host/vm-ulp.sh" "$u" "$t" check || rc=1
	done
done
echo "=== Debian's 6.12 kernel: rdma_rxe_pi from linux-source-6.12, signature conformance"
MRKIT_KERNEL=6.12 "$proj/scripts/host/vm-rxe-pi.sh" 2000 || rc=1
echo "=== Debian's 6.12 kernel: T10-PI, nvme-rdma on mrkit and stock over rdma_rxe_pi"
MRKIT_KERNEL=6.12 NVME_PI_MIB=16 "$proj/scripts/host/vm-ulp.sh" nvme rxe-pi pi || rc=1
echo "=== Debian's 6.12 kernel: T10-PI, ib_iser on mrkit and stock over rdma_rxe_pi"
MRKIT_KERNEL=6.12 ISER_PI_MIB=16 "$proj/scripts/host/vm-ulp.sh" iser rxe-pi pi || rc=1
echo "demo: $(( $(date +%s) - start )) s"
[ $rc = 0 ] && echo "demo: PASS (rxe and siw)" || echo "demo: FAIL"
exit $rc
