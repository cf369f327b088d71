#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Builds the package with the oldest Swift it supports (6.2, Debian sid's swiftlang) and runs its tests
# there: `make check-swift62`. The toolchain lives in a Debian tree made once by mmdebstrap and reused;
# the package is bind-mounted into it read-write (SwiftPM writes Package.resolved beside Package.swift) and
# built on a scratch path inside the tree, apart from the host's .build.
#
# Usage: check-swift62.sh PACKAGE_DIR [SUITES_REGEX]
# Environment: SWIFT62_ROOT (the tree; its packages are mk/packages.list's), SWIFT62_MIRROR (the Debian
# mirror), SWIFT62_DAEMON_TESTS=0 to leave out the daemon's socket tests.
set -euo pipefail

package=$(cd "${1:?package directory}" && pwd)
suites=${2:-'SnapbackTimelineTests|SnapbackWireTests|SnapbackStoreTests|SnapbackCLITests'}
root=${SWIFT62_ROOT:-/var/cache/snapback/swift62-sid}
mirror=${SWIFT62_MIRROR:-http://deb.debian.org/debian}
scratch=/var/tmp/snapback-swift62

# Where it cannot build and test with Swift 6.2, it fails, saying why.
fail() {
    echo "check-swift62: FAILED: $*" >&2
    exit 1
}

tool=check-swift62
. "$(dirname "$0")/debian-tree.sh"
[ "$(id -u)" = 0 ] || fail "making the tree in $root and building in it need root (mmdebstrap, chroot)"
debian_tree "$root" "$(dpkg --print-architecture)" sid "$(packages_of swift62)" "$mirror" SWIFT62_MIRROR

# Git redirections of the host's configuration apply in the tree too (debian-tree.sh).
git_redirections

# What runs in the tree: the plain builds (no SNAPBACK_PERF lever: debug, and the release daemon), the
# tests' build, the suites, then the daemon's socket tests against the snapbackd that 6.2 built.
inner=$(
    cat <<'EOF'
set -euo pipefail
cd "$PACKAGE"
NO_OVERLAYS="-Xswiftc -Xfrontend -Xswiftc -disable-cross-import-overlays"
swift --version
echo "check-swift62: swift build (plain)"
swift build --scratch-path "$SCRATCH/plain"
echo "check-swift62: swift build -c release --product snapbackd (plain)"
swift build --scratch-path "$SCRATCH/plain" -c release --product snapbackd
# Swift Testing's overlay for Foundation (_Testing_Foundation) is imported into every module that imports
# both, SwiftPM's generated test runner among them, and links its library, which Debian's 6.2 does not ship
# (only its module): the tests are built without cross-import overlays, which none of them uses. On a
# scratch path of their own: the flag applies to every module, and both builds stay incremental.
echo "check-swift62: swift build --build-tests $NO_OVERLAYS"
swift build --scratch-path "$SCRATCH/tests" --build-tests $NO_OVERLAYS
echo "check-swift62: swift test --filter '$SUITES'"
swift test --scratch-path "$SCRATCH/tests" --skip-build --filter "$SUITES"
if [ "$DAEMON_TESTS" != 0 ]; then
    echo "check-swift62: SnapbackDaemonTests against the plain snapbackd Swift 6.2 built"
    # BenchCommandTests need the uv echo, the C helper the host's make builds (make test runs them there).
    # MonthSoakTests measures the process's heap: alone in its process, as make test runs it.
    SNAPBACKD_BIN="$SCRATCH/plain/debug/snapbackd" swift test --scratch-path "$SCRATCH/tests" --skip-build \
        --parallel --filter SnapbackDaemonTests --skip BenchCommandTests --skip MonthSoakTests
    SNAPBACKD_BIN="$SCRATCH/plain/debug/snapbackd" swift test --scratch-path "$SCRATCH/tests" --skip-build \
        --filter MonthSoakTests
fi
EOF
)

start=$SECONDS
in_tree "$root" "$inner" "${git_env[@]}" PACKAGE="$package" SCRATCH="$scratch" SUITES="$suites" \
    DAEMON_TESTS="${SWIFT62_DAEMON_TESTS:-1}"
echo "check-swift62: passed in $((SECONDS - start)) s with swiftlang $(chroot "$root" dpkg-query -W -f='${Version}' swiftlang)"
