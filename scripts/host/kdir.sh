#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# kdir.sh [KERNEL]: print the build directory of the headers mrkit builds
# against, whether or not they are installed yet.  KERNEL (default
# $MRKIT_KERNEL, else 6.1) is a Debian kernel series - 6.1: Debian's
# linux-headers-amd64, the ABI the stock linux-image-amd64 runs; 6.12:
# linux-headers-6.12-amd64 - or a kernel release (uname -r) whose headers
# are installed: /lib/modules/RELEASE/build.
k=${1:-${MRKIT_KERNEL:-6.1}}
case $k in
6.1) meta=linux-headers-amd64 ;;
6.12) meta=linux-headers-6.12-amd64 ;;
*) echo "/lib/modules/$k/build"; exit 0 ;;
esac
dep=$(dpkg-query -W -f='${Depends}' "$meta" 2>/dev/null |
      sed -n 's/^\(linux-headers-[^ ,]*\).*/\1/p')
if [ -z "$dep" ]; then
	dep=$(apt-cache depends "$meta" 2>/dev/null |
	      sed -n 's/.*Depends: \(linux-headers-[0-9][^ ]*\)/\1/p' | head -n1)
fi
echo "/usr/src/${dep:-$meta-missing}"
