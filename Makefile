# SPDX-License-Identifier: GPL-2.0-only
#
# mrkit developer entry points.  Kbuild reads ./Kbuild, not this file.
#
#   make          build mrkit.ko against Debian's linux-headers-amd64
#   make check    every test: static checks, out-of-tree build, KUnit
#                 (normal and sanitizer builds) on UML, the VM scenarios
#   make demo     the sample NVMe/RDMA initiator against nvmet-rdma in a VM
#   make bench    mrkit against the anchors' approaches (UML and the VM)
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

clean:
	@if [ -d "$(KDIR)" ]; then $(MAKE) -C $(KDIR) M=$(CURDIR) clean; fi
	rm -rf .check

.PHONY: all modules check demo bench clean
