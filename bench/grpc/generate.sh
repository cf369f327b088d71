#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Regenerates Sources/SnapbackGRPCProto from proto/snapback/v1 and Protos/ with swift-protobuf's and
# grpc-swift-protobuf's protoc plugins, built from this package's dependencies (slow: minutes). The
# output is committed, so `make bench-grpc` does not build the plugins.
#
#   generate.sh          regenerate the code and its stamp (needs protoc, Debian: protobuf-compiler)
#   generate.sh --check  fail if the committed code is older than its inputs (part of `make check-proto`)
#
# The stamp, Sources/SnapbackGRPCProto/generated-from.txt, holds what the code was generated from: the
# sha256 of each .proto given to protoc and of this script (its rewrite rule and the plugins' options
# shape the output), the versions of the two plugins' packages pinned in Package.swift, and the sha256
# of each generated file (a hand edit or a half-finished run shows too). Regenerating takes the plugins'
# build, minutes, so --check only hashes: it builds nothing and needs bash and coreutils alone, and
# `make test` can afford it on every run.
set -euo pipefail
export LC_ALL=C
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out="$here/Sources/SnapbackGRPCProto"
stamp="$out/generated-from.txt"
# The files given to protoc, by their import paths: the daemon's (from proto/) and the bench's own
# (from Protos/). Every file one of them imports must be listed too, or its messages are not generated.
daemon_protos=(snapback/v1/timeline.proto snapback/v1/policy.proto snapback/v1/push.proto)
bench_protos=(snapback/bench/v1/bench.proto)
# The packages whose plugins write the code: another version may write other code.
plugin_packages=(swift-protobuf grpc-swift-protobuf)

# The stamp's lines, `<sha256 or version>  <what>`, paths relative to the repository's root.
stamp_lines() {
    local files=() f p version
    for f in "${daemon_protos[@]}"; do files+=("proto/$f"); done
    for f in "${bench_protos[@]}"; do files+=("bench/grpc/Protos/$f"); done
    files+=(bench/grpc/generate.sh)
    for f in "$out"/*.swift; do
        if [[ -e $f ]]; then files+=("${f#"$root/"}"); fi
    done
    for f in "${files[@]}"; do
        if [[ -f $root/$f ]]; then (cd "$root" && sha256sum -- "$f"); else echo "missing  $f"; fi
    done
    for p in "${plugin_packages[@]}"; do
        version=$(sed -nE "s#.*\.package\(url: \"[^\"]*/$p\.git\", exact: \"([^\"]+)\"\).*#\1#p" "$here/Package.swift")
        echo "${version:-unpinned}  $p (bench/grpc/Package.swift)"
    done
}

check() {
    local rel=${stamp#"$root/"} line what current
    local -A was=() now=()
    if [[ ! -f $stamp ]]; then
        echo "error: $rel is missing: regenerate the gRPC bench's code with bench/grpc/generate.sh" >&2
        return 1
    fi
    while IFS= read -r line; do
        [[ -z $line || $line == \#* ]] && continue
        was[${line#*  }]=${line%%  *}
    done <"$stamp"
    current=$(stamp_lines)
    while IFS= read -r line; do now[${line#*  }]=${line%%  *}; done <<<"$current"
    local changed=()
    for what in "${!now[@]}"; do
        if [[ -z ${was[$what]+set} ]]; then changed+=("$what (not in the stamp)")
        elif [[ ${was[$what]} != "${now[$what]}" ]]; then changed+=("$what"); fi
    done
    for what in "${!was[@]}"; do [[ -n ${now[$what]+set} ]] || changed+=("$what (gone)"); done
    if ((${#changed[@]})); then
        echo "error: the gRPC bench's generated code (bench/grpc/Sources/SnapbackGRPCProto) is stale;" >&2
        echo "changed since it was generated:" >&2
        printf '  %s\n' "${changed[@]}" | sort >&2
        echo "run bench/grpc/generate.sh (needs protoc; builds the protoc plugins: minutes) and commit" >&2
        echo "its output with $rel" >&2
        return 1
    fi
    echo "generated gRPC bench code is up to date (${#now[@]} inputs and outputs match $rel)"
}

case "${1:-}" in
--check) check; exit ;;
-h | --help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit ;;
'') ;;
*) echo "usage: generate.sh [--check]" >&2; exit 2 ;;
esac

command -v protoc >/dev/null || { echo "generate.sh: protoc is needed (Debian: protobuf-compiler)" >&2; exit 1; }
swift build --package-path "$here" -c release --product protoc-gen-swift
swift build --package-path "$here" -c release --product protoc-gen-grpc-swift-2
bin=$(swift build --package-path "$here" -c release --show-bin-path)
# snapbackd's .proto files mark optional scalars with a one-field oneof named after the field
# (`oneof _cooldown { double cooldown = 11; }`, for protobuf-c), for which protoc-gen-swift declares two
# properties of the same name. The same field as proto3 `optional` is the same on the wire (protoc itself
# makes it such a oneof), so the Swift code is generated from a copy that says `optional`.
protos=$(mktemp -d)
trap 'rm -rf "$protos"' EXIT
mkdir -p "$protos/snapback/v1"
for f in "$root"/proto/snapback/v1/*.proto; do
    sed -E 's/oneof _([a-z0-9_]+) \{ ([a-z0-9_.]+ [a-z0-9_]+ = [0-9]+;) \}/optional \2/' "$f" > "$protos/snapback/v1/${f##*/}"
done
if grep -n 'oneof _' "$protos"/snapback/v1/*.proto; then echo "generate.sh: a oneof above was not rewritten" >&2; exit 1; fi
rm -f "$out"/*.swift "$stamp"
protoc -I "$protos" -I "$here/Protos" \
    --plugin=protoc-gen-swift="$bin/protoc-gen-swift" --swift_out="$out" --swift_opt=Visibility=Public \
    "${daemon_protos[@]}" "${bench_protos[@]}"
protoc -I "$protos" -I "$here/Protos" \
    --plugin=protoc-gen-grpc-swift-2="$bin/protoc-gen-grpc-swift-2" --grpc-swift-2_out="$out" \
    --grpc-swift-2_opt=Visibility=Public,Server=true,Client=true \
    "${bench_protos[@]}"
# protoc writes into subfolders named after the .proto paths; the target wants its files flat.
find "$out" -mindepth 2 -name '*.swift' | while read -r f; do
    rel=${f#"$out/"}
    # The plugins write no licence line: each file gets the one the hand-written sources start with.
    { echo "// SPDX-License-Identifier: Apache-2.0"; cat "$f"; } >"$out/${rel//\//_}"
    rm "$f"
done
find "$out" -mindepth 1 -type d -empty -delete
# Written last: a run that stopped half-way leaves no stamp, and --check fails.
{
    echo "# Written by bench/grpc/generate.sh: what the Swift code beside it was generated from."
    echo "# bench/grpc/generate.sh --check (make check-proto) fails when one of these has changed."
    stamp_lines
} >"$stamp"
echo "generate.sh: $(ls "$out"/*.swift | wc -l) files in $out, stamp ${stamp#"$root/"}"
