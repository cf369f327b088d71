#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# `make install` into a temporary DESTDIR lays out the expected tree, with ExecStart= rewritten to the
# PREFIX, stripped binaries and a default configuration that snapbackd accepts, and libsnapback that a C
# program builds against with pkg-config alone (shared and static) and uses to talk to the installed
# daemon; `make uninstall` then removes all of it. Run by `make check-install` (part of `make test`)
# after the release build.
set -eu
export LC_ALL=C
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
make=${MAKE:-make}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "check-install: FAIL $*" >&2; exit 1; }

# A player built with `pkg-config --cflags --libs libsnapback` only (the sysroot points pkg-config at
# the DESTDIR tree) links, and asks the installed daemon for its status; so does one linked with the
# static library.
check_libsnapback() {
    dest=$1 prefix=$2
    lib="$dest$prefix/lib"
    [ "$(readlink "$lib/libsnapback.so.0")" = libsnapback.so.0.4.0 ] || fail "libsnapback.so.0 is not a link to libsnapback.so.0.4.0"
    [ "$(readlink "$lib/libsnapback.so")" = libsnapback.so.0 ] || fail "libsnapback.so is not a link to libsnapback.so.0"
    if readelf -S "$lib/libsnapback.so.0.4.0" | grep -q '\.symtab'; then fail "libsnapback.so is not stripped"; fi
    cat >"$tmp/player.c" <<'EOC'
#include <snapback/snapback.h>
#include <stdio.h>
#include <string.h>
static void on_status(snapback_client *c, const snapback_reply *r, void *user) {
    (void)c;
    *(int *)user = r->status == SNAPBACK_OK && r->u.status_info.protocol_version == 1 ? 1 : 2;
}
int main(int argc, char **argv) {
    snapback_options o;
    memset(&o, 0, sizeof o);
    o.socket_path = argc > 1 ? argv[1] : NULL;
    o.no_reconnect = true;
    snapback_client *c = snapback_client_new(&o);
    int done = 0;
    if (!c || snapback_client_connect(c) != SNAPBACK_OK || snapback_get_status(c, on_status, &done) != SNAPBACK_OK)
        return 1;
    int rc = snapback_client_wait(c, &done, 5000);
    snapback_client_free(c);
    printf("%s\n", snapback_strerror(rc));
    return rc == SNAPBACK_OK && done == 1 ? 0 : 1;
}
EOC
    flags=$(PKG_CONFIG_PATH="$lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$dest" pkg-config --cflags --libs libsnapback) \
        || fail "pkg-config does not find libsnapback in $lib/pkgconfig"
    # shellcheck disable=SC2086
    cc -std=c11 -Wall -Wextra -Werror -o "$tmp/player" "$tmp/player.c" $flags || fail "a player does not build with: $flags"
    # shellcheck disable=SC2086
    cc -std=c11 -Wall -Wextra -Werror -o "$tmp/player-static" "$tmp/player.c" -I"$dest$prefix/include" \
        "$lib/libsnapback.a" $(pkg-config --libs libprotobuf-c) || fail "a player does not link the static library"
    LD_LIBRARY_PATH="$lib" ldd "$tmp/player" | grep -q "libsnapback.so.0 => $lib/" || fail "the player does not load libsnapback.so.0"
    "$dest$prefix/bin/snapbackd" --socket "$tmp/run/snapbackd.sock" --state-dir "$tmp/run/state" --config /dev/null \
        --log-level warning 2>"$tmp/run.log" &
    daemon=$!
    i=0
    until [ -S "$tmp/run/snapbackd.sock" ]; do
        i=$((i + 1))
        [ $i -le 200 ] || { kill $daemon; fail "the installed snapbackd did not create its socket"; }
        sleep 0.05
    done
    LD_LIBRARY_PATH="$lib" "$tmp/player" "$tmp/run/snapbackd.sock" >"$tmp/player.log" 2>&1 \
        || { kill $daemon; cat "$tmp/player.log"; fail "the pkg-config-built player failed against the installed daemon"; }
    "$tmp/player-static" "$tmp/run/snapbackd.sock" >>"$tmp/player.log" 2>&1 \
        || { kill $daemon; cat "$tmp/player.log"; fail "the statically linked player failed against the installed daemon"; }
    kill -TERM $daemon
    wait $daemon || fail "the installed snapbackd did not stop cleanly"
    rm -rf "$tmp/run"
}

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
        echo "$prefix/bin/snapback-sync"
        echo "/etc/snapback/sync.conf.example"
        echo "$prefix/lib/systemd/system/snapback-sync.service"
        echo "$prefix/share/man/man8/snapback-sync.8"
        echo "$prefix/include/snapback/snapback.h"
        echo "$prefix/include/snapback/cues.h"
        echo "$prefix/lib/libsnapback.a"
        echo "$prefix/lib/libsnapback.so.0.4.0"
        echo "$prefix/lib/pkgconfig/libsnapback.pc"
        for proto in proto/snapback/v1/*.proto; do echo "$prefix/include/${proto#proto/}"; done
        echo "$prefix/lib/systemd/system/snapbackd.service"
        echo "$prefix/lib/systemd/system/snapbackd.socket"
        echo "$prefix/lib/sysusers.d/snapback.conf"
        echo "$prefix/lib/sysusers.d/snapback-sync.conf"
        echo "$prefix/share/doc/snapback/PROTOCOL.md"
        echo "$prefix/share/doc/snapback/policy.md"
        echo "$prefix/share/man/man5/snapbackd.conf.5"
        echo "$prefix/share/man/man1/snapback.1"
        echo "$prefix/share/bash-completion/completions/snapback"
        echo "$prefix/share/zsh/site-functions/_snapback"
        echo "$prefix/share/fish/vendor_completions.d/snapback.fish"
        echo "$prefix/share/man/man8/snapbackd.8"
        echo "$prefix/bin/snapback-web"
        echo "$prefix/share/snapback/web/snapback.js"
        echo "/etc/snapback/snapback-web.conf"
        echo "$prefix/lib/systemd/system/snapback-web.service"
        echo "$prefix/lib/systemd/system/snapback-web.socket"
        echo "$prefix/share/man/man8/snapback-web.8"
        echo "$prefix/share/man/man5/snapback-web.conf.5"
        echo "$prefix/bin/snapback-fleet"
        echo "/etc/snapback/fleet.conf"
        echo "$prefix/lib/systemd/system/snapback-fleet.service"
        echo "$prefix/lib/sysusers.d/snapback-fleet.conf"
        echo "$prefix/share/man/man8/snapback-fleet.8"
    } | sort >"$expected"
    (cd "$dest" && find . -type f | sed 's#^\.##' | sort) >"$tmp/actual"
    diff -u "$expected" "$tmp/actual" || fail "PREFIX=$prefix: the installed files differ from the list above"
    [ -d "$dest/etc/snapback/snapbackd.conf.d" ] || fail "no /etc/snapback/snapbackd.conf.d directory"

    grep -qx "ExecStart=$prefix/bin/snapbackd --state-dir /var/lib/snapback --socket /run/snapback/snapbackd.sock" \
        "$dest$prefix/lib/systemd/system/snapbackd.service" || fail "ExecStart= not rewritten to $prefix/bin"
    grep -qx "ExecStart=$prefix/bin/snapback-sync --config /etc/snapback/sync.conf" \
        "$dest$prefix/lib/systemd/system/snapback-sync.service" || fail "snapback-sync ExecStart= not rewritten to $prefix/bin"
    # The agent's example, with its two required keys set, is valid.
    # Top-level keys before the example's sections ([telemetry]), where an agent's file has them.
    { echo "servers = nats://127.0.0.1:4222"; echo "household = A"; cat "$dest/etc/snapback/sync.conf.example"; } \
        >"$tmp/sync.conf"
    "$dest$prefix/bin/snapback-sync" --check-config --config "$tmp/sync.conf" >/dev/null \
        || fail "the installed sync.conf.example with servers and household is refused"
    grep -q "$prefix/include/snapback/v1/" "$dest$prefix/share/man/man8/snapbackd.8" \
        || fail "snapbackd(8) does not name $prefix/include/snapback/v1/"
    # The completions are the installed binary's, and complete its commands.
    bash -c ". '$dest$prefix/share/bash-completion/completions/snapback' && complete -p snapback" >/dev/null 2>&1 \
        || fail "the bash completion does not register for snapback"
    grep -q "watch" "$dest$prefix/share/zsh/site-functions/_snapback" || fail "the zsh completion lacks 'watch'"
    grep -q "sessions" "$dest$prefix/share/fish/vendor_completions.d/snapback.fish" || fail "the fish completion lacks 'sessions'"
    # The benchmarks are snapback-bench's, built and not installed: the operator's snapback has none.
    "$dest$prefix/bin/snapback" --help >"$tmp/help.txt" 2>&1 || fail "snapback --help failed"
    if grep -qi bench "$tmp/help.txt" "$dest$prefix/share/zsh/site-functions/_snapback"; then
        fail "the installed snapback lists a bench command"
    fi
    grep -qx "ExecStart=$prefix/bin/snapback-web --config /etc/snapback/snapback-web.conf" \
        "$dest$prefix/lib/systemd/system/snapback-web.service" || fail "snapback-web ExecStart= not rewritten to $prefix/bin"
    "$dest$prefix/bin/snapback-web" --check-config --config "$dest/etc/snapback/snapback-web.conf" >/dev/null \
        || fail "the installed snapback-web.conf is refused"
    grep -qx "ExecStart=$prefix/bin/snapback-fleet --config /etc/snapback/fleet.conf" \
        "$dest$prefix/lib/systemd/system/snapback-fleet.service" || fail "snapback-fleet ExecStart= not rewritten to $prefix/bin"
    "$dest$prefix/bin/snapback-fleet" --check-config --config "$dest/etc/snapback/fleet.conf" >/dev/null \
        || fail "the installed fleet.conf is refused"
    for binary in snapbackd snapback snapback-sync snapback-web snapback-fleet; do
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

    check_libsnapback "$dest" "$prefix"

    $make --no-print-directory -s uninstall DESTDIR="$dest" PREFIX="$prefix" >"$tmp/uninstall.log" 2>&1 \
        || { cat "$tmp/uninstall.log"; fail "make uninstall PREFIX=$prefix"; }
    left=$(cd "$dest" && find . -type f)
    [ -z "$left" ] || fail "make uninstall left: $left"
    echo "check-install: ok   PREFIX=$prefix: $(wc -l <"$expected" | tr -d ' ') files installed and removed"
done

# An operator's changed configuration (the daemon's, the fleet aggregator's) survives a reinstall and an
# uninstall.
dest="$tmp/root"
$make --no-print-directory -s install DESTDIR="$dest" >/dev/null 2>&1 || fail "make install"
echo "cooldown = 5" >>"$dest/etc/snapback/snapbackd.conf"
echo "batch = 64" >>"$dest/etc/snapback/fleet.conf"
$make --no-print-directory -s install DESTDIR="$dest" >/dev/null 2>&1 || fail "make install over a changed configuration"
grep -q "^cooldown = 5" "$dest/etc/snapback/snapbackd.conf" || fail "make install overwrote a changed configuration"
[ -f "$dest/etc/snapback/snapbackd.conf.default" ] || fail "no snapbackd.conf.default beside a changed configuration"
grep -q "^batch = 64" "$dest/etc/snapback/fleet.conf" || fail "make install overwrote a changed fleet.conf"
cmp -s config/fleet.conf "$dest/etc/snapback/fleet.conf.default" || fail "no fleet.conf.default beside a changed fleet.conf"
$make --no-print-directory -s uninstall DESTDIR="$dest" >/dev/null 2>&1 || fail "make uninstall"
[ "$(cd "$dest" && find . -type f | sort)" = "$(printf './etc/snapback/fleet.conf\n./etc/snapback/snapbackd.conf')" ] \
    || fail "make uninstall removed a changed configuration, or left more"
echo "check-install: ok   a changed /etc/snapback/snapbackd.conf and fleet.conf are kept by install and uninstall"
