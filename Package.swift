// swift-tools-version: 6.0
// SPDX-License-Identifier: Apache-2.0
// snapback: the ad-timeline daemon for set-top boxes.
//
// Layout (core modules never import the shell):
//   SnapbackTimeline  pure state machine: events in, actions out, time passed in (no I/O, no Foundation)
//   CSnapbackProto    protoc-c output for proto/snapback/v1 (generated, committed; `make proto`)
//   SnapbackWire      frame codec and protobuf-c <-> Swift value mapping
//   SnapbackJSON      every message's proto3 canonical JSON, generated (the CLI and the web bridge; not snapbackd)
//   SnapbackStore     bookmark and watched-state store interface and implementations
//   SnapbackDaemon    the libuv shell: loop executor, listener, connections, timers, signals
//   SnapbackEmbedded  EmbeddedPeer and ManualClock: the daemon's service in process, for the tests, the fuzzer
//                     and the benchmark (as NIOEmbedded is to NIO); no product ships it
//   SnapbackClient    a small blocking client used by the demo, the benchmarks and the tests
//   snapbackd         the daemon executable (only `main`)
//   snapback          the operator's command-line client: demo, status, queries, sessions, watch, bookmarks
//                     (SnapbackCommandLine's own parser: like every installed product, no Foundation)
//   snapback-bench    the benchmarks, apart from the installed client (`make bench`, `make check-budget`);
//                     swift-argument-parser, the package's one dependency, is its alone (not installed)
//   SnapbackFuzzing   bytes from a peer through decoder + mapping + timeline, for libFuzzer and the tests
//   snapback-fuzz     the libFuzzer entry point over decoder, request decoding and timeline
//   snapback-fuzz-daemon  the libFuzzer entry point over the whole service, in process
//   snapback-fuzz-json    the libFuzzer entry point over the generated JSON decoders
//   SnapbackSync      the household sync agent's logic: config, key encoding, outbox, the exchange
//   snapback-sync     the sync agent executable (only `main`): snapbackd's Sync service <-> NATS KV, and
//                     the box's telemetry reports
//   SnapbackFleet     the fleet aggregator's logic: its config, the reports' checks, the SQLite totals
//   snapback-fleet    the fleet aggregator (only `main`): the telemetry stream -> SQLite -> VictoriaMetrics
//   SnapbackWeb       the web bridge's logic: WebSocket framing, the upgrade's checks, its configuration
//   snapback-web      the web bridge: pages' WebSockets on loopback <-> snapbackd, one connection each
//   SnapbackCues      a reader of libsnapback's break sources (HLS, DASH, VMAP), and its yield as the protocol's JSON
//   snapback-fuzz-web the libFuzzer entry point over the bridge's request heads and WebSocket framing
//   snapback-fuzz-fleet the libFuzzer entry point over snapback-fleet's report decoder and checks
import PackageDescription

// The release daemon's speed levers, each opt-in (perf/README.md: what each does and the figure that keeps
// it). The daemon is correct without them, and a plain `swift build` uses none. SNAPBACK_PERF names those a
// build uses, comma-separated; perf/perf.mk sets it for the release build that the budgets check and
// `make install` ships. A lever that reads a file takes its path as NAME=PATH (else the file in perf/):
// SwiftPM does not track the files named in flags, so perf/perf.mk passes copies named by their digest, and
// a regenerated file changes the command lines, which rebuilds what it affects.
let levers: [String: String] = Dictionary(
    (Context.environment["SNAPBACK_PERF"] ?? "").split(separator: ",").map { lever in
        let parts = lever.split(separator: "=", maxSplits: 1).map(String.init)
        return (parts[0], parts.count > 1 ? parts[1] : "")
    },
    uniquingKeysWith: { $1 })

func leverFile(_ name: String, _ file: String) -> String {
    levers[name].flatMap { $0.isEmpty ? nil : $0 } ?? Context.packageDirectory + "/perf/" + file
}

func releaseFlags(_ lever: String, _ flags: [String]) -> [SwiftSetting] {
    levers[lever] == nil ? [] : [.unsafeFlags(flags, .when(configuration: .release))]
}

// When a module's flags change, SwiftPM compiles it again, but the compiler keeps every object file whose
// LLVM IR is unchanged; the profile and the function sections act on the code generated from that IR, so
// with either, every object is generated afresh.
let freshObjects: [SwiftSetting] =
    levers["profile"] == nil && levers["link-order"] == nil
    ? [] : [.unsafeFlags(["-Xfrontend", "-disable-incremental-llvm-codegen"], .when(configuration: .release))]

// exclusivity: the per-message path runs through these modules on the loop thread, without the dynamic
// exclusivity checks (debug builds, which the tests run, keep them); and snapback-fleet's per-report path
// (SnapbackFleet: `make check-fleet-budget`).
let hotPath = releaseFlags("exclusivity", ["-enforce-exclusivity=unchecked"])
// profile: the daemon's modules optimised with the profile of a training run (perf/gen-profile.sh): each
// function's taken blocks together, its untaken ones after them. The sections keep their plain `.text.NAME`
// names (no `.hot.` prefix), which the link order names.
let profileGuided = releaseFlags(
    "profile",
    [
        "-Xfrontend", "-ir-profile-use=" + leverFile("profile", "snapbackd.profdata"),
        "-Xllvm", "-profile-guided-section-prefix=false"
    ])
// link-order: the functions the daemon runs placed together, in the order a round trip runs them; the
// order names sections, so every function of the daemon's modules, Swift and C, is compiled into its own.
let functionSections = releaseFlags("link-order", ["-Xfrontend", "-function-sections"])
let protoSections: [CSetting] =
    levers["link-order"] == nil ? [] : [.unsafeFlags(["-ffunction-sections"], .when(configuration: .release))]
// static: one static executable (glibc, the Swift runtime, libuv, SQLite and protobuf-c inside); Debian
// names libuv's archive libuv_a.a, which perf/static-libs (written by perf/perf.mk) points -luv to.
let smallDaemon: [LinkerSetting] =
    (levers["static"] == nil
        ? [] : [.unsafeFlags(["-static-executable", "-L", leverFile("static", "static-libs")], .when(configuration: .release))])
    + (levers["link-order"] == nil
        ? []
        : [
            .unsafeFlags(
                ["-Xlinker", "--section-ordering-file=" + leverFile("link-order", "link-order.txt")],
                .when(configuration: .release))
        ])

let package = Package(
    name: "snapback",
    products: [
        .executable(name: "snapbackd", targets: ["snapbackd"]),
        .executable(name: "snapback", targets: ["snapback"]),
        .executable(name: "snapback-sync", targets: ["snapback-sync"]),
        .executable(name: "snapback-web", targets: ["snapback-web"]),
        .executable(name: "snapback-fleet", targets: ["snapback-fleet"]),
        .library(name: "SnapbackTimeline", targets: ["SnapbackTimeline"])
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2")
    ],
    targets: [
        .systemLibrary(
            name: "CLibUV", path: "Sources/CLibUV", pkgConfig: "libuv",
            providers: [.apt(["libuv1-dev"])]),
        .systemLibrary(
            name: "CSQLite", path: "Sources/CSQLite", pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]),
        // The NATS C client, for the sync agent only (snapbackd links no network library).
        .systemLibrary(
            name: "CNats", path: "Sources/CNats", pkgConfig: "libnats",
            providers: [.apt(["libnats-dev"])]),
        .target(
            name: "CSnapbackProto",
            path: "Sources/CSnapbackProto",
            cSettings: protoSections,
            linkerSettings: [.linkedLibrary("protobuf-c")]
        ),
        // No I/O and no Foundation; `rounded()` needs libm.
        .target(
            name: "SnapbackTimeline", swiftSettings: hotPath + functionSections + profileGuided + freshObjects,
            linkerSettings: [.linkedLibrary("m")]),
        .target(
            name: "SnapbackWire", dependencies: ["CSnapbackProto", "SnapbackTimeline"],
            swiftSettings: hotPath + functionSections + profileGuided + freshObjects),
        .target(
            name: "SnapbackStore", dependencies: ["SnapbackTimeline", "CSQLite"],
            swiftSettings: functionSections + profileGuided + freshObjects),
        // The `key = value` reader of snapbackd.conf and sync.conf.
        .target(name: "SnapbackConfigFile", swiftSettings: functionSections + freshObjects),
        .target(
            name: "SnapbackDaemon",
            dependencies: ["CLibUV", "SnapbackWire", "SnapbackTimeline", "SnapbackStore", "SnapbackConfigFile"],
            swiftSettings: hotPath + functionSections + profileGuided + freshObjects
        ),
        .target(name: "SnapbackEmbedded", dependencies: ["SnapbackDaemon", "SnapbackWire"]),
        .target(name: "SnapbackClient", dependencies: ["SnapbackWire", "SnapbackTimeline", "CSnapbackProto"]),
        .target(
            name: "SnapbackFuzzing",
            dependencies: [
                "SnapbackWire", "SnapbackTimeline", "SnapbackDaemon", "SnapbackEmbedded", "SnapbackStore", "SnapbackJSON"
            ]),
        .executableTarget(
            name: "snapbackd", dependencies: ["SnapbackDaemon"],
            swiftSettings: functionSections + profileGuided + freshObjects, linkerSettings: smallDaemon),
        .executableTarget(name: "snapback-fuzz", dependencies: ["SnapbackFuzzing"]),
        .target(
            name: "SnapbackSync",
            dependencies: [
                "SnapbackClient", "SnapbackWire", "SnapbackTimeline", "SnapbackCLI", "SnapbackConfigFile", "CSQLite", "CNats",
                "CLinux"
            ]),
        .executableTarget(name: "snapback-sync", dependencies: ["SnapbackSync"]),
        // The fleet's aggregator: the boxes' telemetry stream (a durable JetStream consumer) summed into
        // SQLite, the totals written to a metrics store's import API through libcurl; the reports read in
        // place from their bytes (protobuf-c's unpack is the tests' reference).
        .target(
            name: "SnapbackFleet",
            dependencies: [
                "SnapbackSync", "SnapbackWire", "SnapbackStore", "SnapbackConfigFile", "CNats", "CSnapbackFetch", "CSQLite"
            ],
            swiftSettings: hotPath),
        .executableTarget(name: "snapback-fleet", dependencies: ["SnapbackFleet", "SnapbackSync"]),
        .executableTarget(name: "snapback-fuzz-fleet", dependencies: ["SnapbackFleet"]),
        .executableTarget(name: "snapback-fuzz-daemon", dependencies: ["SnapbackFuzzing"]),
        .executableTarget(name: "snapback-fuzz-json", dependencies: ["SnapbackFuzzing"]),
        // The web bridge: WebSocket framing, the upgrade and its checks, its configuration (no I/O), and
        // the process on the libuv shell that relays each page to snapbackd over a connection of its own.
        .target(name: "SnapbackWeb", dependencies: ["SnapbackDaemon", "SnapbackWire", "SnapbackConfigFile", "SnapbackJSON"]),
        .executableTarget(
            name: "snapback-web",
            dependencies: [
                "SnapbackWeb", "SnapbackDaemon", "SnapbackWire", "SnapbackConfigFile", "SnapbackJSON", "SnapbackCues", "CLibUV"
            ],
            exclude: ["snapback.js"]),
        .executableTarget(name: "snapback-fuzz-web", dependencies: ["SnapbackWeb"]),
        .executableTarget(
            name: "snapback",
            dependencies: [
                "SnapbackClient", "SnapbackWire", "SnapbackTimeline", "SnapbackCLI", "SnapbackCommandLine", "SnapbackJSON",
                "CSnapbackCues", "SnapbackCues", "CSnapbackFetch"
            ]),
        // libsnapback's break sources (HLS, DASH, VMAP, SCTE-35: the readers alone, without the client),
        // the very C the players link, for `snapback cues`; expat reads the XML.
        .target(
            name: "CSnapbackCues", path: "libsnapback",
            sources: ["src/cues.c", "src/cues_emsg.c", "src/cues_hls.c", "src/cues_xml.c", "src/scte35.c"],
            publicHeadersPath: "include",
            linkerSettings: [.linkedLibrary("expat"), .linkedLibrary("m")]),
        // A reader of those as Swift holds it, and what it holds as the protocol's JSON: for `snapback cues
        // --json` and the web bridge's `readCues`, one output for both.
        .target(name: "SnapbackCues", dependencies: ["CSnapbackCues", "SnapbackJSON", "SnapbackWire", "SnapbackTimeline"]),
        // A manifest from a file or an http(s) URL through libcurl (`snapback cues`, and the mpv plugin).
        .target(name: "CSnapbackFetch", path: "Sources/CSnapbackFetch", linkerSettings: [.linkedLibrary("curl")]),
        // Not installed. SnapbackDaemon, SnapbackEmbedded and SnapbackStore for `snapback-bench store`'s
        // in-process group-commit phase (the real service and store on a virtual clock); SnapbackFleet for
        // `snapback-bench fleet` (the aggregator's batch path, the daemon's catalog as the reports).
        .executableTarget(
            name: "snapback-bench",
            dependencies: [
                "SnapbackClient", "SnapbackWire", "SnapbackTimeline", "SnapbackCLI", "SnapbackCommandLine", "CLinux",
                "SnapbackDaemon", "SnapbackEmbedded", "SnapbackStore", "SnapbackFleet", "SnapbackSync",
                .product(name: "ArgumentParser", package: "swift-argument-parser")
            ]),
        // What snapback and snapback-bench share: one-write output, exit statuses, option checks, connecting
        // with a Hello, a push or event in a line; and snapback's command-line parser (commands declared as
        // tables: parsing, help, usage errors, shell completion scripts), with no Foundation.
        .target(name: "SnapbackCommandLine", dependencies: ["SnapbackClient", "SnapbackWire", "SnapbackTimeline", "SnapbackCLI"]),
        // Linux calls the benchmarks (epoll, CPU affinity) and the daemon's soak test (glibc's heap in use)
        // need that Swift's Glibc module leaves out, in C with their real types.
        .target(name: "CLinux", path: "Sources/CLinux"),
        // What the CLI draws and prints, as pure functions of replies (a session's timeline, JSON): a
        // library so that unit tests reach it without a daemon. No argument parsing, no I/O.
        .target(name: "SnapbackCLI", dependencies: ["SnapbackWire", "SnapbackTimeline", "SnapbackJSON"]),
        // Every message's proto3 JSON form, generated (scripts/gen-wire.py): for the CLI's --json and the
        // web bridge. snapbackd speaks no JSON and does not link it.
        .target(name: "SnapbackJSON", dependencies: ["SnapbackWire", "SnapbackTimeline", "CSnapbackProto"]),
        // Helpers the test suites share (a seeded generator); not part of any product.
        .target(name: "SnapbackTestSupport", path: "Tests/SnapbackTestSupport"),
        .testTarget(name: "SnapbackTimelineTests", dependencies: ["SnapbackTimeline", "SnapbackTestSupport"]),
        .testTarget(
            name: "SnapbackWireTests",
            dependencies: ["SnapbackWire", "CSnapbackProto", "SnapbackFuzzing", "SnapbackTestSupport", "SnapbackJSON"]),
        .testTarget(
            name: "SnapbackStoreTests", dependencies: ["SnapbackStore", "SnapbackTimeline", "CSQLite", "SnapbackTestSupport"]),
        .testTarget(
            name: "SnapbackSyncTests",
            dependencies: [
                "SnapbackSync", "SnapbackClient", "SnapbackWire", "SnapbackTimeline", "SnapbackConfigFile", "SnapbackTestSupport",
                "CSQLite"
            ]
        ),
        .testTarget(
            name: "SnapbackWebTests",
            dependencies: [
                "SnapbackWeb", "SnapbackDaemon", "SnapbackConfigFile", "SnapbackTestSupport", "SnapbackJSON", "SnapbackWire"
            ]
        ),
        .testTarget(
            name: "SnapbackFleetTests",
            dependencies: [
                "SnapbackFleet", "SnapbackWire", "CSnapbackProto", "SnapbackSync", "SnapbackStore", "SnapbackTestSupport"
            ]),
        .testTarget(
            name: "SnapbackCLITests",
            dependencies: ["SnapbackCLI", "SnapbackWire", "SnapbackTimeline", "SnapbackJSON", "SnapbackCommandLine"]),
        .testTarget(
            name: "SnapbackDaemonTests",
            dependencies: [
                "SnapbackClient", "SnapbackWire", "CSnapbackProto", "SnapbackDaemon", "SnapbackEmbedded", "SnapbackStore",
                "SnapbackFuzzing", "SnapbackTestSupport", "CLinux", "SnapbackSync", "SnapbackCLI", "SnapbackConfigFile"
            ]
        )
    ]
)
