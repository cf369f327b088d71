#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# perf/gen-profile.sh BIN_DIR OUT FLAGS... — make profile: the release daemon's execution profile.
#
# Builds snapbackd instrumented (LLVM's IR-level profiling, in its own scratch directory .build-profile,
# with the release build's swift build FLAGS and the other levers of SNAPBACK_PERF, which perf/perf.mk
# passes: the profile matches the code they produce), serves a training run with it, and merges what it
# counted into OUT, the indexed profile the release build optimises with (the profile lever). The training run is what players send, through the
# real socket: `snapback-bench daemon` (BIN_DIR's) with its round trip (SeekEnded → snapback push + reply),
# its cold path, 200 connections of 10 sessions reporting the playhead, and 2,000 sessions opened and
# closed; then the demo (`scripts/demo.sh`: Hello, sessions, playhead, seeks, ad events, bookmarks saved
# and resumed, queries). Each starts its own instrumented daemon, which writes its counts when it exits.
# Regenerate after changing code on the hot path: `make check-budget` fails when the round trip's code
# grows past its cache-line budget, which is what a stale profile does.
set -euo pipefail

[[ $# -ge 3 ]] || {
    echo "usage: $0 BIN_DIR OUT FLAGS...   (BIN_DIR holds the release snapback and snapback-bench; FLAGS: swift build's release flags)" >&2
    exit 2
}
bin_dir=$1
out=$2
shift 2
toolchain=$(dirname "$(readlink -f "$(command -v swift)")")
profdata=$toolchain/llvm-profdata
runtime=$(ls "$toolchain"/../lib/clang/*/lib/linux/libclang_rt.profile-"$(uname -m)".a 2>/dev/null | head -1 || true)
[[ -x $profdata && -n $runtime ]] || { echo "gen-profile: the Swift toolchain has no llvm-profdata or profile runtime" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/snapback-profile.XXXXXX")
trap 'rm -rf "$work"' EXIT

case ",${SNAPBACK_PERF:-}," in
*,profile[,=]*) echo "gen-profile: SNAPBACK_PERF names the profile: the instrumented build must not read it" >&2; exit 2 ;;
esac
swift build "$@" --scratch-path .build-profile \
    --product snapbackd -Xswiftc -Xfrontend -Xswiftc -ir-profile-generate \
    -Xlinker -u__llvm_profile_runtime -Xlinker "$runtime" 2>&1 | grep -v "statically linked applications requires" >&2

mkdir -p "$work/bin"
ln -s "$(pwd)/.build-profile/release/snapbackd" "$work/bin/snapbackd"
ln -s "$(readlink -f "$bin_dir/snapback")" "$work/bin/snapback"
ln -s "$(readlink -f "$bin_dir/snapback-bench")" "$work/bin/snapback-bench"
export LLVM_PROFILE_FILE=$work/raw/%p.profraw
"$work/bin/snapback-bench" daemon --snapbackd "$work/bin/snapbackd" --iterations 5000 --warmup 500 --rounds 2 > "$work/bench.txt"
"$work/bin/snapback-bench" daemon --snapbackd "$work/bin/snapbackd" --rounds 2 --spacing 1 --probes 500 \
    --load --load-connections 200 --sessions 2000 >> "$work/bench.txt"
scripts/demo.sh "$work/bin" > "$work/demo.txt" 2>&1 || { cat "$work/demo.txt" >&2; exit 1; }
unset LLVM_PROFILE_FILE

runs=$(ls "$work"/raw/*.profraw | wc -l)
(( runs >= 5 )) || { echo "gen-profile: only $runs of the training run's daemons wrote a profile" >&2; exit 1; }
"$profdata" merge --sparse -o "$out" "$work"/raw/*.profraw
echo "gen-profile: $out from $runs instrumented daemons ($(stat -c %s "$out") bytes)"
