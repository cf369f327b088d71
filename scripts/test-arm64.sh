#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# snapback for aarch64, the set-top boxes' CPU: cross-compiled at native speed, tested under qemu-user.
#
#   test-arm64.sh cross PACKAGE_DIR DESTDIR   `make cross-arm64`: build for Debian 12, then install into
#                                             DESTDIR as `make install` lays it out (PREFIX, SYSCONFDIR
#                                             from make)
#   test-arm64.sh test PACKAGE_DIR            `make test-arm64`: build, then run the tests on aarch64
#
# Debian trees, each made once by mmdebstrap and reused (debian-tree.sh), their package lists
# mk/packages.list's: the amd64 sid one of `make check-swift62` (SWIFT62_ROOT), whose swiftlang 6.2
# compiles; an arm64 sid one (ARM64_ROOT), the sysroot the tests' build compiles against (the -dev
# packages, swiftlang's aarch64 runtime and modules) and where the aarch64 programs run, with what the
# tests run; and for `cross` an arm64 Debian 12 one (ARM64_SYSROOT), the sysroot of what is installed
# (and packaged: boxes run a Debian release), with only the -dev packages. Swift goes through a Swift SDK
# bundle the script writes (swift-sdk.json names the sysroot, lld links); C through the Swift toolchain's
# clang with that sysroot alone. The package is bind-mounted at its own path in the trees, so that the
# paths compiled in (the tests' #filePath, the C tests' rpath) hold where the programs run. Outputs:
# .build-arm64 (Swift) and .build-c-arm64 (C; .build-c-arm64-bookworm for `cross`) in the package.
#
# sid's aarch64 Swift runtime is the only one to be had, and its static libraries call a few functions
# of glibc 2.38 and later: for Debian 12 (glibc 2.36) the products link packaging/glibc-compat.c, which
# defines them (its head says how and why that is sound).
#
# Environment: SWIFT62_ROOT, ARM64_ROOT, ARM64_SYSROOT (the trees), ARM64_MIRROR (the Debian mirror),
# ARM64_TIME_SCALE (how much longer the tests' wall-clock bounds are under emulation; default 10).
set -euo pipefail

mode=${1:?cross or test}
package=$(cd "${2:?package directory}" && pwd)
destdir=${3:-}
host_root=${SWIFT62_ROOT:-/var/cache/snapback/swift62-sid}
root=${ARM64_ROOT:-/var/cache/snapback/arm64-sid}
sysroot=${ARM64_SYSROOT:-/var/cache/snapback/arm64-bookworm}
mirror=${ARM64_MIRROR:-http://deb.debian.org/debian}
time_scale=${ARM64_TIME_SCALE:-10}
scratch=$package/.build-arm64
c_build=.build-c-arm64
triple=aarch64-unknown-linux-gnu
sdk_name=snapback-debian-sid-aarch64
tool=test-arm64
[ "$mode" = test ] || tool=cross-arm64

# Where it cannot do what its name says, it fails, saying why.
fail() {
    echo "$tool: FAILED: cannot $mode: $*" >&2
    exit 1
}

case $mode in
cross) [ -n "$destdir" ] || { echo "$tool: DESTDIR is required (the binaries are aarch64)" >&2; exit 2; } ;;
test) ;;
*) echo "usage: test-arm64.sh cross|test PACKAGE_DIR [DESTDIR]" >&2; exit 2 ;;
esac

start=$SECONDS
. "$(dirname "$0")/debian-tree.sh"
[ "$(id -u)" = 0 ] || fail "the trees, the builds and the runs in them need root (mmdebstrap, chroot)"
command -v aarch64-linux-gnu-strip >/dev/null || fail "aarch64-linux-gnu-strip is missing: binutils-aarch64-linux-gnu is not installed (make $tool installs it)"
# aarch64 programs run through qemu-user, registered with binfmt_misc with the F flag: mmdebstrap needs
# that to make the arm64 trees, the tests to run in them.
"$(dirname "$0")/qemu-binfmt.sh" arm64 || fail "aarch64 programs cannot run here (above)"
debian_tree "$host_root" "$(dpkg --print-architecture)" sid "$(packages_of swift62)" "${SWIFT62_MIRROR:-$mirror}" SWIFT62_MIRROR
debian_tree "$root" arm64 sid "$(packages_of arm64)" "$mirror" ARM64_MIRROR
if [ "$mode" = cross ]; then
    debian_tree "$sysroot" arm64 bookworm "$(packages_of bookworm)" "$mirror" ARM64_MIRROR
    sysroot_links "$sysroot"
else
    sysroot=$root
fi
# clang --sysroot takes libc, its start files and GCC's from the sysroot alone. Debian's
# aarch64-linux-gnu-gcc searches its own cross glibc (bookworm's 2.36 on this host) before any sysroot:
# with sid's headers that mix linked the bench's static libuv echo with calls to __isoc23_sscanf, a
# symbol glibc 2.36 lacks, left at address 0 (a SIGSEGV at start under qemu).
clang=${ARM64_CC:-$(dirname "$(readlink -f "$(command -v "${SWIFT:-swift}")")")/clang}
[ -x "$clang" ] || fail "no clang beside swift (ARM64_CC names one)"
# -fuse-ld=lld goes on every command line, compiling only too. What is installed is built with Debian's
# hardening flags, as `make deb` builds the amd64 packages' C.
cc="$clang --target=aarch64-linux-gnu --sysroot=$sysroot -fuse-ld=lld -Wno-unused-command-line-argument"
if [ "$mode" = cross ]; then
    for flags in CPPFLAGS CFLAGS LDFLAGS; do
        cc+=" $(DEB_HOST_ARCH=arm64 DEB_BUILD_MAINT_OPTIONS=hardening=+all dpkg-buildflags --get $flags)"
    done
    c_build=$c_build-bookworm
fi

# The Swift SDK: the sysroot, the arm64 sid tree's Swift resources where Debian installs them
# (usr/libexec, static runtime and swiftrt.o included), linked by the toolchain's lld (the amd64 tree's
# GNU ld knows only x86).
[ "$mode" = test ] || sdk_name=snapback-debian-bookworm-aarch64
bundle=$scratch/sdks/$sdk_name.artifactbundle
mkdir -p "$bundle/sdk"
cat >"$bundle/info.json" <<EOF
{ "schemaVersion": "1.0",
  "artifacts": { "$sdk_name": { "type": "swiftSDK", "version": "1", "variants": [ { "path": "sdk" } ] } } }
EOF
cat >"$bundle/sdk/swift-sdk.json" <<EOF
{ "schemaVersion": "4.0",
  "targetTriples": { "$triple": {
    "sdkRootPath": "$sysroot",
    "swiftResourcesPath": "$root/usr/libexec/swift/lib/swift",
    "swiftStaticResourcesPath": "$root/usr/libexec/swift/lib/swift_static",
    "toolsetPaths": [ "toolset.json" ] } } }
EOF
cat >"$bundle/sdk/toolset.json" <<EOF
{ "schemaVersion": "1.0", "swiftCompiler": { "extraCLIOptions": [ "-use-ld=lld" ] } }
EOF

git_redirections

# For Debian 12: the functions of glibc 2.38 and later that the Swift runtime calls, tested first on
# aarch64 against the sysroot's glibc.
link_extra=()
if [ "$mode" = cross ]; then
    $cc -O2 -fPIC -c -o "$scratch/glibc-compat.o" "$package/packaging/glibc-compat.c"
    $cc -O2 -o "$scratch/test_glibc_compat" "$package/packaging/tests/test_glibc_compat.c" "$scratch/glibc-compat.o"
    QEMU_LD_PREFIX=$sysroot "$scratch/test_glibc_compat" || fail "packaging/glibc-compat.c fails its test (above)"
    link_extra=(-Xlinker "$scratch/glibc-compat.o")
fi

# In the amd64 tree: the release products as `make release PERF_LEVERS=` builds them (static Swift
# runtime, no lever: the levers are x86-64 measurements, perf/README.md), side by side as the tests find
# them (for `test`, snapback-bench too beside snapbackd), and for `test` the tests' build (debug, as
# `make test` runs them; without cross-import overlays, as check-swift62.sh explains).
build=$(
    cat <<'EOF'
set -euo pipefail
cd "$PACKAGE"
sdk=(--swift-sdks-path "$SCRATCH/sdks" --swift-sdk "$SDK_NAME")
export PKG_CONFIG_PATH="$SYSROOT/usr/lib/aarch64-linux-gnu/pkgconfig:$SYSROOT/usr/share/pkgconfig"
export PKG_CONFIG_SYSROOT_DIR="$SYSROOT"
products=(snapbackd snapback snapback-sync snapback-web snapback-fleet)
[ "$MODE" != test ] || products+=(snapback-bench)
for product in "${products[@]}"; do
    echo "$TOOL: swift build -c release --static-swift-stdlib --product $product (aarch64, $SYSROOT)"
    swift build --scratch-path "$PRODUCTS" "${sdk[@]}" -c release --static-swift-stdlib --product "$product" \
        -Xswiftc -nostartfiles -Xlinker "$RUNTIME/usr/libexec/swift/lib/swift_static/linux/aarch64/swiftrt.o" $LINK_EXTRA
done
if [ "$MODE" = test ]; then
    echo "$TOOL: swift build --build-tests (aarch64)"
    swift build --scratch-path "$SCRATCH/tests" "${sdk[@]}" --build-tests \
        -Xswiftc -Xfrontend -Xswiftc -disable-cross-import-overlays
fi
EOF
)

products_scratch=$scratch/products
[ "$mode" = test ] || products_scratch=$scratch/products-bookworm
EXTRA_BINDS="$root $sysroot" in_tree "$host_root" "$build" "${git_env[@]}" PACKAGE="$package" SCRATCH="$scratch" \
    SDK_NAME="$sdk_name" SYSROOT="$sysroot" RUNTIME="$root" PRODUCTS="$products_scratch" MODE="$mode" TOOL="$tool" \
    LINK_EXTRA="${link_extra[*]}"
products=$products_scratch/$triple/release

# C: libsnapback and the mpv plugin through libsnapback/build.mk's and the plugin's own rules, with clang
# for aarch64 and the sysroot's pkg-config files; `ar` and `strip` (the rules and `install -s` call
# them by name) are binutils' aarch64 ones.
mkdir -p "$scratch/bin"
for tool_name in ar strip; do ln -sf "$(command -v aarch64-linux-gnu-$tool_name)" "$scratch/bin/$tool_name"; done
export PATH="$scratch/bin:$PATH"
cross_make=(make -C "$package" --no-print-directory CC="$cc" C_BUILD="$c_build")
export PKG_CONFIG_LIBDIR="$sysroot/usr/lib/aarch64-linux-gnu/pkgconfig:$sysroot/usr/share/pkgconfig"
export PKG_CONFIG_SYSROOT_DIR="$sysroot"
# The aarch64 snapback that `make install` runs (it writes the completions) loads its libraries from there.
export QEMU_LD_PREFIX="$sysroot"
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
"${cross_make[@]}" c-test-programs
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
