#!/bin/sh
# Checks the systemd units and the man pages, without a running systemd (CI has none):
#
#   scripts/check-systemd.sh SNAPBACKD_BINARY
#
# 1. `systemd-analyze verify` of systemd/snapbackd.socket and systemd/snapbackd.service. verify checks
#    that ExecStart= is an executable file and that every Documentation=man: page exists, so it runs on
#    a temporary copy whose ExecStart= names SNAPBACKD_BINARY (the committed unit names
#    /usr/local/bin/snapbackd, which `make install` rewrites to its PREFIX), with MANPATH pointing at a
#    temporary man tree holding docs/man. Any message from verify fails the check.
# 2. `systemd-analyze security --offline=true` of the committed systemd/snapbackd.service: the overall
#    exposure must be 1.0 or lower (--threshold counts tenths).
# 3. The man pages format without a groff warning.
set -eu
export LC_ALL=C.UTF-8

repo=$(cd "$(dirname "$0")/.." && pwd)
binary=${1:?usage: check-systemd.sh SNAPBACKD_BINARY}
case $binary in /*) ;; *) binary=$(pwd)/$binary ;; esac
[ -x "$binary" ] || { echo "check-systemd: $binary is not an executable file" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/units" "$tmp/man/man8" "$tmp/man/man5"
cp "$repo/docs/man/snapbackd.8" "$tmp/man/man8/"
cp "$repo/docs/man/snapbackd.conf.5" "$tmp/man/man5/"
cp "$repo/systemd/snapbackd.socket" "$tmp/units/"
sed "s#^ExecStart=/usr/local/bin/snapbackd #ExecStart=$binary #" "$repo/systemd/snapbackd.service" \
    > "$tmp/units/snapbackd.service"
grep -q "^ExecStart=$binary " "$tmp/units/snapbackd.service" || {
    echo "check-systemd: systemd/snapbackd.service has no 'ExecStart=/usr/local/bin/snapbackd ...' line" >&2
    exit 1
}

status=0
if ! messages=$(MANPATH="$tmp/man" systemd-analyze verify "$tmp/units/snapbackd.socket" "$tmp/units/snapbackd.service" 2>&1) \
    || [ -n "$messages" ]; then
    echo "$messages"
    echo "check-systemd: FAIL systemd-analyze verify"
    status=1
else
    echo "check-systemd: ok   systemd-analyze verify snapbackd.socket snapbackd.service"
fi

if report=$(systemd-analyze security --offline=true --threshold=10 "$repo/systemd/snapbackd.service" 2>&1); then
    echo "check-systemd: ok   $(echo "$report" | grep 'Overall exposure level' | sed 's/^→ //') (at most 1.0)"
else
    echo "$report" | grep -v '✓' || true
    echo "check-systemd: FAIL systemd-analyze security: exposure above 1.0 (or the unit did not load)"
    status=1
fi

for page in "$repo/docs/man/snapbackd.8" "$repo/docs/man/snapbackd.conf.5" "$repo/docs/man/snapback.1"; do
    warnings=$(groff -man -Tutf8 -ww -z "$page" 2>&1)
    if [ -n "$warnings" ]; then
        echo "$warnings"
        echo "check-systemd: FAIL groff warnings in ${page#"$repo"/}"
        status=1
    fi
done
[ $status -eq 0 ] && echo "check-systemd: ok   man pages format without warnings"
exit $status
