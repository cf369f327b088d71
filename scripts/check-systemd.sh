#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Checks the systemd units and the man pages, without a running systemd (CI has none):
#
#   scripts/check-systemd.sh SNAPBACKD_BINARY SNAPBACK_SYNC_BINARY
#
# 1. `systemd-analyze verify` of systemd/snapbackd.socket, snapbackd.service and snapback-sync.service
#    (the household sync agent's). verify checks
#    that ExecStart= is an executable file and that every Documentation=man: page exists, so it runs on
#    a temporary copy whose ExecStart= names SNAPBACKD_BINARY (the committed unit names
#    /usr/local/bin/snapbackd, which `make install` rewrites to its PREFIX), with MANPATH pointing at a
#    temporary man tree holding docs/man. Any message from verify fails the check.
# 2. `systemd-analyze security --offline=true` of the committed systemd/snapbackd.service: the overall
#    exposure must be 1.0 or lower (--threshold counts tenths); of snapback-sync.service, 1.5 or lower
#    (the agent needs the network: AF_INET/AF_INET6 and no IP allow list, 1.0 of its 1.3).
# 3. The man pages format without a groff warning.
set -eu
export LC_ALL=C.UTF-8

repo=$(cd "$(dirname "$0")/.." && pwd)
binary=${1:?usage: check-systemd.sh SNAPBACKD_BINARY SNAPBACK_SYNC_BINARY}
sync_binary=${2:?usage: check-systemd.sh SNAPBACKD_BINARY SNAPBACK_SYNC_BINARY}
case $binary in /*) ;; *) binary=$(pwd)/$binary ;; esac
case $sync_binary in /*) ;; *) sync_binary=$(pwd)/$sync_binary ;; esac
for b in "$binary" "$sync_binary"; do
    [ -x "$b" ] || { echo "check-systemd: $b is not an executable file" >&2; exit 1; }
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/units" "$tmp/man/man8" "$tmp/man/man5"
cp "$repo/docs/man/snapbackd.8" "$repo/docs/man/snapback-sync.8" "$tmp/man/man8/"
cp "$repo/docs/man/snapbackd.conf.5" "$tmp/man/man5/"
cp "$repo/systemd/snapbackd.socket" "$tmp/units/"
sed "s#^ExecStart=/usr/local/bin/snapbackd #ExecStart=$binary #" "$repo/systemd/snapbackd.service" \
    > "$tmp/units/snapbackd.service"
grep -q "^ExecStart=$binary " "$tmp/units/snapbackd.service" || {
    echo "check-systemd: systemd/snapbackd.service has no 'ExecStart=/usr/local/bin/snapbackd ...' line" >&2
    exit 1
}
sed "s#^ExecStart=/usr/local/bin/snapback-sync #ExecStart=$sync_binary #" "$repo/systemd/snapback-sync.service" \
    > "$tmp/units/snapback-sync.service"
grep -q "^ExecStart=$sync_binary " "$tmp/units/snapback-sync.service" || {
    echo "check-systemd: systemd/snapback-sync.service has no 'ExecStart=/usr/local/bin/snapback-sync ...' line" >&2
    exit 1
}

status=0
if ! messages=$(MANPATH="$tmp/man" systemd-analyze verify "$tmp/units/snapbackd.socket" "$tmp/units/snapbackd.service" \
    "$tmp/units/snapback-sync.service" 2>&1) \
    || [ -n "$messages" ]; then
    echo "$messages"
    echo "check-systemd: FAIL systemd-analyze verify"
    status=1
else
    echo "check-systemd: ok   systemd-analyze verify snapbackd.socket snapbackd.service snapback-sync.service"
fi

if report=$(systemd-analyze security --offline=true --threshold=10 "$repo/systemd/snapbackd.service" 2>&1); then
    echo "check-systemd: ok   $(echo "$report" | grep 'Overall exposure level' | sed 's/^→ //') (at most 1.0)"
else
    echo "$report" | grep -v '✓' || true
    echo "check-systemd: FAIL systemd-analyze security: exposure above 1.0 (or the unit did not load)"
    status=1
fi

if report=$(systemd-analyze security --offline=true --threshold=15 "$repo/systemd/snapback-sync.service" 2>&1); then
    echo "check-systemd: ok   $(echo "$report" | grep 'Overall exposure level' | sed 's/^→ //') (at most 1.5)"
else
    echo "$report" | grep -v '✓' || true
    echo "check-systemd: FAIL systemd-analyze security: snapback-sync exposure above 1.5 (or the unit did not load)"
    status=1
fi

for page in "$repo/docs/man/snapbackd.8" "$repo/docs/man/snapbackd.conf.5" "$repo/docs/man/snapback.1" \
    "$repo/docs/man/snapback-sync.8"; do
    warnings=$(groff -man -Tutf8 -ww -z "$page" 2>&1)
    if [ -n "$warnings" ]; then
        echo "$warnings"
        echo "check-systemd: FAIL groff warnings in ${page#"$repo"/}"
        status=1
    fi
done
[ $status -eq 0 ] && echo "check-systemd: ok   man pages format without warnings"
exit $status
