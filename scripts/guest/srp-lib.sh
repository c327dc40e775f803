# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=dash
# Sourced by the SRP guests' /init (init-ulp-srp.sh) after /base-lib.sh and
# /ulp-lib.sh: the kernel's SRP target (LIO with ib_srpt, configured
# through configfs), set up here and nowhere else, and the initiator's side
# (ib_srp's sysfs add_target interface, over RDMA/CM).  $t is the transport
# (rxe or siw); the RDMA device is mrkd0 (base-lib.sh's fabric).
#   srpt_up ADDR MIB | srpt_up ADDR DEV | srpt_up ADDR hold:MIB
#                       LIO and ib_srpt loaded; the target port of mrkd0
#                       (named after its GID, as ib_srpt names it), TPG 1
#                       with LUN 0 on a RAM disk of MIB MiB (rd_mcp), on
#                       the block device DEV (iblock, with a fixed serial,
#                       so that a target booted again is the same LUN) or,
#                       with hold:, on a device-mapper linear device over
#                       a null_blk RAM disk of MIB MiB (iblock), which
#                       srpt_hold and srpt_release suspend and resume; an
#                       ACL for the initiator at ADDR (RDMA/CM sessions are
#                       named by address) mapping LUN 0, ib_srpt listening
#                       for RDMA/CM on port SRP_PORT; SRP_ADDR is ADDR
#   srpt_config, srpt_unconfig
#                       the target port, TPG, LUN and ACL made and removed
#                       (for a device that was deleted and added again)
#   srpt_down           the configuration removed and the target's modules
#                       unloaded (each unload bounded): SRPT_DOWN=ok, or
#                       failed:STEP
#   srpt_tpg_off, srpt_tpg_on
#                       the TPG disabled (ib_srpt disconnects its
#                       channels and refuses logins) and enabled again
#   srpt_hold, srpt_release
#                       (hold:) the LUN's device suspended: the commands
#                       in flight finish, LIO's next ones wait in the
#                       device mapper (and with them every task management
#                       function that waits for them: ABORT TASK, LUN
#                       RESET) until it is resumed
#   drv_load stock|mrkit  Debian's ib_srp, or the one on mrkit (/ulp), with
#                       short reconnect timers; drv_unload
#   srp_login           add_target: the target at SRP_ADDR:SRP_PORT, 4 MiB
#                       commands (max_sect, sg_tablesize) so that large
#                       requests take several MRs; waits for the disk (DEV);
#                       with SRP_LOGIN_RETRY=1 a login that fails is tried
#                       once more, 1 s later, and noted on the console; a
#                       port still being removed is waited for
#   srp_logout          the initiator's target port deleted; waits until its
#                       SCSI host is gone
#   find_dev            DEV: the SCSI disk, once there
#   no_rport, no_disk   no SRP target port, no SCSI disk left
#   ini_mrs             the initiator's MRs on the RDMA device
#   reconnects          reconnects ib_srp reported so far (dmesg)
TC=/sys/kernel/config/target
# ib_srpt checks that a login's target port ID is this, twice (id_ext and
# ioc_guid); the initiator says so in add_target.
SRPT_GUID=4d524b4954535250
SRP_PORT=5555

srpt_up() {
	modprobe target_core_mod || fail "modprobe target_core_mod"
	modprobe ib_srpt srpt_service_guid=$SRPT_GUID || fail "modprobe ib_srpt"
	SRP_ADDR=$1
	case $2 in
	/dev/* | hold:*)
		SRPT_BDEV=$2
		[ "${2#hold:}" = "$2" ] || srpt_hold_dev "${2#hold:}"
		modprobe target_core_iblock || fail "modprobe target_core_iblock"
		SRPT_BK=$TC/core/iblock_0/srp0
		mkdir -p $SRPT_BK
		echo udev_path=$SRPT_BDEV > $SRPT_BK/control
		echo 4d524b49542d535250 > $SRPT_BK/wwn/vpd_unit_serial
		;;
	*)
		SRPT_BK=$TC/core/rd_mcp_0/srp0
		mkdir -p $SRPT_BK
		echo rd_pages=$(($2 * 256)) > $SRPT_BK/control
		;;
	esac
	echo 1 > $SRPT_BK/enable || fail "LIO backstore"
	srpt_config
	echo $SRP_PORT > $TC/srpt/discovery_auth/rdma_cm_port ||
		fail "ib_srpt RDMA/CM port"
}

# srpt_hold_dev MIB: the device of hold: (named srphold), in SRPT_BDEV,
# over a memory-backed null_blk device that takes 4 MiB commands (LIO
# gives the initiator the backing device's limit).
srpt_hold_dev() {
	local d n=/sys/kernel/config/nullb/srpnull
	modprobe null_blk nr_devices=0 || fail "modprobe null_blk"
	mkdir $n || fail "null_blk device"
	echo "$1" > $n/size && echo 1 > $n/memory_backed &&
		echo 8192 > $n/max_sectors && echo 1 > $n/power ||
		fail "null_blk device settings"
	# Named after its configfs directory.
	ulp_wait 100 test -b /dev/srpnull || fail "no /dev/srpnull"
	modprobe dm_mod || fail "modprobe dm_mod"
	echo "0 $(($1 * 2048)) linear /dev/srpnull 0" |
		dmsetup create --noudevsync srphold || fail "dmsetup create"
	for d in /sys/block/dm-*; do
		[ "$(cat "$d/dm/name" 2> /dev/null)" = srphold ] || continue
		SRPT_BDEV=/dev/${d##*/}
		ulp_wait 100 test -b $SRPT_BDEV || fail "no $SRPT_BDEV"
		return
	done
	fail "no device-mapper device srphold"
}

srpt_hold() { dmsetup suspend --noudevsync srphold; }
srpt_release() { dmsetup resume --noudevsync srphold; }

# The target port of mrkd0 with its TPG, LUN and ACL; srpt_unconfig takes
# them down again (a device that came back has a new port: ib_srpt binds a
# port directory to the device it found when the directory was made).
srpt_config() {
	local gid
	# ib_srpt names a port after the interface ID of its GID 0.
	gid=$(cat /sys/class/infiniband/mrkd0/ports/1/gids/0) || fail "no GID on mrkd0"
	SRPT_P=$TC/srpt/$(echo "$gid" | cut -d: -f5-8)
	SRPT_G=$SRPT_P/tpgt_1
	SRPT_A=$SRPT_G/acls/$SRP_ADDR
	mkdir -p $SRPT_G || fail "ib_srpt target port $SRPT_P"
	mkdir $SRPT_G/lun/lun_0 && ln -s $SRPT_BK $SRPT_G/lun/lun_0/rd ||
		fail "LUN 0"
	mkdir -p $SRPT_A/lun_0 && ln -s $SRPT_G/lun/lun_0 $SRPT_A/lun_0/rd ||
		fail "ACL for $SRP_ADDR"
	srpt_tpg_on || fail "TPG enable"
}

srpt_unconfig() {
	srpt_tpg_off
	rm $SRPT_A/lun_0/rd $SRPT_G/lun/lun_0/rd &&
		rmdir $SRPT_A/lun_0 $SRPT_A $SRPT_G/lun/lun_0 $SRPT_G $SRPT_P
}

srpt_down() {
	local m
	SRPT_DOWN=failed:config
	srpt_unconfig || return
	SRPT_DOWN=failed:backstore
	rmdir $SRPT_BK "$(dirname $SRPT_BK)" || return
	# The fabric's directory holds a reference to ib_srpt.
	SRPT_DOWN=failed:fabric
	rmdir $TC/srpt || return
	for m in ib_srpt target_core_iblock target_core_mod; do
		[ -e /sys/module/$m ] || continue
		SRPT_DOWN=failed:$m
		ulp_wait 100 rmmod $m 2> /dev/null || return
	done
	SRPT_DOWN=ok
}

srpt_tpg_off() { echo 0 > $SRPT_G/enable; }
srpt_tpg_on() { echo 1 > $SRPT_G/enable; }

# Reconnect every 2 s; I/O fails after 60 s without a connection, the
# target port goes after 120 s.
SRP_PARAMS="reconnect_delay=2 fast_io_fail_tmo=60 dev_loss_tmo=120"

drv_load() {
	local m
	for m in scsi_transport_srp sd_mod; do
		modprobe $m || fail "modprobe $m"
	done
	case $1 in
	stock)
		# shellcheck disable=SC2086
		modprobe ib_srp $SRP_PARAMS || fail "modprobe ib_srp (stock)"
		[ ! -e /sys/module/mrkit/holders/ib_srp ] || fail "stock ib_srp expected"
		;;
	mrkit)
		# shellcheck disable=SC2086
		insmod /ulp/ib_srp.ko $SRP_PARAMS || fail "insmod /ulp/ib_srp.ko"
		[ -e /sys/module/mrkit/holders/ib_srp ] || fail "ib_srp on mrkit expected"
		;;
	esac
}

drv_unload() {
	ulp_wait 100 rmmod ib_srp 2> /dev/null || fail "rmmod ib_srp ($1)"
}

find_dev() { ulp_sd_dev; }

srp_add_target() {
	echo "id_ext=$SRPT_GUID,ioc_guid=$SRPT_GUID,dest=$SRP_ADDR:$SRP_PORT,max_sect=8192,sg_tablesize=2048" \
		> "$1/add_target"
}

# add_target refuses ("File exists") a target port that ib_srp still
# lists: one whose removal work has not finished, though its port and its
# disk are gone.  Tried again each second, 30 times at most.
srp_add_target_new() {
	local e i=0
	while ! e=$(srp_add_target "$1" 2>&1); do
		case $e in
		*"File exists"*) ;;
		*) echo "$e"; return 1 ;;
		esac
		i=$((i + 1))
		[ $i -lt 30 ] || { echo "$e"; return 1; }
		sleep 1
	done
}

srp_login() {
	local h
	h=$(ls -d /sys/class/infiniband_srp/srp-mrkd0-* | head -n 1)
	if ! srp_add_target_new "$h"; then
		[ "${SRP_LOGIN_RETRY:-0}" = 1 ] || return 1
		say "SRP note: login failed, tried again"
		sleep 1
		srp_add_target_new "$h" || return 1
	fi
	ulp_wait 300 find_dev || return 1
	# Up to 4 MiB per request, whatever the target suggests.
	echo 4096 > /sys/block/${DEV#/dev/}/queue/max_sectors_kb
}

no_rport() { ! ls /sys/class/srp_remote_ports/port-* > /dev/null 2>&1; }
no_disk() { ulp_no_sd; }

srp_logout() {
	local p
	for p in /sys/class/srp_remote_ports/port-*; do
		[ -e "$p/delete" ] && echo 1 > "$p/delete"
	done
	ulp_wait 300 no_rport && ulp_wait 100 no_disk
}

ini_mrs() { rdma res show mr | grep -c 'comm \[ib_srp\]'; }
reconnects() { dmesg | grep -c 'reconnect succeeded'; }
