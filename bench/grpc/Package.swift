// swift-tools-version: 6.1
// SPDX-License-Identifier: Apache-2.0
// bench/grpc: the usual alternative to snapbackd, measured beside it by `make bench-grpc`.
//
// A gRPC-Swift-2 server over a Unix socket answering the same call as snapbackd's bench (SeekEnded over
// an unwatched break → the snapback push and the reply), with the same timeline deciding, and a driver
// that measures it and runs `snapback-bench daemon --json` for snapbackd's figures in the same run. A package
// of its own: the daemon never depends on it (it only depends on the daemon's SnapbackTimeline).
//
//   SnapbackGRPCProto     swift-protobuf and grpc-swift-2 code generated from proto/snapback/v1 and
//                         Protos/ (committed; `./generate.sh` regenerates it, `./generate.sh --check`
//                         fails when it is older than its inputs)
//   snapback-grpc-server  the gRPC server (HTTP/2 over a Unix socket, SwiftNIO's posix transport)
//   snapback-grpc-bench   the driver: starts the server, measures it, runs snapback-bench daemon, compares
import PackageDescription

// SwiftPM names a path dependency after its folder (`main`, a worktree's name, a clone's): the
// repository's root is two folders up, and its identity is that folder's name, lowercased.
let snapback = String(Context.packageDirectory.split(separator: "/").dropLast(2).last ?? "snapback").lowercased()

let package = Package(
    name: "snapback-grpc-bench",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: "../.."),
        .package(url: "https://github.com/grpc/grpc-swift-2.git", exact: "2.4.3"),
        .package(url: "https://github.com/grpc/grpc-swift-nio-transport.git", exact: "2.9.2"),
        .package(url: "https://github.com/grpc/grpc-swift-protobuf.git", exact: "2.4.1"),
        .package(url: "https://github.com/apple/swift-protobuf.git", exact: "1.39.0"),
    ],
    targets: [
        .target(
            name: "SnapbackGRPCProto",
            dependencies: [
                .product(name: "GRPCCore", package: "grpc-swift-2"),
                .product(name: "GRPCProtobuf", package: "grpc-swift-protobuf"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ],
            // generate.sh's stamp of the inputs the code was generated from (`generate.sh --check`).
            exclude: ["generated-from.txt"]
        ),
        .executableTarget(name: "snapback-grpc-server", dependencies: [
            "SnapbackGRPCProto",
            .product(name: "SnapbackTimeline", package: snapback),
            .product(name: "GRPCCore", package: "grpc-swift-2"),
            .product(name: "GRPCNIOTransportHTTP2Posix", package: "grpc-swift-nio-transport"),
        ]),
        .executableTarget(name: "snapback-grpc-bench", dependencies: [
            "SnapbackGRPCProto",
            .product(name: "GRPCCore", package: "grpc-swift-2"),
            .product(name: "GRPCNIOTransportHTTP2Posix", package: "grpc-swift-nio-transport"),
        ]),
    ]
)
