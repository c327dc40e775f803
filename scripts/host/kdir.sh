#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Print the build directory of Debian's linux-headers-amd64 (the ABI the
# stock linux-image-amd64 runs), whether or not it is installed yet.
dep=$(dpkg-query -W -f='${Depends}' linux-headers-amd64 2>/dev/null |
      sed -n 's/^\(linux-headers-[^ ,]*\).*/\1/p')
if [ -z "$dep" ]; then
	dep=$(apt-cache depends linux-headers-amd64 2>/dev/null |
	      sed -n 's/.*Depends: \(linux-headers-[0-9][^ ]*\)/\1/p' | head -n1)
fi
echo "/usr/src/${dep:-linux-headers-amd64-missing}"
