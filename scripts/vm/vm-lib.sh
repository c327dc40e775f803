# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# Host-side helpers for the qemu scenarios, sourced by scripts/vm/run.sh
# and scripts/vm/ulp.sh (bash, set -euo pipefail):
#   vm_env                 sets proj cache kdir abi vm kmods out; installs
#                          qemu & co; unpacks Debian's kernel image once
#   vm_build_mrkit         mrkit.ko and the sample modules against Debian's
#                          headers, from the checkout's tracked and new
#                          files copied outside it; rebuilt only when those
#                          sources change: prints the build directory
#                          (mrkit.ko, mrkit_*.ko, Module.symvers, include/)
#   vm_build_siw           siw.ko from linux-source-6.1, out of tree, once
#                          (Debian's kernel has no siw): prints its path
#   vm_mod_deps NAME...    the .ko files modules NAME... need, each once
#   vm_add_mods ROOT M...  copy modules M (and what they need) from the
#                          image into the initramfs tree ROOT
#   vm_add_bin ROOT F...   copy binaries F and their ldd closure
#   vm_mkinitrd ROOT OUT   depmod, then a gzipped newc cpio of ROOT
#   vm_ulp_root ROOT WORK INIT SIW MODS BINS
#                          the tree of a ULP guest's initramfs (ulp.sh,
#                          pair.sh): busybox, the RDMA and 9p modules and
#                          MODS, mrkit.ko (WORK/mrkit) and siw.ko (SIW, if
#                          set) in extra/, WORK/build/*.ko in /ulp, rdma
#                          and BINS, the guest libraries (init-*lib.sh),
#                          INIT as /init
#   vm_fio                 Debian's fio and its whole library closure in
#                          $cache/fio (for a read-only 9p share): prints
#                          the directory (fio, lib/)
#   vm_debs NAME PKGS F... files F of Debian packages PKGS (unpacked, never
#                          installed) and the programs' library closure in
#                          $cache/debs/NAME: prints the directory
#   vm_add_debs ROOT DIR   put a vm_debs directory into the initramfs tree
#   vm_root_hook FUNC      have vm_add_bin ROOT ... call FUNC ROOT after it

vm_env() {
	proj=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
	cache=${MRKIT_CACHE:-/var/cache/mrkit}
	kdir=$("$proj/scripts/kdir.sh")
	abi=${kdir##*/linux-headers-}
	vm=$cache/vm/$abi
	out=$proj/.check
	mkdir -p "$vm" "$out"
	"$proj/scripts/deps.sh" vm
	local img=linux-image-$abi
	# The stock kernel image, unpacked next to the cache (never into /boot).
	if [ ! -f "$vm/kimg/boot/vmlinuz-$abi" ]; then
		rm -rf "$vm/kimg" "$vm/deb"
		mkdir -p "$vm/deb"
		(cd "$vm/deb" && apt-get download "$img" >/dev/null 2>&1)
		dpkg-deb -x "$vm"/deb/"$img"_*.deb "$vm/kimg"
	fi
	kmods=$vm/kimg/lib/modules/$abi
}

vm_build_mrkit() {
	local dir=$cache/mrkit-build src stamp
	(
	# One builder at a time (make check runs guests side by side).
	flock 9
	src=$dir.src
	rm -rf "$src"
	mkdir -p "$src"
	(cd "$proj" && git ls-files -co --exclude-standard -z |
		xargs -0 cp --parents -t "$src")
	# Not a git checkout: nothing was copied; keep the cached build.
	[ -f "$src/Kbuild" ] ||
		{ echo "vm_build_mrkit: no sources from $proj (a git checkout?)" >&2; exit 1; }
	stamp=$( { (cd "$src" &&
		    find Kbuild Kconfig mrkit_priv.h include mrpool frwr sigmr \
			 samples bench -type f -print0 | sort -z | xargs -0 sha256sum)
		  echo "$kdir"; } | sha256sum | cut -c1-32)
	if [ "$(cat "$dir/stamp" 2>/dev/null)" = "$stamp" ] &&
	   [ -f "$dir/Module.symvers" ]; then
		rm -rf "$src"
	else
		rm -rf "$dir"
		mv "$src" "$dir"
		make -s -C "$kdir" M="$dir" CONFIG_MRKIT=m CONFIG_MRKIT_SAMPLES=m CONFIG_MRKIT_BENCH=m \
			modules >"$out/vm-build.log" 2>&1 ||
			{ cat "$out/vm-build.log" >&2; exit 1; }
		echo "$stamp" > "$dir/stamp"
	fi
	) 9>"$dir.lock" || return 1
	echo "$dir"
}

vm_build_siw() {
	(
	flock 9
	if [ ! -f "$vm/siw/siw.ko" ]; then
		local tree
		tree=$("$proj/scripts/prep-tree.sh")
		rm -rf "$vm/siw.tmp"
		mkdir -p "$vm/siw.tmp"
		cp "$tree"/drivers/infiniband/sw/siw/*.[ch] "$vm/siw.tmp/"
		cp "$tree/drivers/infiniband/sw/siw/Makefile" "$vm/siw.tmp/Kbuild"
		make -s -C "$kdir" M="$vm/siw.tmp" CONFIG_RDMA_SIW=m modules \
			>"$out/vm-siw.log" 2>&1 || { cat "$out/vm-siw.log" >&2; exit 1; }
		rm -rf "$vm/siw"
		mv "$vm/siw.tmp" "$vm/siw"
	fi
	) 9>"$vm/siw.lock" || return 1
	echo "$vm/siw/siw.ko"
}

vm_mod_deps() {
	local -A path=() seen=()
	local -a todo=("$@")
	local f n d
	# One scan of the image's modules; names compare with - and _ alike.
	while read -r f; do
		n=${f##*/}
		n=${n%%.ko*}
		path[${n//-/_}]=$f
	done < <(find "$kmods" -name '*.ko' -o -name '*.ko.xz')
	while [ ${#todo[@]} -gt 0 ]; do
		n=${todo[0]//-/_}
		todo=("${todo[@]:1}")
		[ -z "${seen[$n]:-}" ] || continue
		seen[$n]=1
		f=${path[$n]:-}
		[ -n "$f" ] || { echo "vm: module $n not in the image" >&2; return 1; }
		echo "$f"
		for d in $(modinfo -F depends "$f" | tr ',' ' '); do
			todo+=("$d")
		done
	done
}

vm_add_mods() {
	local root=$1 f rel list
	shift
	mkdir -p "$root/lib/modules/$abi/extra"
	list=$(vm_mod_deps "$@")
	for f in $list; do
		rel=${f#"$kmods"/}
		mkdir -p "$root/lib/modules/$abi/$(dirname "$rel")"
		cp "$f" "$root/lib/modules/$abi/$rel"
	done
	cp "$kmods"/modules.order "$kmods"/modules.builtin* \
		"$root/lib/modules/$abi/" 2>/dev/null || true
}

vm_add_bin() {
	local root=$1 b l
	shift
	mkdir -p "$root/usr/bin" "$root/lib64" "$root/lib/x86_64-linux-gnu"
	for b in "$@"; do
		cp "$b" "$root/usr/bin/"
		for l in $(ldd "$b" | grep -o '/[^ ]*'); do
			mkdir -p "$root$(dirname "$l")"
			cp -L "$l" "$root$l"
		done
	done
}

vm_mkinitrd() {
	local root=$1 img=$2
	depmod -b "$root" "$abi"
	(cd "$root" && find . | cpio -o -H newc 2>/dev/null | gzip -1) > "$img"
}

vm_ulp_root() {
	local root=$1 work=$2 init=$3 siw=$4 mods=$5 bins=$6
	rm -rf "$root"
	mkdir -p "$root"/{bin,sbin,proc,sys,dev,tmp,host,ulp,lib/modules/$abi/extra}
	cp /bin/busybox "$root/bin/busybox"
	# shellcheck disable=SC2086
	vm_add_mods "$root" ib_core rdma_cm rdma_ucm configfs dummy rdma_rxe \
		crc32_generic crc32c_generic libcrc32c crct10dif_generic \
		virtio_pci 9pnet_virtio 9p $mods
	cp "$work/mrkit/mrkit.ko" "$root/lib/modules/$abi/extra/"
	[ -n "$siw" ] && cp "$siw" "$root/lib/modules/$abi/extra/"
	cp "$work"/build/*.ko "$root/ulp/"
	# shellcheck disable=SC2086
	vm_add_bin "$root" /usr/bin/rdma $bins
	cp "$proj"/scripts/vm/init-*lib.sh "$root/"
	cp "$init" "$root/init"
	chmod +x "$root/init"
}

vm_fio() {
	local dir=$cache/fio p l miss
	if [ ! -x "$dir/fio" ]; then
		rm -rf "$dir.tmp"
		mkdir -p "$dir.tmp/deb" "$dir.tmp/root" "$dir.tmp/lib"
		# fio and the packages this machine lacks for it, unpacked (not
		# installed); the rest of the closure comes from the host.
		(cd "$dir.tmp/deb" &&
		 for p in $(apt-get -s install --no-install-recommends fio |
			    awk '/^Inst /{print $2}'); do
			apt-get download "$p" >/dev/null 2>&1 ||
				{ echo "vm: apt-get download $p failed" >&2; exit 1; }
		 done)
		for p in "$dir.tmp"/deb/*.deb; do
			dpkg-deb -x "$p" "$dir.tmp/root"
		done
		cp "$dir.tmp/root/usr/bin/fio" "$dir.tmp/fio"
		l=$(find "$dir.tmp/root" -name '*.so*' -printf '%h\n' | sort -u | paste -sd:)
		miss=$(LD_LIBRARY_PATH=$l ldd "$dir.tmp/fio" | grep -c 'not found' || true)
		if [ "$miss" != 0 ]; then
			LD_LIBRARY_PATH=$l ldd "$dir.tmp/fio" | grep 'not found' >&2
			return 1
		fi
		for p in $(LD_LIBRARY_PATH=$l ldd "$dir.tmp/fio" | grep -o '/[^ ]*'); do
			cp -L "$p" "$dir.tmp/lib/"
		done
		rm -rf "$dir.tmp/deb" "$dir.tmp/root" "$dir"
		mv "$dir.tmp" "$dir"
	fi
	echo "$dir"
}

# vm_debs NAME "PKG..." FILE...: download the packages PKG... and those of
# their dependencies this machine lacks (apt-get download; nothing is
# installed), unpack them, and keep FILE... (paths inside the packages,
# e.g. sbin/rpcbind or etc/netconfig) under $cache/debs/NAME/root/ and the
# ldd closure of the programs among them under $cache/debs/NAME/lib/ (the
# packages' own libraries first, the host's for the rest).  Done once per
# NAME and argument list; prints $cache/debs/NAME.
vm_debs() {
	local pkgs=$2 d=$cache/debs/$1 p f l
	shift 2
	if [ "$(cat "$d/args" 2>/dev/null)" != "$pkgs $*" ]; then
		rm -rf "$d.tmp"
		mkdir -p "$d.tmp/deb" "$d.tmp/x" "$d.tmp/root" "$d.tmp/lib"
		# shellcheck disable=SC2086
		(cd "$d.tmp/deb" &&
		 for p in $pkgs $(apt-get -s install --no-install-recommends $pkgs |
				  awk '/^Inst /{print $2}'); do
			[ -n "$(ls ./"${p%%:*}"_*.deb 2>/dev/null)" ] && continue
			apt-get download "$p" >/dev/null 2>&1 ||
				{ echo "vm: apt-get download $p failed" >&2; exit 1; }
		 done) || return 1
		for p in "$d.tmp"/deb/*.deb; do
			dpkg-deb -x "$p" "$d.tmp/x"
		done
		l=$(find "$d.tmp/x" -name '*.so*' -printf '%h\n' | sort -u | paste -sd:)
		for f in "$@"; do
			[ -f "$d.tmp/x/$f" ] || { echo "vm: no $f in $pkgs" >&2; return 1; }
			mkdir -p "$d.tmp/root/$(dirname "$f")"
			cp -L "$d.tmp/x/$f" "$d.tmp/root/$f"
			LD_LIBRARY_PATH=$l ldd "$d.tmp/x/$f" >"$d.tmp/ldd" 2>&1 || continue
			if grep 'not found' "$d.tmp/ldd" >&2; then
				return 1
			fi
			for p in $(grep -o '/[^ ]*' "$d.tmp/ldd"); do
				cp -L "$p" "$d.tmp/lib/"
			done
		done
		rm -rf "$d.tmp/deb" "$d.tmp/x" "$d.tmp/ldd" "$d"
		echo "$pkgs $*" > "$d.tmp/args"
		mv "$d.tmp" "$d"
	fi
	echo "$d"
}

# vm_add_debs ROOT DIR: the files of a vm_debs directory DIR into the
# initramfs tree ROOT: programs (from a bin/ or sbin/) in /usr/bin, other
# files at their own path, the libraries in /lib/x86_64-linux-gnu (the
# loader in /lib64).
vm_add_debs() {
	local root=$1 dir=$2 f
	mkdir -p "$root/usr/bin" "$root/lib64" "$root/lib/x86_64-linux-gnu"
	(cd "$dir/root" && find . -type f) | while read -r f; do
		f=${f#./}
		case /$f in
		*/bin/*|*/sbin/*) cp "$dir/root/$f" "$root/usr/bin/" ;;
		*) mkdir -p "$root/$(dirname "$f")"; cp "$dir/root/$f" "$root/$f" ;;
		esac
	done
	cp "$dir"/lib/ld-linux-x86-64.so.2 "$root/lib64/"
	cp "$dir"/lib/*.so* "$root/lib/x86_64-linux-gnu/"
}

# vm_root_hook FUNC: from now on vm_add_bin ROOT ... also calls FUNC ROOT.
# For a ULP hook's own files in the initramfs (ulp_root in
# scripts/ulp/*.sh): the runners call vm_add_bin once per tree.
vm_root_hook() {
	declare -F vm_add_bin_only >/dev/null ||
		eval "$(declare -f vm_add_bin | sed '1s/^vm_add_bin /vm_add_bin_only /')"
	eval "vm_add_bin() { vm_add_bin_only \"\$@\" && $1 \"\$1\"; }"
}
