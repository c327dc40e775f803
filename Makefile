# SPDX-License-Identifier: GPL-2.0-only
#
# mrkit developer entry points.  Kbuild reads ./Kbuild, not this file.
#
#   make          build mrkit.ko against Debian's linux-headers-amd64
#                 (builds only: installs nothing); KVER=6.12 against
#                 Debian's linux-headers-6.12-amd64, KVER=RELEASE against
#                 /lib/modules/RELEASE/build, KDIR=DIR against DIR
#   make deps     install every Debian 12 package any target below needs
#                 (apt; the only target that installs anything)
#   make check    every test: static checks, the documentation check,
#                 the report parsers' unit tests, the process-word check,
#                 the converted ULPs as patch series under checkpatch, the
#                 out-of-tree build (W=1, sparse) for x86-64 and arm64,
#                 KUnit (sanitizer build) on UML, the VM scenarios
#   make patches  the converted ULPs (nvme-rdma, ib_iser, rpcrdma, ib_srp) as git
#                 format-patch series against linux-source-6.1, in
#                 out/patches/ULP/; the module is built after each patch
#   make demo     the kernel's ULPs converted to mrkit, under fio verify
#                 and faults against the kernel's targets in a VM running
#                 Debian's kernel
#   make bench    mrkit against what a ULP would otherwise use (ib_mr_pool,
#                 ib_map_mr_sg, nvme-rdma's path; UML and the VM),
#                 then the converted ULPs against the stock ones (A/B);
#                 writes .check/bench-results.json
#   make bench-table
#                 the documentation's performance table (Markdown) from
#                 BENCH_RESULTS (default .check/bench-results.json)
#   make faults   two guests on a private wire: the converted ULPs and
#                 the stock ones under fio verify while the wire drops,
#                 delays, reorders, duplicates and goes down, the target
#                 dies and boots again, the controller is deleted
#   make dkms-deb
#                 the Debian package mrkit-dkms (dpkg-buildpackage,
#                 dh_dkms) in out/: apt install ./out/mrkit-dkms_*.deb
#                 builds mrkit.ko with DKMS for every kernel with headers
#   make clean
# A target whose packages are missing names them and says "run make deps".
# Where the scripts are: scripts/README.

KVER ?= 6.1
KDIR ?= $(shell scripts/host/kdir.sh $(KVER))

all: modules

modules:
	@scripts/host/deps.sh need build
	$(MAKE) -C $(KDIR) M=$(CURDIR) CONFIG_MRKIT=m modules

deps:
	@scripts/host/deps.sh install

check:
	@scripts/host/check.sh

patches:
	@scripts/host/patches.sh

demo:
	@scripts/host/demo.sh

bench:
	@scripts/host/bench.sh

BENCH_RESULTS ?= .check/bench-results.json
bench-table:
	@PYTHONPATH=scripts python3 -m mrkit_report.bench table $(BENCH_RESULTS)

faults:
	@scripts/host/faults.sh

dkms-deb:
	@scripts/host/dkms-deb.sh

clean:
	@if [ -d "$(KDIR)" ]; then $(MAKE) -C $(KDIR) M=$(CURDIR) clean; fi
	rm -rf .check out

.PHONY: all modules deps check patches demo bench bench-table faults dkms-deb clean
