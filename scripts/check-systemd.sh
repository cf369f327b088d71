#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Checks the systemd units and the man pages, without a running systemd (CI has none):
#
#   scripts/check-systemd.sh SNAPBACKD_BINARY SNAPBACK_SYNC_BINARY
#
# 1. `systemd-analyze verify` of systemd/snapbackd.socket, snapbackd.service, snapback-sync.service
#    (the household sync agent's), the web bridge's and snapback-fleet.service. verify checks
#    that ExecStart= is an executable file and that every Documentation=man: page exists, so it runs on
#    a temporary copy whose ExecStart= names SNAPBACKD_BINARY (the committed unit names
#    /usr/local/bin/snapbackd, which `make install` rewrites to its PREFIX), with MANPATH pointing at a
#    temporary man tree holding docs/man. Any message from verify fails the check.
# 2. `systemd-analyze security --offline=true` of the committed systemd/snapbackd.service: the overall
#    exposure must be 1.0 or lower (--threshold counts tenths); of snapback-sync.service and
#    snapback-fleet.service, 1.5 or lower (they need the network: AF_INET/AF_INET6 and no IP allow list); of
#    snapback-web.service 1.0, and the web bridge's units must keep it on loopback (its sockets on
#    127.0.0.1 and [::1] only, localhost alone allowed, no network of its own).
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
cp "$repo/docs/man/snapback-web.8" "$repo/docs/man/snapback-fleet.8" "$tmp/man/man8/"
cp "$repo/docs/man/snapback-web.conf.5" "$tmp/man/man5/"
cp "$repo/systemd/snapback-web.socket" "$tmp/units/"
web_binary=$(dirname "$binary")/snapback-web
[ -x "$web_binary" ] || { echo "check-systemd: $web_binary is not an executable file" >&2; exit 1; }
sed "s#^ExecStart=/usr/local/bin/snapback-web #ExecStart=$web_binary #" "$repo/systemd/snapback-web.service" \
    > "$tmp/units/snapback-web.service"
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

fleet_binary=$(dirname "$binary")/snapback-fleet
[ -x "$fleet_binary" ] || { echo "check-systemd: $fleet_binary is not an executable file" >&2; exit 1; }
sed "s#^ExecStart=/usr/local/bin/snapback-fleet #ExecStart=$fleet_binary #" "$repo/systemd/snapback-fleet.service" \
    > "$tmp/units/snapback-fleet.service"

status=0
if ! messages=$(MANPATH="$tmp/man" systemd-analyze verify "$tmp/units/snapbackd.socket" "$tmp/units/snapbackd.service" \
    "$tmp/units/snapback-sync.service" "$tmp/units/snapback-web.socket" "$tmp/units/snapback-web.service" \
    "$tmp/units/snapback-fleet.service" 2>&1) \
    || [ -n "$messages" ]; then
    echo "$messages"
    echo "check-systemd: FAIL systemd-analyze verify"
    status=1
else
    echo "check-systemd: ok   systemd-analyze verify snapbackd.socket snapbackd.service snapback-sync.service snapback-web.socket snapback-web.service snapback-fleet.service"
fi

# score UNIT TENTHS: the unit's overall exposure must be at most TENTHS/10.
score() {
    if report=$(systemd-analyze security --offline=true --threshold="$2" "$repo/systemd/$1" 2>&1); then
        echo "check-systemd: ok   $(echo "$report" | grep 'Overall exposure level' | sed 's/^→ //') (at most $(($2 / 10)).$(($2 % 10)))"
    else
        echo "$report" | grep -v '✓' || true
        echo "check-systemd: FAIL systemd-analyze security: $1 exposure above $(($2 / 10)).$(($2 % 10)) (or the unit did not load)"
        status=1
    fi
}
score snapbackd.service 10
score snapback-sync.service 15
score snapback-web.service 10
score snapback-fleet.service 15
# The bridge is reachable on loopback only: its sockets and its service allow localhost alone, and the
# service has no network of its own.
for unit in snapback-web.socket snapback-web.service; do
    grep -qx "IPAddressDeny=any" "$repo/systemd/$unit" && grep -qx "IPAddressAllow=localhost" "$repo/systemd/$unit" \
        || { echo "check-systemd: FAIL $unit does not deny every address but localhost"; status=1; }
done
if grep -E '^ListenStream=' "$repo/systemd/snapback-web.socket" | grep -vqE '^ListenStream=(127\.0\.0\.1|\[::1\]):[0-9]+$'; then
    echo "check-systemd: FAIL snapback-web.socket listens on an address that is not loopback"
    status=1
fi
grep -qx "PrivateNetwork=yes" "$repo/systemd/snapback-web.service" \
    || { echo "check-systemd: FAIL snapback-web.service has a network of its own"; status=1; }
[ $status -eq 0 ] && echo "check-systemd: ok   snapback-web: loopback sockets only, no network of its own"

for page in "$repo/docs/man/snapbackd.8" "$repo/docs/man/snapbackd.conf.5" "$repo/docs/man/snapback.1" \
    "$repo/docs/man/snapback-sync.8" "$repo/docs/man/snapback-web.8" "$repo/docs/man/snapback-web.conf.5" \
    "$repo/docs/man/snapback-fleet.8"; do
    warnings=$(groff -man -Tutf8 -ww -z "$page" 2>&1)
    if [ -n "$warnings" ]; then
        echo "$warnings"
        echo "check-systemd: FAIL groff warnings in ${page#"$repo"/}"
        status=1
    fi
done
[ $status -eq 0 ] && echo "check-systemd: ok   man pages format without warnings"
exit $status
