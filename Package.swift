// swift-tools-version: 6.0
// snapback: the ad-timeline daemon for set-top boxes.
//
// Layout (core modules never import the shell):
//   SnapbackTimeline  pure state machine: events in, actions out, time passed in (no I/O, no Foundation)
//   CSnapbackProto    protoc-c output for proto/snapback/v1 (generated, committed; `make proto`)
//   SnapbackWire      frame codec and protobuf-c <-> Swift value mapping
//   SnapbackStore     bookmark and watched-state store interface and implementations
//   SnapbackDaemon    the libuv shell: loop executor, listener, connections, timers, signals
//   SnapbackEmbedded  EmbeddedPeer and ManualClock: the daemon's service in process, for the tests, the fuzzer
//                     and the benchmark (as NIOEmbedded is to NIO); no product ships it
//   SnapbackClient    a small blocking client used by the demo, the benchmarks and the tests
//   snapbackd         the daemon executable (only `main`)
//   snapback          the operator's command-line client: demo, status, queries, sessions, watch, bookmarks
//                     (swift-argument-parser: with snapback-bench, the only products with a package
//                     dependency; the daemon stays free of it)
//   snapback-bench    the benchmarks, apart from the installed client (`make bench`, `make check-budget`)
//   SnapbackFuzzing   bytes from a peer through decoder + mapping + timeline, for libFuzzer and the tests
//   snapback-fuzz     the libFuzzer entry point over decoder, request decoding and timeline
//   snapback-fuzz-daemon  the libFuzzer entry point over the whole service, in process
import PackageDescription

// The per-message path runs through these modules on the loop thread. Release builds drop the dynamic
// exclusivity checks there (`make check-budget`, measured when the guard came: 5,762 instructions per
// snapback round trip without the checks, 7,644 with them); debug builds, which the tests run, keep them.
let hotPath: [SwiftSetting] = [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))]

// The release daemon is small on the box (`make check-footprint`: idle RSS and binary size budgets). A page of
// code counts in the resident set once touched, and the kernel maps the 64 KiB around every page fault
// (fault-around), so what costs is the number of 64 KiB windows the start-up, the idle loop and the per-
// message path touch, not the bytes they run. Hence: one static executable (no libstdc++, libm, libuv,
// sqlite or protobuf-c shared object, each with its own windows and relocations; glibc's static NSS loads
// its modules from the system's glibc of the same version at run time, as `getgrnam_r` needs), every
// function of the daemon's modules in its own section, and the sections the daemon runs placed together
// in the order Sources/snapbackd/link-order.txt gives (`make link-order` writes it from a callgrind run).
// Measured on the release build: 10.0 MiB idle dynamically linked, 6.6 MiB static, see README.
let functionSections: [SwiftSetting] = [.unsafeFlags(["-Xfrontend", "-function-sections"], .when(configuration: .release))]
// The daemon's modules are optimised with the profile of a training run (`make profile` writes
// Sources/snapbackd/snapbackd.profdata from an instrumented build serving the benchmarks and the demo):
// LLVM lays each function's taken blocks together and the untaken ones after them, and inlines by
// hotness, so a request that comes cold reads fewer cache lines of code (`make check-budget` counts them:
// 418 without the profile, 342 with it; `snapback bench --spacing 5` went from 1.64-1.69 to 1.48-1.52).
// The sections keep their plain `.text.NAME` names (no `.hot.` prefix) so that the link order names them.
// `make profile` sets SNAPBACK_PROFILE_GENERATE for its instrumented build, which must not use the profile.
let profileGuided: [SwiftSetting] =
    Context.environment["SNAPBACK_PROFILE_GENERATE"] != nil
    ? []
    : [
        .unsafeFlags(
            [
                "-Xfrontend", "-ir-profile-use=" + Context.packageDirectory + "/Sources/snapbackd/snapbackd.profdata",
                "-Xllvm", "-profile-guided-section-prefix=false"
            ], .when(configuration: .release))
    ]
let smallDaemon: [LinkerSetting] = [
    .unsafeFlags(
        [
            "-static-executable",
            // Where `-luv` finds the archive (a linker script naming Debian's libuv_a.a).
            "-L", Context.packageDirectory + "/Sources/snapbackd/static-libs",
            "-Xlinker", "--section-ordering-file=" + Context.packageDirectory + "/Sources/snapbackd/link-order.txt"
        ], .when(configuration: .release))
]

let package = Package(
    name: "snapback",
    products: [
        .executable(name: "snapbackd", targets: ["snapbackd"]),
        .executable(name: "snapback", targets: ["snapback"]),
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
        .target(
            name: "CSnapbackProto",
            path: "Sources/CSnapbackProto",
            cSettings: [.unsafeFlags(["-ffunction-sections"], .when(configuration: .release))],
            linkerSettings: [.linkedLibrary("protobuf-c")]
        ),
        // No I/O and no Foundation; `rounded()` needs libm.
        .target(
            name: "SnapbackTimeline", swiftSettings: hotPath + functionSections + profileGuided,
            linkerSettings: [.linkedLibrary("m")]),
        .target(
            name: "SnapbackWire", dependencies: ["CSnapbackProto", "SnapbackTimeline"],
            swiftSettings: hotPath + functionSections + profileGuided),
        .target(
            name: "SnapbackStore", dependencies: ["SnapbackTimeline", "CSQLite"], swiftSettings: functionSections + profileGuided),
        .target(
            name: "SnapbackDaemon",
            dependencies: ["CLibUV", "SnapbackWire", "SnapbackTimeline", "SnapbackStore"],
            swiftSettings: hotPath + functionSections + profileGuided
        ),
        .target(name: "SnapbackEmbedded", dependencies: ["SnapbackDaemon", "SnapbackWire"]),
        .target(name: "SnapbackClient", dependencies: ["SnapbackWire", "SnapbackTimeline", "CSnapbackProto"]),
        .target(
            name: "SnapbackFuzzing",
            dependencies: ["SnapbackWire", "SnapbackTimeline", "SnapbackDaemon", "SnapbackEmbedded", "SnapbackStore"]),
        .executableTarget(
            name: "snapbackd", dependencies: ["SnapbackDaemon"],
            exclude: ["static-libs", "link-order.txt", "snapbackd.profdata"],
            swiftSettings: functionSections + profileGuided, linkerSettings: smallDaemon),
        .executableTarget(name: "snapback-fuzz", dependencies: ["SnapbackFuzzing"]),
        .executableTarget(name: "snapback-fuzz-daemon", dependencies: ["SnapbackFuzzing"]),
        .executableTarget(
            name: "snapback",
            dependencies: [
                "SnapbackClient", "SnapbackWire", "SnapbackTimeline", "SnapbackCLI", "SnapbackCommandLine",
                .product(name: "ArgumentParser", package: "swift-argument-parser")
            ]),
        // Not installed. SnapbackDaemon, SnapbackEmbedded and SnapbackStore for `snapback-bench store`'s
        // in-process group-commit phase (the real service and store on a virtual clock).
        .executableTarget(
            name: "snapback-bench",
            dependencies: [
                "SnapbackClient", "SnapbackWire", "SnapbackTimeline", "SnapbackCLI", "SnapbackCommandLine", "CLinux",
                "SnapbackDaemon", "SnapbackEmbedded", "SnapbackStore",
                .product(name: "ArgumentParser", package: "swift-argument-parser")
            ]),
        // What snapback and snapback-bench share: one-write output, exit statuses, option checks, connecting
        // with a Hello, a push or event in a line, and running a root command with the tool's exit statuses.
        .target(
            name: "SnapbackCommandLine",
            dependencies: [
                "SnapbackClient", "SnapbackWire", "SnapbackTimeline", "SnapbackCLI",
                .product(name: "ArgumentParser", package: "swift-argument-parser")
            ]),
        // Linux calls the benchmarks (epoll, CPU affinity) and the daemon's soak test (glibc's heap in use)
        // need that Swift's Glibc module leaves out, in C with their real types.
        .target(name: "CLinux", path: "Sources/CLinux"),
        // What the CLI draws and prints, as pure functions of replies (a session's timeline, JSON): a
        // library so that unit tests reach it without a daemon. No argument parsing, no I/O.
        .target(name: "SnapbackCLI", dependencies: ["SnapbackWire", "SnapbackTimeline"]),
        // Helpers the test suites share (a seeded generator); not part of any product.
        .target(name: "SnapbackTestSupport", path: "Tests/SnapbackTestSupport"),
        .testTarget(name: "SnapbackTimelineTests", dependencies: ["SnapbackTimeline", "SnapbackTestSupport"]),
        .testTarget(
            name: "SnapbackWireTests",
            dependencies: ["SnapbackWire", "CSnapbackProto", "SnapbackFuzzing", "SnapbackTestSupport"]),
        .testTarget(name: "SnapbackStoreTests", dependencies: ["SnapbackStore", "SnapbackTimeline", "CSQLite"]),
        .testTarget(name: "SnapbackCLITests", dependencies: ["SnapbackCLI", "SnapbackWire", "SnapbackTimeline"]),
        .testTarget(
            name: "SnapbackDaemonTests",
            dependencies: [
                "SnapbackClient", "SnapbackWire", "CSnapbackProto", "SnapbackDaemon", "SnapbackEmbedded", "SnapbackStore",
                "SnapbackFuzzing", "SnapbackTestSupport", "CLinux"
            ]
        )
    ]
)
