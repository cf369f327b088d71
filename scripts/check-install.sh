#!/bin/sh
# `make install` into a temporary DESTDIR lays out the expected tree, with ExecStart= rewritten to the
# PREFIX, stripped binaries and a default configuration that snapbackd accepts; `make uninstall` then
# removes all of it. Run by `make check-install` (part of `make test`) after the release build.
set -eu
export LC_ALL=C
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
make=${MAKE:-make}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "check-install: FAIL $*" >&2; exit 1; }

for prefix in /usr/local /opt/snapback; do
    dest="$tmp/root"
    rm -rf "$dest"
    $make --no-print-directory -s install DESTDIR="$dest" PREFIX="$prefix" >"$tmp/install.log" 2>&1 \
        || { cat "$tmp/install.log"; fail "make install PREFIX=$prefix"; }

    expected="$tmp/expected"
    {
        echo "/etc/snapback/snapbackd.conf"
        echo "$prefix/bin/snapback"
        echo "$prefix/bin/snapbackd"
        for proto in proto/snapback/v1/*.proto; do echo "$prefix/include/${proto#proto/}"; done
        echo "$prefix/lib/systemd/system/snapbackd.service"
        echo "$prefix/lib/systemd/system/snapbackd.socket"
        echo "$prefix/lib/sysusers.d/snapback.conf"
        echo "$prefix/share/doc/snapback/PROTOCOL.md"
        echo "$prefix/share/doc/snapback/policy.md"
        echo "$prefix/share/man/man5/snapbackd.conf.5"
        echo "$prefix/share/man/man8/snapbackd.8"
    } | sort >"$expected"
    (cd "$dest" && find . -type f | sed 's#^\.##' | sort) >"$tmp/actual"
    diff -u "$expected" "$tmp/actual" || fail "PREFIX=$prefix: the installed files differ from the list above"
    [ -d "$dest/etc/snapback/snapbackd.conf.d" ] || fail "no /etc/snapback/snapbackd.conf.d directory"

    grep -qx "ExecStart=$prefix/bin/snapbackd --state-dir /var/lib/snapback --socket /run/snapback/snapbackd.sock" \
        "$dest$prefix/lib/systemd/system/snapbackd.service" || fail "ExecStart= not rewritten to $prefix/bin"
    grep -q "$prefix/include/snapback/v1/" "$dest$prefix/share/man/man8/snapbackd.8" \
        || fail "snapbackd(8) does not name $prefix/include/snapback/v1/"
    for binary in snapbackd snapback; do
        if readelf -S "$dest$prefix/bin/$binary" | grep -q '\.symtab'; then fail "$binary is not stripped"; fi
    done
    # The default configuration is valid and is the built-in defaults.
    "$dest$prefix/bin/snapbackd" --check-config --config "$dest/etc/snapback/snapbackd.conf" >"$tmp/installed.txt" \
        || fail "the installed default configuration is refused"
    "$dest$prefix/bin/snapbackd" --check-config --config "$tmp/none.conf" >"$tmp/builtin.txt" 2>/dev/null && \
        fail "--config naming a missing file was accepted"
    "$dest$prefix/bin/snapbackd" --check-config --config /dev/null >"$tmp/builtin.txt"
    [ "$(tail -n +2 "$tmp/builtin.txt")" = "$(tail -n +2 "$tmp/installed.txt")" ] \
        || fail "the installed configuration is not the built-in defaults"

    $make --no-print-directory -s uninstall DESTDIR="$dest" PREFIX="$prefix" >"$tmp/uninstall.log" 2>&1 \
        || { cat "$tmp/uninstall.log"; fail "make uninstall PREFIX=$prefix"; }
    left=$(cd "$dest" && find . -type f)
    [ -z "$left" ] || fail "make uninstall left: $left"
    echo "check-install: ok   PREFIX=$prefix: $(wc -l <"$expected" | tr -d ' ') files installed and removed"
done

# An operator's changed configuration survives a reinstall and an uninstall.
dest="$tmp/root"
$make --no-print-directory -s install DESTDIR="$dest" >/dev/null 2>&1 || fail "make install"
echo "cooldown = 5" >>"$dest/etc/snapback/snapbackd.conf"
$make --no-print-directory -s install DESTDIR="$dest" >/dev/null 2>&1 || fail "make install over a changed configuration"
grep -q "^cooldown = 5" "$dest/etc/snapback/snapbackd.conf" || fail "make install overwrote a changed configuration"
[ -f "$dest/etc/snapback/snapbackd.conf.default" ] || fail "no snapbackd.conf.default beside a changed configuration"
$make --no-print-directory -s uninstall DESTDIR="$dest" >/dev/null 2>&1 || fail "make uninstall"
[ "$(cd "$dest" && find . -type f)" = "./etc/snapback/snapbackd.conf" ] || fail "make uninstall removed a changed configuration, or left more"
echo "check-install: ok   a changed /etc/snapback/snapbackd.conf is kept by install and uninstall"
