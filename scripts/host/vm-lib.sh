# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# The host side of the qemu scenarios, sourced by scripts/host/vm-samples.sh,
# vm-ulp.sh, vm-pair.sh, vm-rxe-pi.sh, vm-prep.sh and dkms-check.sh (bash,
# set -euo pipefail), and by patches.sh for mrkit's build.
#
# What a run makes for itself (initramfs trees and images, logs, sockets)
# is the checkout's own: .check/ (and a fresh /tmp directory for a pair's
# sockets).  What runs share - the stock kernel image, mrkit.ko, siw.ko,
# fio, the packages unpacked for the guests, the converted ULPs - is a
# cache entry $cache/vm/KIND/KEY (vm_cached): KEY is a hash of what the
# entry is made from (the stock kernel image's is its release), it is made
# once under a lock and renamed into place whole, and it never changes
# after; two checkouts building different sources get different entries.
#   vm_env                 sets proj cache kdir abi kmods vmlinuz out
#                          scratch; checks qemu & co; the stock kernel image
#   vm_env_build           sets proj cache kdir abi out scratch: enough for
#                          vm_build_mrkit, without the guests' packages
#   vm_qemu LOG INITRD CMDLINE [QEMU-ARG...]
#                          boot a guest (the one qemu command line of every
#                          scenario), in the background: VM_PID
#   vm_wait                wait for it
#   vm_cached KIND KEY FUNC ARG...
#                          the entry $cache/vm/KIND/KEY, made by FUNC
#   vm_build_mrkit         mrkit.ko and the sample modules against Debian's
#                          headers, from the checkout's tracked and new
#                          files: prints the entry (mrkit.ko, mrkit_*.ko,
#                          Module.symvers, include/)
#   vm_keep_mrkit DIR KEY  a build of mrkit made elsewhere, kept as its
#                          entry (vm_mrkit_key DIR, taken before it)
#   vm_build_siw           siw.ko from linux-source-6.1 (Debian's kernel
#                          has no siw): prints its path
#   vm_build_rxe_pi MK     rxe with integrity MRs (rdma_rxe_pi.ko, from
#                          linux-source-6.1, or MRKIT_KERNEL's, and
#                          provider/rxe/) and
#                          mrkit_sigconf.ko (provider/sigconf.c, against
#                          mrkit's build MK): prints the entry
#   vm_build_ulp ULP       the converted ULP (its hook's ulp_build): sets mk
#                          and ulpdir
#   vm_mod_deps NAME...    the .ko files modules NAME... need, each once
#   vm_add_mods ROOT M...  copy modules M (and what they need) from the
#                          image into the initramfs tree ROOT
#   vm_add_bin ROOT F...   copy binaries F and their ldd closure
#   vm_mkinitrd ROOT OUT   depmod, then a gzipped newc cpio of ROOT
#   vm_root ROOT MK INIT SIW MODS
#                          the tree of a guest's initramfs: busybox, the
#                          modules MODS, mrkit.ko, siw.ko, the guest
#                          libraries, INIT as /init
#   vm_ulp_root ROOT MK ULPDIR INIT SIW MODS BINS
#                          the tree of a ULP guest's initramfs (vm-ulp.sh,
#                          vm-pair.sh)
#   vm_fio                 Debian's fio and its library closure (for a
#                          read-only 9p share): prints the directory
#   vm_debs PKGS F...      files F of Debian packages PKGS (unpacked, never
#                          installed) and the programs' library closure:
#                          prints the entry
#   vm_add_debs ROOT DIR   put a vm_debs directory into the initramfs tree
#   vm_root_hook FUNC      have vm_add_bin ROOT ... call FUNC ROOT after it

vm_env_build() {
	proj=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
	cache=${MRKIT_CACHE:-/var/cache/mrkit}
	kdir=$("$proj/scripts/host/kdir.sh")
	abi=${kdir##*/linux-headers-}
	out=$proj/.check
	scratch=$out/vm
	mkdir -p "$cache/vm" "$scratch"
}

vm_env() {
	vm_env_build
	"$proj/scripts/host/deps.sh" need vm
	kimg=$(vm_cached kimg "$abi" vm_get_kimg)
	kmods=$kimg/lib/modules/$abi
	vmlinuz=$kimg/boot/vmlinuz-$abi
}

# vm_cached KIND KEY FUNC ARG...: the shared cache entry $cache/vm/KIND/KEY,
# made once by FUNC DIR ARG... into a new directory DIR that is renamed to
# the entry when FUNC succeeds, under KIND's lock (another checkout that
# wants the same entry waits, then finds it).  An entry is never changed
# once it exists: KEY is a hash of everything it is made from (or, for the
# stock kernel image, its release).  Prints the entry's path; entries of
# KIND unused for 14 days go when one is made.
vm_cached() {
	local kind=$1 key=$2 fn=$3 dir=$cache/vm/$1 tmp
	shift 3
	mkdir -p "$dir"
	if [ ! -d "$dir/$key" ]; then
		(
		flock 9
		[ -d "$dir/$key" ] && exit 0
		find "$dir" -mindepth 1 -maxdepth 1 -name '.new-*' -exec rm -rf {} +
		find "$dir" -mindepth 1 -maxdepth 1 -type d -mtime +14 -exec rm -rf {} +
		tmp=$(mktemp -d "$dir/.new-$key.XXXXXX")
		"$fn" "$tmp" "$@" || { rm -rf "$tmp"; exit 1; }
		find "$tmp" -type f -exec chmod a-w {} +
		mv -T "$tmp" "$dir/$key"
		) 9>"$dir/.lock" || { echo "vm: making $kind/$key failed" >&2; return 1; }
	fi
	touch "$dir/$key"
	echo "$dir/$key"
}

# vm_qemu LOG INITRD CMDLINE [QEMU-ARG...]: Debian's kernel and INITRD under
# qemu (TCG, 2 vCPUs, no network device but those QEMU-ARG add), booted
# with "console=ttyS0 panic=-1 quiet trace_options=norecord-cmd
# no_timer_check CMDLINE",
# its console into LOG and qemu's own messages into LOG.qemu, in the
# background under timeout VM_TIMEOUT s (600) and nice VM_NICE (10);
# VM_MEM MiB (1024), VM_ACCEL (tcg: qemu's default, a thread per vCPU on
# x86; make check's lanes and vm-pair.sh pass tcg,thread=single, the SMP
# samples tcg,thread=multi).
# VM_PID: the timeout process (TERM to it ends the guest).
# no_timer_check: a TCG guest on a loaded host can miss the boot-time
# check of the timer interrupt and panic ("IO-APIC + timer doesn't work").
# norecord-cmd: without it, the first trace event enabled hooks the task
# name recorder onto sched_switch, live-patching __schedule while the
# other vCPU runs it, and under TCG that vCPU has been seen to execute the
# half-patched site ("Oops: int3" in __schedule).
vm_qemu() {
	local log=$1 initrd=$2 cmdline=$3
	shift 3
	nice -n "${VM_NICE:-10}" timeout "${VM_TIMEOUT:-600}" qemu-system-x86_64 \
		-accel "${VM_ACCEL:-tcg}" -m "${VM_MEM:-1024}" -smp 2 \
		-display none -no-reboot -nic none -serial "file:$log" \
		-kernel "$vmlinuz" -initrd "$initrd" \
		-append "console=ttyS0 panic=-1 quiet trace_options=norecord-cmd no_timer_check $cmdline" "$@" \
		< /dev/null > "$log.qemu" 2>&1 &
	VM_PID=$!
}

# vm_wait: until the guest of the last vm_qemu has powered off (or its
# timeout ended it).
vm_wait() { wait "$VM_PID" || true; }

# vm_report MODULE ARG...: a report parser of scripts/mrkit_report.
vm_report() { PYTHONPATH="$proj/scripts" python3 -m "mrkit_report.$1" "${@:2}"; }

# vm_key: a short hash of standard input.
vm_key() { sha256sum | cut -c1-24; }

# The stock kernel image, unpacked (never installed into /boot).
vm_get_kimg() {
	local img=linux-image-$abi
	mkdir -p "$1/deb"
	(cd "$1/deb" && apt-get download "$img" >/dev/null 2>&1) ||
		{ echo "vm: apt-get download $img failed" >&2; return 1; }
	dpkg-deb -x "$1"/deb/"$img"_*.deb "$1"
	rm -rf "$1/deb"
	[ -f "$1/boot/vmlinuz-$abi" ]
}

vm_make_mrkit() {
	rmdir "$1" && mv "$2" "$1" &&
	make -s -C "$kdir" M="$1" CONFIG_MRKIT=m CONFIG_MRKIT_SAMPLES=m CONFIG_MRKIT_BENCH=m \
		modules >"$1/build.log" 2>&1 || { cat "$1/build.log" >&2; return 1; }
}

# vm_mrkit_key SRC: the key of mrkit's entry built from the sources in SRC
# (not yet built) against kdir.
vm_mrkit_key() {
	{ (cd "$1" &&
	   find Kbuild Kconfig ./*.c ./*.h include mrpool frwr sigmr \
		samples bench -type f -print0 | sort -z | xargs -0 sha256sum)
	  echo "$kdir"; } | vm_key
}

vm_build_mrkit() {
	local src key
	# The checkout's tracked and new files, copied out of it: their hash
	# names the build.
	src=$(mktemp -d "$scratch/mrkit-src.XXXXXX")
	(cd "$proj" && git ls-files -co --exclude-standard -z |
		xargs -0 cp --parents -t "$src")
	[ -f "$src/Kbuild" ] ||
		{ rm -rf "$src"; echo "vm_build_mrkit: no sources from $proj (a git checkout?)" >&2; return 1; }
	key=$(vm_mrkit_key "$src")
	vm_cached mrkit "$key" vm_make_mrkit "$src"
	rm -rf "$src"
}

vm_take_mrkit() { rmdir "$1" && mv "$2" "$1"; }

# vm_keep_mrkit DIR KEY: DIR, mrkit built as vm_make_mrkit builds it
# (static.sh's W=1/sparse build, KEY from vm_mrkit_key before it), moved
# into the entry KEY unless that exists, so that vm_build_mrkit finds it.
vm_keep_mrkit() { vm_cached mrkit "$2" vm_take_mrkit "$1" > /dev/null; }

vm_make_siw() {
	cp "$2"/drivers/infiniband/sw/siw/*.[ch] "$1/"
	cp "$2/drivers/infiniband/sw/siw/Makefile" "$1/Kbuild"
	make -s -C "$kdir" M="$1" CONFIG_RDMA_SIW=m modules \
		>"$1/build.log" 2>&1 || { cat "$1/build.log" >&2; return 1; }
}

# Debian's kernel has no siw: built from linux-source-6.1, out of tree.
vm_build_siw() {
	local tree key d
	tree=$("$proj/scripts/host/prep-tree.sh")
	key=$( { cat "$tree"/drivers/infiniband/sw/siw/*.[ch] "$tree/drivers/infiniband/sw/siw/Makefile"
		 echo "$kdir"; } | vm_key)
	d=$(vm_cached siw "$key" vm_make_siw "$tree") || return 1
	echo "$d/siw.ko"
}

# vm_make_rxe_pi DIR TREE [MK]: the spliced rxe and, with MK, the
# conformance module (against mrkit's build MK).
vm_make_rxe_pi() {
	local d=$1
	mkdir -p "$d/rxe" "$d/conf"
	{
		"$proj/scripts/host/rxe-pi-src.sh" "$d/rxe" "$2" "${splice_args[@]}"
		# The upstream object list, under the module's own name.
		{ echo 'obj-m := rdma_rxe_pi.o'
		  echo "rdma_rxe_pi-y := $(tr '\n' ' ' < "$d/rxe/objs")"
		  echo "ccflags-y += $(cat "$d/rxe/ccflags")"; } > "$d/rxe/Kbuild"
		cp "$proj"/provider/sigconf.[ch] "$proj/provider/sigconf_mod.c" "$d/conf/"
		{ printf 'obj-m := mrkit_sigconf.o\nmrkit_sigconf-y := sigconf.o sigconf_mod.o\nccflags-y += -I%s/include\n' "$3"
		  # A kernel that exports no T10-PI profile (6.12's).
		  grep -qw t10_pi_type1_crc "$kdir/Module.symvers" ||
			echo 'ccflags-y += -DSIGCONF_OWN_T10_PI'; } > "$d/conf/Kbuild"
		nice -n 10 make -C "$kdir" M="$d/rxe" W=1 C=2 modules &&
		if [ -n "$3" ]; then
			nice -n 10 make -C "$kdir" M="$d/conf" \
				KBUILD_EXTRA_SYMBOLS="$3/Module.symvers" W=1 C=2 modules
		fi
	} > "$d/build.log" 2>&1 || { cat "$d/build.log" >&2; return 1; }
	if grep -E 'warning:|error:' "$d/build.log" >&2; then
		return 1
	fi
	cp "$d/rxe/rdma_rxe_pi.ko" "$d/"
	[ -z "$3" ] || cp "$d/conf/mrkit_sigconf.ko" "$d/"
}

# vm_build_rxe_pi [MK]: the entry vm/rxe-pi/KEY (rdma_rxe_pi.ko, with MK
# mrkit_sigconf.ko too, build.log), keyed by rxe's upstream sources, the
# provider's files, splice.py, the headers and mrkit's build MK.  Every
# warning of the W=1 and sparse build fails it.  The ULPs' runs need
# rdma_rxe_pi.ko only, and pass MK all the same: one entry for both.
vm_build_rxe_pi() {
	local tree key
	local -a splice_args=()
	tree=$("$proj/scripts/host/prep-tree.sh")
	# Another kernel than 6.1: provider/rxe/K/ overrides, checked
	# against linux-source-6.1 (splice.py --kernel), as vm_build_ulp.
	[ "${MRKIT_KERNEL:-6.1}" = 6.1 ] ||
		splice_args=(--kernel "$MRKIT_KERNEL"
			     --reference "$("$proj/scripts/host/prep-tree.sh" 6.1)")
	key=$( { echo "$kdir $tree ${1:+${1##*/}} ${splice_args[*]}"
		 cat "$tree"/drivers/infiniband/sw/rxe/*.[ch] "$tree/drivers/infiniband/sw/rxe/Makefile"
		 find "$proj/provider" "$proj/scripts/host/splice.py" \
			"$proj/scripts/host/rxe-pi-src.sh" -type f -print0 |
			sort -z | xargs -0 sha256sum | sed "s|  $proj/|  |"; } | vm_key)
	vm_cached rxe-pi "$key" vm_make_rxe_pi "$tree" "${1:-}"
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
	# Built into the image's kernel (6.12: the CRC-T10DIF modules): none
	# to copy.
	while read -r f; do
		n=${f##*/}
		n=${n%%.ko*}
		seen[${n//-/_}]=1
	done < <(cat "$kmods/modules.builtin" 2>/dev/null)
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
		# Uncompressed (6.12's are .ko.xz): busybox's modprobe hands
		# the file to the kernel as it is.
		case $f in
		*.ko.xz) xz -dc "$f" > "$root/lib/modules/$abi/${rel%.xz}" ;;
		*) cp "$f" "$root/lib/modules/$abi/$rel" ;;
		esac
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

vm_make_ulp() {
	mkdir -p "$1/build"
	ulp_build "$1/build" >"$1/build.log" 2>&1 || { cat "$1/build.log" >&2; return 1; }
}

# vm_build_ulp ULP: the converted ULP, built by its hook's ulp_build (the
# hook, scripts/host/ulp-ULP.sh, sourced before) into a cache entry keyed by
# mrkit's build and the ULP's inputs (its splice files, its hook,
# splice.py, the kernel tree and headers).  Sets mk (mrkit's build),
# splice_args (for the hook's splice.py: on another kernel than 6.1,
# --kernel and --reference), ulpdir (the entry: build/*.ko, build.log)
# and copies the build log to $out/ulp-ULP-build.log.
vm_build_ulp() {
	local ulp=$1 key hook=$proj/scripts/host/ulp-$1.sh
	tree=$("$proj/scripts/host/prep-tree.sh")
	splice=$proj/scripts/host/splice.py
	mk=$(vm_build_mrkit) || return 1
	symvers=$mk/Module.symvers
	# Another kernel than 6.1: the splice files with that kernel's
	# override files, checked against linux-source-6.1 (splice.py --kernel).
	splice_args=()
	[ "${MRKIT_KERNEL:-6.1}" = 6.1 ] ||
		splice_args=(--kernel "$MRKIT_KERNEL"
			     --reference "$("$proj/scripts/host/prep-tree.sh" 6.1)")
	key=$( { echo "${mk##*/} $kdir $tree ${splice_args[*]}"
		 find "$proj/ulp/$ulp" "$hook" "$splice" -type f -print0 |
			sort -z | xargs -0 sha256sum | sed "s|  $proj/|  |"; } | vm_key)
	ulpdir=$(vm_cached "ulp-$ulp" "$key" vm_make_ulp) || return 1
	install -m 0644 "$ulpdir/build.log" "$out/ulp-$ulp-build.log"
}

# vm_root ROOT MK INIT SIW MODS: the initramfs tree of a guest: busybox,
# the stock modules MODS (and what they need) from the image, mrkit.ko
# (from the build MK) and siw.ko (SIW, if set) in extra/, the guest
# libraries (scripts/guest/*-lib.sh, *.awk) at /, INIT as /init.
vm_root() {
	local root=$1 mk=$2 init=$3 siw=$4 mods=$5
	rm -rf "$root"
	mkdir -p "$root"/{bin,sbin,proc,sys,dev,tmp,host,ulp,lib/modules/$abi/extra}
	cp /bin/busybox "$root/bin/busybox"
	# shellcheck disable=SC2086
	vm_add_mods "$root" $mods
	cp "$mk/mrkit.ko" "$root/lib/modules/$abi/extra/"
	[ -z "$siw" ] || cp "$siw" "$root/lib/modules/$abi/extra/"
	cp "$proj"/scripts/guest/*-lib.sh "$proj"/scripts/guest/*.awk "$root/"
	cp "$init" "$root/init"
	chmod +x "$root/init"
}

# vm_ulp_root ROOT MK ULPDIR INIT SIW MODS BINS: vm_root for a ULP guest:
# the RDMA and 9p modules and MODS, ULPDIR/build/*.ko in /ulp, the rdma
# tool and BINS with their libraries.
vm_ulp_root() {
	local root=$1 ulpdir=$3 bins=$7
	vm_root "$1" "$2" "$4" "$5" "ib_core rdma_cm rdma_ucm configfs dummy rdma_rxe
		crc32_generic crc32c_generic libcrc32c crct10dif_generic
		virtio_pci 9pnet_virtio 9p $6"
	cp "$ulpdir"/build/*.ko "$root/ulp/"
	# shellcheck disable=SC2086
	vm_add_bin "$root" /usr/bin/rdma $bins
}

# vm_fio: Debian's fio and its library closure (vm_debs), for a read-only
# 9p share: prints the directory (root/usr/bin/fio, lib/).
vm_fio() { vm_debs fio usr/bin/fio; }

vm_make_debs() {
	local d=$1 pkgs=$2 p f l
	shift 2
	mkdir -p "$d/deb" "$d/x" "$d/root" "$d/lib"
	# shellcheck disable=SC2086
	(cd "$d/deb" &&
	 for p in $pkgs $(apt-get -s install --no-install-recommends $pkgs |
			  awk '/^Inst /{print $2}'); do
		[ -n "$(ls ./"${p%%:*}"_*.deb 2>/dev/null)" ] && continue
		apt-get download "$p" >/dev/null 2>&1 ||
			{ echo "vm: apt-get download $p failed" >&2; exit 1; }
	 done) || return 1
	for p in "$d"/deb/*.deb; do
		dpkg-deb -x "$p" "$d/x"
	done
	l=$(find "$d/x" -name '*.so*' -printf '%h\n' | sort -u | paste -sd:)
	for f in "$@"; do
		[ -f "$d/x/$f" ] || { echo "vm: no $f in $pkgs" >&2; return 1; }
		mkdir -p "$d/root/$(dirname "$f")"
		cp -L "$d/x/$f" "$d/root/$f"
		LD_LIBRARY_PATH=$l ldd "$d/x/$f" >"$d/ldd" 2>&1 || continue
		if grep 'not found' "$d/ldd" >&2; then
			return 1
		fi
		for p in $(grep -o '/[^ ]*' "$d/ldd"); do
			cp -L "$p" "$d/lib/"
		done
	done
	rm -rf "$d/deb" "$d/x" "$d/ldd"
}

# vm_debs "PKG..." FILE...: download the packages PKG... and those of
# their dependencies this machine lacks (apt-get download; nothing is
# installed), unpack them, and keep FILE... (paths inside the packages,
# e.g. sbin/rpcbind or etc/netconfig) under DIR/root/ and the ldd closure
# of the programs among them under DIR/lib/ (the packages' own libraries
# first, the host's for the rest).  DIR is a cache entry keyed by the
# arguments and the packages' versions; prints DIR.
vm_debs() {
	local key
	# shellcheck disable=SC2086
	key=$( { echo "$*"; apt-cache show --no-all-versions $1 2>/dev/null |
		 grep '^Version:'; } | vm_key)
	vm_cached debs "$key" vm_make_debs "$@"
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
# scripts/host/ulp-*.sh): the runners call vm_add_bin once per tree.
vm_root_hook() {
	declare -F vm_add_bin_only >/dev/null ||
		eval "$(declare -f vm_add_bin | sed '1s/^vm_add_bin /vm_add_bin_only /')"
	eval "vm_add_bin() { vm_add_bin_only \"\$@\" && $1 \"\$1\"; }"
}
