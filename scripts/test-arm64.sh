#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# snapback for aarch64, the set-top boxes' CPU: cross-compiled at native speed, tested under qemu-user.
#
#   test-arm64.sh cross PACKAGE_DIR DESTDIR   `make cross-arm64`: build, then install into DESTDIR as
#                                             `make install` lays it out (PREFIX, SYSCONFDIR from make)
#   test-arm64.sh test PACKAGE_DIR            `make test-arm64`: build, then run the tests on aarch64
#
# Two Debian sid trees, each made once by mmdebstrap and reused (debian-tree.sh): the amd64 one of `make
# check-swift62` (SWIFT62_ROOT), whose swiftlang 6.2 compiles, and an arm64 one (ARM64_ROOT), the
# sysroot it compiles against (the -dev packages, swiftlang's aarch64 runtime and modules) and where the
# aarch64 programs run, with what the tests run (python3 and its protobuf, systemd-socket-activate,
# setpriv, mount). Swift goes through a Swift SDK bundle the script writes (swift-sdk.json names the
# arm64 tree as sysroot, lld links); C through the Swift toolchain's clang with that sysroot alone. The
# package is bind-mounted at its own path in both trees, so that the paths compiled in (the tests'
# #filePath, the C tests' rpath) hold where the programs run. Outputs: .build-arm64 (Swift) and
# .build-c-arm64 (C) in the package.
#
# Environment: SWIFT62_ROOT, ARM64_ROOT (the trees), ARM64_MIRROR (the Debian mirror),
# ARM64_TIME_SCALE (how much longer the tests' wall-clock bounds are under emulation; default 10).
set -euo pipefail

mode=${1:?cross or test}
package=$(cd "${2:?package directory}" && pwd)
destdir=${3:-}
host_root=${SWIFT62_ROOT:-/var/cache/snapback/swift62-sid}
root=${ARM64_ROOT:-/var/cache/snapback/arm64-sid}
mirror=${ARM64_MIRROR:-http://deb.debian.org/debian}
time_scale=${ARM64_TIME_SCALE:-10}
scratch=$package/.build-arm64
c_build=.build-c-arm64
triple=aarch64-unknown-linux-gnu
sdk_name=snapback-debian-sid-aarch64
# The sysroot and the test run: the build's -dev packages (libnats: the sync agent), swiftlang (its
# aarch64 runtime, static runtime and modules) and libstdc++'s (the static Swift runtime links -lstdc++;
# sid's GCC is 16), GLib for the
# example player the C tests run, mpv's client header for the plugin, and what the tests run: python3
# and python3-protobuf (the Python client, the watchdog test's thread stopper), util-linux's setpriv and
# prlimit, mount (tmpfs for the store tests), systemd's systemd-socket-activate, nats-server and openssl
# (the sync agent's tests: a JetStream server, a TLS certificate authority).
packages=swiftlang,libuv1-dev,libprotobuf-c-dev,libsqlite3-dev,libnats-dev,libstdc++-16-dev,libglib2.0-dev,libmpv-dev
packages+=,python3,python3-protobuf,util-linux,mount,systemd,nats-server,openssl
tool=test-arm64
[ "$mode" = test ] || tool=cross-arm64

# The tests skip, saying why, where they cannot run; the cross build fails instead: a packaging that
# goes on after it would ship an empty DESTDIR.
skip() {
    if [ "$mode" = test ]; then
        echo "$tool: SKIPPED: $*" >&2
        exit 0
    fi
    echo "$tool: cannot build: $*" >&2
    exit 1
}

case $mode in
cross) [ -n "$destdir" ] || { echo "$tool: DESTDIR is required (the binaries are aarch64)" >&2; exit 2; } ;;
test) ;;
*) echo "usage: test-arm64.sh cross|test PACKAGE_DIR [DESTDIR]" >&2; exit 2 ;;
esac

start=$SECONDS
. "$(dirname "$0")/debian-tree.sh"
debian_tree "$host_root" "$(dpkg --print-architecture)" "$swift62_packages" "${SWIFT62_MIRROR:-$mirror}" SWIFT62_MIRROR
debian_tree "$root" arm64 "$packages" "$mirror" ARM64_MIRROR
[ "$(id -u)" = 0 ] || skip "the builds and the runs in the trees need root (chroot)"
command -v aarch64-linux-gnu-strip >/dev/null || skip "binutils-aarch64-linux-gnu is not installed (make $tool installs it)"
# clang --sysroot takes libc, its start files and GCC's from the arm64 tree alone. Debian's
# aarch64-linux-gnu-gcc searches its own cross glibc (bookworm's 2.36 on this host) before any sysroot:
# with sid's headers that mix linked the bench's static libuv echo with calls to __isoc23_sscanf, a
# symbol glibc 2.36 lacks, left at address 0 (a SIGSEGV at start under qemu).
clang=${ARM64_CC:-$(dirname "$(readlink -f "$(command -v "${SWIFT:-swift}")")")/clang}
[ -x "$clang" ] || skip "no clang beside swift (ARM64_CC names one)"

# aarch64 programs run through qemu-user, registered with binfmt_misc with the F flag: the kernel holds
# the emulator open, so it runs them inside a tree that does not have it.
if [ ! -e /proc/sys/fs/binfmt_misc/status ]; then
    mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc || true
fi
if [ ! -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ] && command -v update-binfmts >/dev/null; then
    update-binfmts --enable qemu-aarch64 || true
fi
grep -q '^flags:.*F' /proc/sys/fs/binfmt_misc/qemu-aarch64 2>/dev/null \
    || skip "qemu-user-static is not registered with binfmt_misc for aarch64 (make $tool installs it)"

# The Swift SDK: the arm64 tree as sysroot, its Swift resources where Debian installs them (usr/libexec,
# static runtime and swiftrt.o included), linked by the toolchain's lld (the amd64 tree's GNU ld knows
# only x86).
bundle=$scratch/sdks/$sdk_name.artifactbundle
mkdir -p "$bundle/sdk"
cat >"$bundle/info.json" <<EOF
{ "schemaVersion": "1.0",
  "artifacts": { "$sdk_name": { "type": "swiftSDK", "version": "1", "variants": [ { "path": "sdk" } ] } } }
EOF
cat >"$bundle/sdk/swift-sdk.json" <<EOF
{ "schemaVersion": "4.0",
  "targetTriples": { "$triple": {
    "sdkRootPath": "$root",
    "swiftResourcesPath": "$root/usr/libexec/swift/lib/swift",
    "swiftStaticResourcesPath": "$root/usr/libexec/swift/lib/swift_static",
    "toolsetPaths": [ "toolset.json" ] } } }
EOF
cat >"$bundle/sdk/toolset.json" <<EOF
{ "schemaVersion": "1.0", "swiftCompiler": { "extraCLIOptions": [ "-use-ld=lld" ] } }
EOF

git_redirections

# In the amd64 tree: the release products as `make release PERF_LEVERS=` builds them (static Swift
# runtime, no lever: the levers are x86-64 measurements, perf/README.md), side by side as the tests find
# them (snapback and snapback-bench beside snapbackd), and for `test` the tests' build (debug, as `make
# test` runs them; without cross-import overlays, as check-swift62.sh explains).
build=$(
    cat <<'EOF'
set -euo pipefail
cd "$PACKAGE"
sdk=(--swift-sdks-path "$SCRATCH/sdks" --swift-sdk "$SDK_NAME")
export PKG_CONFIG_PATH="$SYSROOT/usr/lib/aarch64-linux-gnu/pkgconfig:$SYSROOT/usr/share/pkgconfig"
export PKG_CONFIG_SYSROOT_DIR="$SYSROOT"
for product in snapbackd snapback snapback-sync snapback-bench; do
    echo "$TOOL: swift build -c release --static-swift-stdlib --product $product (aarch64)"
    swift build --scratch-path "$SCRATCH/products" "${sdk[@]}" -c release --static-swift-stdlib --product "$product" \
        -Xswiftc -nostartfiles -Xlinker "$SYSROOT/usr/libexec/swift/lib/swift_static/linux/aarch64/swiftrt.o"
done
if [ "$MODE" = test ]; then
    echo "$TOOL: swift build --build-tests (aarch64)"
    swift build --scratch-path "$SCRATCH/tests" "${sdk[@]}" --build-tests \
        -Xswiftc -Xfrontend -Xswiftc -disable-cross-import-overlays
fi
EOF
)

EXTRA_BINDS=$root in_tree "$host_root" "$build" "${git_env[@]}" PACKAGE="$package" SCRATCH="$scratch" \
    SDK_NAME="$sdk_name" SYSROOT="$root" MODE="$mode" TOOL="$tool"
products=$scratch/products/$triple/release

# C: libsnapback and the mpv plugin through libsnapback/build.mk's and the plugin's own rules, with clang
# for aarch64 and the arm64 tree's pkg-config files; `ar` and `strip` (the rules and `install -s` call
# them by name) are binutils' aarch64 ones.
mkdir -p "$scratch/bin"
for tool_name in ar strip; do ln -sf "$(command -v aarch64-linux-gnu-$tool_name)" "$scratch/bin/$tool_name"; done
export PATH="$scratch/bin:$PATH"
# -fuse-ld=lld goes on every command line, compiling only too.
cc="$clang --target=aarch64-linux-gnu --sysroot=$root -fuse-ld=lld -Wno-unused-command-line-argument"
cross_make=(make -C "$package" --no-print-directory CC="$cc" C_BUILD="$c_build")
export PKG_CONFIG_LIBDIR="$root/usr/lib/aarch64-linux-gnu/pkgconfig:$root/usr/share/pkgconfig"
export PKG_CONFIG_SYSROOT_DIR="$root"
# The aarch64 snapback that `make install` runs (it writes the completions) loads its libraries from there.
export QEMU_LD_PREFIX="$root"
echo "$tool: libsnapback and the mpv plugin (clang --target=aarch64-linux-gnu)"
"${cross_make[@]}" lib mpv-plugin

if [ "$mode" = cross ]; then
    # `make install`'s rules, and the mpv plugin's (`make deb` packages it), with the aarch64 outputs: the
    # release build is the one above (-o release).
    "${cross_make[@]}" -o release install install-mpv-plugin DESTDIR="$destdir" RELEASE_BIN="$products" \
        ${PREFIX:+PREFIX="$PREFIX"} ${SYSCONFDIR:+SYSCONFDIR="$SYSCONFDIR"}
    echo "$tool: installed into $destdir in $((SECONDS - start)) s"
    exit 0
fi

# The C tests' programs and the bench's libuv echo (BenchCommandTests), for aarch64.
"${cross_make[@]}" "$c_build/release/test_client" "$c_build/release/player_poll" "$c_build/release/player_glib"
$cc -std=gnu11 -Wall -Wextra -Werror -O2 -o "$package/$c_build/release/snapback-uv-echo" \
    "$package/bench/uv-echo/snapback-uv-echo.c" -static -luv -Wl,--no-warnings
echo "$tool: built in $((SECONDS - start)) s"

# In the arm64 tree, under qemu: the Swift suites (the daemon's socket tests against the aarch64 release
# snapbackd; MonthSoakTests alone in its process, as `make test` runs it: it checks the process's heap),
# the Python client, libsnapback's C tests.
run=$(
    cat <<'EOF'
set -uo pipefail
cd "$PACKAGE"
tests="$SCRATCH/tests/$TRIPLE/debug/snapbackPackageTests.xctest"
failed=()
# The tests' Swift runtime is the tree's (their rpath names it where the build saw the tree).
swift_tests() {
    LD_LIBRARY_PATH=/usr/libexec/swift/lib/swift/linux SNAPBACKD_BIN="$PRODUCTS/snapbackd" \
        SNAPBACK_UV_ECHO="$PACKAGE/$C_BUILD/release/snapback-uv-echo" SNAPBACK_TEST_TIME_SCALE="$TIME_SCALE" \
        "$tests" --testing-library swift-testing "$@"
}
uname -m
echo "$TOOL: swift-testing suites (aarch64, SNAPBACK_TEST_TIME_SCALE=$TIME_SCALE)"
# What the emulator cannot do, found by running them (qemu-user 7.2, Debian 12's): ptrace, with which
# the watchdog test stops the daemon's loop thread from outside (ENOSYS); SO_PEERGROUPS, which it treats
# as an int option (ERANGE for any real group list), so the daemon sees no supplementary group.
echo "$TOOL: SKIPPED SystemdIntegrationTests/watchdogPingsEveryHalfIntervalAndStopWhileTheLoopStalls: qemu-user has no ptrace"
echo "$TOOL: SKIPPED AccessControlTests/allowedUidsAndGroupsPrimaryOrSupplementaryAreServed: qemu-user fails SO_PEERGROUPS"
swift_tests --parallel --skip MonthSoakTests --skip watchdogPingsEveryHalfIntervalAndStopWhileTheLoopStalls \
    --skip allowedUidsAndGroupsPrimaryOrSupplementaryAreServed || failed+=("Swift tests")
swift_tests --filter MonthSoakTests || failed+=(MonthSoakTests)
echo "$TOOL: Python client"
python3 Tests/clients/python/test_snapback_client.py "$PRODUCTS/snapbackd" || failed+=("Python client")
echo "$TOOL: libsnapback C tests"
libsnapback/tests/run.sh "$PACKAGE/$C_BUILD/release" "$PRODUCTS/snapbackd" || failed+=("libsnapback")
if [ ${#failed[@]} -gt 0 ]; then
    echo "$TOOL: FAILED: ${failed[*]}" >&2
    exit 1
fi
EOF
)
status=0
in_tree "$root" "$run" PACKAGE="$package" SCRATCH="$scratch" TRIPLE="$triple" PRODUCTS="$products" \
    C_BUILD="$c_build" TIME_SCALE="$time_scale" TOOL="$tool" || status=$?

# What `make test` runs that does not run here, and why.
cat <<EOF
$tool: not run under emulation:
  check-budget: callgrind's instruction, allocation and code-page budgets are x86-64 figures of the levered release daemon
  check-footprint: qemu's own memory is in the emulated daemon's RSS (the stripped sizes are below)
  check-systemd: systemd-analyze verify/security judge the unit files, which are the same on every architecture
  test-gstreamer, test-mpv: their players (GStreamer, mpv) are not in the arm64 tree; the mpv plugin is built
  libsnapback under ASan+UBSan: the plain library and its tests run here
EOF
size_of() { aarch64-linux-gnu-strip -o "$scratch/stripped" "$1" && echo "$(($(stat -c %s "$scratch/stripped") / 1024)) KiB"; }
echo "$tool: stripped aarch64 sizes: snapbackd $(size_of "$products/snapbackd"), snapback $(size_of "$products/snapback")," \
    "libsnapback.so $(size_of "$(readlink -f "$package/$c_build/release/libsnapback.so")"), mpv plugin $(size_of "$package/$c_build/mpv/snapback.so")"
if [ "$status" = 0 ]; then
    echo "$tool: passed in $((SECONDS - start)) s"
else
    echo "$tool: FAILED after $((SECONDS - start)) s" >&2
fi
exit "$status"
