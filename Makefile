# SPDX-License-Identifier: GPL-2.0-only
#
# mrkit developer entry points.  Kbuild reads ./Kbuild, not this file.
#
#   make          build mrkit.ko against Debian's linux-headers-amd64
#   make check    every test: static checks, out-of-tree build, KUnit
#                 (normal and sanitizer builds) on UML, the VM scenarios
#   make demo     the kernel's ULPs (nvme-rdma, ...) converted to mrkit,
#                 under fio verify and faults against the kernel's targets
#                 in a VM running Debian's kernel
#   make bench    mrkit against the anchors' approaches (UML and the VM),
#                 then the converted nvme-rdma against the stock one (A/B);
#                 writes .check/bench-results.json
#   make bench-table
#                 the documentation's performance table (Markdown) from
#                 BENCH_RESULTS (default .check/bench-results.json)
#   make faults   two guests on a private wire (scripts/vm/pair.sh): the
#                 converted ULPs and the stock ones under fio verify while
#                 the wire drops, delays, reorders, duplicates and goes
#                 down, the target dies and boots again, the controller
#                 is deleted (scripts/faults.sh: rxe and siw, full)
#   make clean

KDIR ?= $(shell scripts/kdir.sh)

all: modules

modules:
	@scripts/deps.sh build
	$(MAKE) -C $(KDIR) M=$(CURDIR) CONFIG_MRKIT=m modules

check:
	@scripts/check.sh

demo:
	@scripts/demo.sh

bench:
	@scripts/bench.sh

BENCH_RESULTS ?= .check/bench-results.json
bench-table:
	@scripts/bench-report.py table $(BENCH_RESULTS)

faults:
	@scripts/faults.sh

clean:
	@if [ -d "$(KDIR)" ]; then $(MAKE) -C $(KDIR) M=$(CURDIR) clean; fi
	rm -rf .check

.PHONY: all modules check demo bench bench-table faults clean
