#!/usr/bin/env bash
# Regenerates Sources/SnapbackGRPCProto from proto/snapback/v1 and Protos/ with swift-protobuf's and
# grpc-swift-protobuf's protoc plugins, built from this package's dependencies (slow: minutes). The
# output is committed, so `make bench-grpc` does not build the plugins.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
command -v protoc >/dev/null || { echo "generate.sh: protoc is needed (Debian: protobuf-compiler)" >&2; exit 1; }
swift build --package-path "$here" -c release --product protoc-gen-swift
swift build --package-path "$here" -c release --product protoc-gen-grpc-swift-2
bin=$(swift build --package-path "$here" -c release --show-bin-path)
out="$here/Sources/SnapbackGRPCProto"
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
rm -f "$out"/*.swift
protoc -I "$protos" -I "$here/Protos" \
    --plugin=protoc-gen-swift="$bin/protoc-gen-swift" --swift_out="$out" --swift_opt=Visibility=Public \
    snapback/v1/timeline.proto snapback/v1/policy.proto snapback/v1/push.proto snapback/bench/v1/bench.proto
protoc -I "$protos" -I "$here/Protos" \
    --plugin=protoc-gen-grpc-swift-2="$bin/protoc-gen-grpc-swift-2" --grpc-swift-2_out="$out" \
    --grpc-swift-2_opt=Visibility=Public,Server=true,Client=true \
    snapback/bench/v1/bench.proto
# protoc writes into subfolders named after the .proto paths; the target wants its files flat.
find "$out" -mindepth 2 -name '*.swift' | while read -r f; do
    rel=${f#"$out/"}
    mv "$f" "$out/${rel//\//_}"
done
find "$out" -mindepth 1 -type d -empty -delete
echo "generate.sh: $(ls "$out" | wc -l) files in $out"
