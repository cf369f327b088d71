#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# scripts/demo.sh BIN_DIR — the snapback story, end to end (`make demo` runs it with .build/release).
#
# Starts BIN_DIR/snapbackd on a socket in a new temporary directory with --log-level info, its log lines
# shown prefixed with [snapbackd]; waits for the socket; runs `BIN_DIR/snapback demo` against it; stops
# the daemon with SIGTERM and checks that it exited 0. Exits non-zero if any step failed. The temporary
# directory and the daemon are cleaned up however the script ends.
set -uo pipefail

usage() {
    echo "usage: $0 BIN_DIR   (the directory holding snapbackd and snapback, e.g. .build/release)" >&2
    exit 2
}
[[ $# -eq 1 && $1 != -* ]] || usage
bin_dir=$1
for tool in snapbackd snapback; do
    if [[ ! -x $bin_dir/$tool ]]; then
        echo "demo: $bin_dir/$tool is missing or not executable (build first: swift build -c release --static-swift-stdlib)" >&2
        exit 1
    fi
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/snapback-demo.XXXXXX") || exit 1
socket=$tmp/snapbackd.sock
daemon_pid=""
log_pid=""

cleanup() {
    if [[ -n $daemon_pid ]] && kill -0 "$daemon_pid" 2>/dev/null; then
        kill -TERM "$daemon_pid" 2>/dev/null
        for _ in $(seq 50); do kill -0 "$daemon_pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$daemon_pid" 2>/dev/null
        wait "$daemon_pid" 2>/dev/null
    fi
    [[ -n $log_pid ]] && wait "$log_pid" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'echo "demo: interrupted" >&2; exit 130' INT TERM

# The daemon's stderr goes through a FIFO to a line prefixer (its own pid, so $! below is the daemon's).
# Its log shares stdout with the demo, so both tell the story in the order things happened; the
# <N> journald priority prefixes are dropped for reading.
mkfifo "$tmp/log"
sed -u -e 's/^<[0-7]>//' -e 's/^/[snapbackd] /' <"$tmp/log" &
log_pid=$!
"$bin_dir/snapbackd" --socket "$socket" --state-dir "$tmp/state" --log-level info 2>"$tmp/log" </dev/null &
daemon_pid=$!

for _ in $(seq 100); do
    [[ -S $socket ]] && break
    if ! kill -0 "$daemon_pid" 2>/dev/null; then
        wait "$daemon_pid"
        echo "demo: snapbackd exited during start-up (status $?)" >&2
        daemon_pid=""
        exit 1
    fi
    sleep 0.05
done
if [[ ! -S $socket ]]; then
    echo "demo: snapbackd did not create $socket within 5 s" >&2
    exit 1
fi

# --pace: a few milliseconds between messages, so the daemon's log lines land next to the messages
# that caused them.
"$bin_dir/snapback" demo --socket "$socket" --pace 20
demo_status=$?

kill -TERM "$daemon_pid"
for _ in $(seq 100); do kill -0 "$daemon_pid" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$daemon_pid" 2>/dev/null; then
    echo "demo: snapbackd still running 10 s after SIGTERM; killing it" >&2
    kill -KILL "$daemon_pid"
fi
wait "$daemon_pid"
daemon_status=$?
daemon_pid=""
wait "$log_pid"
log_pid=""

failed=0
if [[ $demo_status -ne 0 ]]; then
    echo "demo: FAILED: snapback demo exited $demo_status" >&2
    failed=1
fi
if [[ $daemon_status -ne 0 ]]; then
    echo "demo: FAILED: snapbackd exited $daemon_status after SIGTERM (expected 0)" >&2
    failed=1
fi
if [[ $failed -eq 0 ]]; then
    echo "demo: OK (snapback demo exited 0; snapbackd stopped on SIGTERM and exited 0)"
fi
exit $failed
