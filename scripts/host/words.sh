#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# No development-process words in the project's files or in HEAD's commit
# message: numbered work periods, issue letters, review finding numbers,
# who did the work, commit hashes in prose (the patterns, with what they
# leave alone: scripts/host/words.list).  make check's static step runs it;
# it first proves itself on a made-up file with each forbidden form and
# with iSCSI's own "session".
#   words.sh [FILE...]    the given files only (and no commit message)
set -euo pipefail

# What is checked, as git pathspecs: the whole tree (every tracked file, and
# new ones not ignored).
WORDS_PATHS=(.)

proj=$(cd "$(dirname "$0")/../.." && pwd)
here=$proj/scripts/host
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# One pattern (grep -P takes one): the list's lines as alternatives.
pat=$(grep -v -e '^#' -e '^$' "$here/words.list" | sed 's/.*/(?:&)/' | paste -sd'|')

# hits FILE...: every forbidden form in FILE..., as grep -n prints it.
hits() { grep -HnP -e "$pat" "$@" || true; }

# The self-test: each forbidden form is found, iSCSI's sessions are not.
cat > "$tmp/bad" <<'BAD'
as measured in session 12
this session's fresh machine
(issue M) and issue P's fix
issues K and L
the review's finding 2 and Finding 11
a helper wrote this
the lead merges it
fixed in a1a3ab8 above
BAD
cat > "$tmp/good" <<'GOOD'
iscsiadm --logout ends the session; a new session logs in
the session's state is LOGGED_IN; /sys/class/iscsi_session/session1
no_session() waits; session recovery takes 5 s
issue I/O to the disk; the nguid 6d726b69742d70616972000000000001
checksum 0xa1b2c3d4; uuid 6d726b69-742d-7061-6972-2d6e73303031
GOOD
want=$(wc -l < "$tmp/bad")
got=$(hits "$tmp/bad" | wc -l)
false_hits=$(hits "$tmp/good")
if [ "$got" != "$want" ] || [ -n "$false_hits" ]; then
	echo "words: self-test: $got of $want forbidden lines found; on allowed text:"
	echo "${false_hits:-  none}"
	exit 1
fi

cd "$proj"
if [ $# -gt 0 ]; then
	files=("$@")
	msg=
else
	mapfile -t files < <(git ls-files -co --exclude-standard -- "${WORDS_PATHS[@]}" |
		grep -vx -e scripts/host/words.list -e scripts/host/words.sh)
	msg=$(git log -1 --format=%B HEAD 2>/dev/null || true)
fi
found=$(hits "${files[@]}")
[ -z "$msg" ] || found+=$(printf '%s\n' "$msg" | grep -nP -e "$pat" | sed 's/^/HEAD commit message:/' || true)
if [ -n "$found" ]; then
	echo "$found"
	echo "words: development-process words in the lines above: FAILED"
	exit 1
fi
echo "words: ${#files[@]} files and HEAD's commit message free of process words: ok"
