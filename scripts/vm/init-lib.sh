# Sourced by the guest /init scripts (busybox sh): tools, mounts, and the
# say/fail helpers whose "MRKIT-VM" lines run.sh reports.
/bin/busybox --install -s /bin
ln -s /bin/busybox /sbin/modprobe
export PATH=/bin:/sbin:/usr/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
say() { echo "MRKIT-VM $*"; }
fail() { say "FAIL: $*"; poweroff -f; }
