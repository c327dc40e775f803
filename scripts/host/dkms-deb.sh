#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make dkms-deb: the Debian package mrkit-dkms (packaging/debian, built
# with dpkg-buildpackage and debhelper's dh_dkms), from the checkout's
# tracked and new files, into DIR (default out/): prints the .deb's path.
# Its version, 0.0+gitDATE.TIME.HASH, is HEAD's commit time and hash.
#   dkms-deb.sh [DIR]
set -euo pipefail

proj=$(cd "$(dirname "$0")/../.." && pwd)
dir=$(realpath -m "${1:-$proj/out}")
"$proj/scripts/host/deps.sh" need deb
cd "$proj"
ver=0.0+git$(TZ=UTC git log -1 --date=format-local:%Y%m%d.%H%M%S --format=%cd).$(git rev-parse --short=12 HEAD)
who="${DEBFULLNAME:-$(git config user.name || echo mrkit)} <${DEBEMAIL:-$(git config user.email || echo mrkit@localhost)}>"
stage=$dir/deb/mrkit-$ver
rm -rf "$dir/deb"
mkdir -p "$stage"
git ls-files -co --exclude-standard -z |
	grep -zvE '^(Documentation|kunit|samples|bench|scripts|ulp|packaging/debian)/' |
	xargs -0 cp --parents -t "$stage"
cp -a packaging/debian "$stage/debian"
sed -i "s|@MAINTAINER@|$who|" "$stage/debian/control"
note="Built from commit $(git rev-parse HEAD)"
[ -z "$(git status --porcelain)" ] || note="$note, with uncommitted changes"
printf 'mrkit (%s) bookworm; urgency=medium\n\n  * %s.\n\n -- %s  %s\n' \
	"$ver" "$note" "$who" "$(git log -1 --format=%cD)" > "$stage/debian/changelog"
log=$dir/deb/build.log
(cd "$stage" && dpkg-buildpackage -b -us -uc) > "$log" 2>&1 ||
	{ tail -n 40 "$log" >&2; echo "dkms-deb: dpkg-buildpackage failed; see $log" >&2; exit 1; }
deb=$dir/deb/mrkit-dkms_${ver}_all.deb
[ -f "$deb" ] || { echo "dkms-deb: no $deb" >&2; exit 1; }
mv "$deb" "$dir/"
echo "$dir/${deb##*/}"
