#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# run.sh BUILD_DIR SNAPBACKD — runs libsnapback's tests from one build (plain or sanitizer): the
# integration tests (each starts its own daemon), then both example players against a daemon started
# here, each of which must play its scripted story to the end (exit 0). Used by `make test-c`.
set -eu
build=$1
snapbackd=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/libsnapback-run.XXXXXX")
pid=""
cleanup() {
    if [ -n "$pid" ]; then kill -KILL "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
    rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "libsnapback ($build): FAIL $*" >&2; exit 1; }

"$build/test_client" "$snapbackd" || fail "test_client"
"$build/test_cues" || fail "test_cues"

# Each example against a daemon of its own: the daemon remembers watched breaks per content, and the
# story needs b1 unwatched.
for example in player_poll player_glib; do
    dir="$tmp/$example"
    mkdir "$dir"
    "$snapbackd" --socket "$dir/snapbackd.sock" --state-dir "$dir/state" --config /dev/null --log-level warning \
        2>"$dir/snapbackd.log" &
    pid=$!
    i=0
    until [ -S "$dir/snapbackd.sock" ]; do
        i=$((i + 1))
        [ $i -le 200 ] || { cat "$dir/snapbackd.log" >&2; fail "snapbackd did not create its socket in 10 s"; }
        kill -0 "$pid" 2>/dev/null || { cat "$dir/snapbackd.log" >&2; fail "snapbackd exited"; }
        sleep 0.05
    done
    SNAPBACK_SOCKET="$dir/snapbackd.sock" "$build/$example" >"$dir/player.log" 2>&1 \
        || { cat "$dir/player.log" >&2; fail "$example"; }
    grep -q "seek to 600 (seek 300→900 skipped unwatched break b1 at 600)" "$dir/player.log" \
        || { cat "$dir/player.log" >&2; fail "$example did not print the snapback"; }
    echo "ok   $example: $(tail -1 "$dir/player.log")"
    kill -TERM "$pid"
    wait "$pid" || fail "snapbackd exited $? after SIGTERM"
    pid=""
done
echo "libsnapback ($build): ok"
