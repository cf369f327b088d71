#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Debian binary packages from a staged install tree:
#
#   scripts/build-deb.sh --stage DIR --arch ARCH --out DIR --version VERSION [--revision N]
#                        [--sysroot DIR] [--suite SUITE]
#
# DIR is a DESTDIR tree as `make install PREFIX=/usr` lays it out, plus the plugins'
# `make install-mpv-plugin` (and, when present, `make install-gst-plugin`) with the same PREFIX and DESTDIR:
# the packages are built from that tree alone, whatever built it (a native build or the aarch64 cross
# build), so every architecture goes through this same code. The packaging's own files are in
# packaging/deb/ (control, .install lists, maintainer script, symbols file, lintian overrides).
#
# Where Debian's layout differs from the install's, the tree is moved, not rebuilt: libsnapback and the
# GStreamer plugin into the multiarch directory (the .pc's libdir with them), the units into /lib/systemd/system
# (bookworm's place for packaged units), the zsh completion into vendor-completions (where Debian's zsh looks).
#
# Depends come from dpkg-shlibdeps (dh_shlibdeps). For ARCH other than the build machine's, the shared
# libraries the binaries need and the symbols files that give their minimum versions are those of SYSROOT,
# a Debian tree of ARCH (the cross build's sysroot, or any tree with the libraries installed): they are
# handed to dpkg-shlibdeps as a package build tree (-S), which it reads the same way as an installed package.
# Built-Using (the daemon is one static executable, with the GNU C Library's LGPL code in it) names the
# source packages, with their versions in SYSROOT's dpkg database, of the static archives it was linked from.
set -eu
export LC_ALL=C

repo=$(cd "$(dirname "$0")/.." && pwd)
stage="" arch="" out="" version="" revision=1 sysroot=/ suite=bookworm
while [ $# -gt 0 ]; do
    case $1 in
        --stage) stage=$2 ;;
        --arch) arch=$2 ;;
        --out) out=$2 ;;
        --version) version=$2 ;;
        --revision) revision=$2 ;;
        --sysroot) sysroot=$2 ;;
        --suite) suite=$2 ;;
        *) echo "build-deb: unknown argument $1" >&2; exit 2 ;;
    esac
    shift 2
done
fail() { echo "build-deb: $*" >&2; exit 1; }
[ -n "$stage" ] && [ -n "$arch" ] && [ -n "$out" ] && [ -n "$version" ] || fail "usage: see the head of $0"
stage=$(cd "$stage" && pwd) || fail "no staged tree $stage"
sysroot=$(cd "$sysroot" && pwd)
mkdir -p "$out" && out=$(cd "$out" && pwd)
for f in usr/bin/snapbackd usr/bin/snapback usr/lib/libsnapback.so.0 usr/lib/mpv-snapback/snapback.so \
    etc/snapback/snapbackd.conf usr/lib/systemd/system/snapbackd.service; do
    [ -e "$stage/$f" ] || [ -L "$stage/$f" ] || fail "$stage has no $f (make install PREFIX=/usr and install-mpv-plugin into it)"
done
grep -qx 'ExecStart=/usr/bin/snapbackd .*' "$stage/usr/lib/systemd/system/snapbackd.service" \
    || fail "the staged unit's ExecStart= is not /usr/bin/snapbackd: stage with PREFIX=/usr"

eval "$(dpkg-architecture -a"$arch" -s 2>/dev/null)"
export DEB_HOST_ARCH DEB_HOST_MULTIARCH DEB_HOST_GNU_TYPE DEB_BUILD_ARCH
ma=$DEB_HOST_MULTIARCH
# The ELF machine each architecture's binaries must be: a tree staged for another one is refused.
case $arch in
    amd64) machine="Advanced Micro Devices X86-64" ;;
    arm64) machine="AArch64" ;;
    *) fail "ARCH $arch: only amd64 and arm64 are packaged" ;;
esac
for f in usr/bin/snapbackd usr/bin/snapback usr/lib/mpv-snapback/snapback.so; do
    readelf -h "$stage/$f" | grep -q "Machine: *$machine" || fail "$f in $stage is not an $arch binary"
done

work=$(mktemp -d "${TMPDIR:-/tmp}/snapback-deb.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir "$work/debian"
cp -a "$repo/packaging/deb/." "$work/debian/"
rm -f "$work/debian/gstreamer.control" "$work/debian/sync.control" "$work/debian/fleet.control" \
    "$work/debian/50-snapback-sync.conf"
tmp="$work/debian/tmp"
cp -a "$stage" "$tmp"

# Debian's layout (see the head of this file).
mkdir -p "$tmp/usr/lib/$ma" "$tmp/lib/systemd"
mv "$tmp"/usr/lib/libsnapback.* "$tmp/usr/lib/pkgconfig" "$tmp/usr/lib/$ma/"
sed -i "s#^libdir=.*#libdir=/usr/lib/$ma#" "$tmp/usr/lib/$ma/pkgconfig/libsnapback.pc"
mv "$tmp/usr/lib/systemd/system" "$tmp/lib/systemd/system"
rmdir "$tmp/usr/lib/systemd"
mkdir -p "$tmp/usr/share/zsh/vendor-completions"
mv "$tmp/usr/share/zsh/site-functions/_snapback" "$tmp/usr/share/zsh/vendor-completions/"
rmdir "$tmp/usr/share/zsh/site-functions"
# A completion is sourced, never run: the generated bash one's #! line goes.
sed -i '1{/^#!/d}' "$tmp/usr/share/bash-completion/completions/snapback"
if [ -e "$tmp/usr/bin/snapback-sync" ]; then
    cat "$repo/packaging/deb/sync.control" >>"$work/debian/control"
    # The package's drop-in: snapbackd serves the agent's Sync calls (snapback-sync(8)).
    install -D -m 0644 "$repo/packaging/deb/50-snapback-sync.conf" \
        "$tmp/etc/snapback/snapbackd.conf.d/50-snapback-sync.conf"
else
    echo "build-deb: no snapback-sync in $stage (the build had no libnats): snapback-sync is not built"
    rm -f "$work/debian"/snapback-sync.*
fi
# The fleet's aggregator, a package of its own: it runs on the operator's hub, not on a box.
if [ -e "$tmp/usr/bin/snapback-fleet" ]; then
    cat "$repo/packaging/deb/fleet.control" >>"$work/debian/control"
else
    echo "build-deb: no snapback-fleet in $stage (the build had no libnats): snapback-fleet is not built"
    rm -f "$work/debian"/snapback-fleet.*
    rm -f "$tmp/usr/lib/sysusers.d/snapback-fleet.conf" "$tmp/lib/systemd/system/snapback-fleet.service" \
        "$tmp/etc/snapback/fleet.conf" "$tmp/usr/share/man/man8/snapback-fleet.8"
fi
# snapbackd(8) names where the units and the sysusers file are.
sed -i 's#/usr/lib/systemd/system#/lib/systemd/system#' "$tmp/usr/share/man/man8/snapbackd.8"
if [ -e "$tmp/usr/lib/gstreamer-1.0/libgstsnapback.so" ]; then
    mv "$tmp/usr/lib/gstreamer-1.0" "$tmp/usr/lib/$ma/"
    cat "$repo/packaging/deb/gstreamer.control" >>"$work/debian/control"
else
    echo "build-deb: no GStreamer plugin in $stage (make install-gst-plugin): gstreamer1.0-snapback is not built"
    rm -f "$work/debian"/gstreamer1.0-snapback.*
fi

# One entry: this build, from the project's version.
commit=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)
date=$(git -C "$repo" log -1 --format=%aD 2>/dev/null || date -R)
SOURCE_DATE_EPOCH=$(git -C "$repo" log -1 --format=%at 2>/dev/null || date +%s)
export SOURCE_DATE_EPOCH
maintainer=$(sed -n 's/^Maintainer: //p' "$work/debian/control")
cat >"$work/debian/changelog" <<EOF
snapback ($version-$revision) $suite; urgency=medium

  * snapback $version, built from commit $commit.

 -- $maintainer  $date
EOF

# Built-Using of a static daemon: the packages of the static archives it links (a plain build's daemon,
# dynamically linked, has none: dh_shlibdeps gives its Depends).
admindir="$sysroot/var/lib/dpkg"
built_using=""
if ! readelf -d "$tmp/usr/bin/snapbackd" | grep -q NEEDED; then
    static_from=""
    for archive in "/usr/lib/$ma/libc.a" "/usr/lib/$ma/libuv*.a" "/usr/lib/$ma/libsqlite3.a" \
        "/usr/lib/$ma/libprotobuf-c.a" "/usr/lib/gcc/$DEB_HOST_GNU_TYPE/*/libstdc++.a" \
        "/usr/lib/gcc/$DEB_HOST_GNU_TYPE/*/libgcc.a"; do
        pkgs=$(dpkg-query --admindir="$admindir" -S "$archive" 2>/dev/null | sed 's/: .*//; s/, /\n/g')
        [ -n "$pkgs" ] || fail "no package of $sysroot has $archive, which the static snapbackd links"
        static_from="$static_from $pkgs"
    done
    # shellcheck disable=SC2086
    built_using=$(dpkg-query --admindir="$admindir" -W -f '${source:Package} (= ${source:Version})\n' $static_from |
        sort -u | paste -sd, | sed 's/,/, /g')
else
    sed -i '/^# snapbackd is one static executable/,/statically-linked-binary/d' "$work/debian/snapbackd.lintian-overrides"
fi
# shlibs:Depends stays empty for the static daemon (dh_shlibdeps sets it for a dynamic one).
printf "shlibs:Depends=\nsnapback:Built-Using=%s\n" "$built_using" >"$work/debian/snapbackd.substvars"

# For another architecture, SYSROOT's libraries and symbols files as a package build tree.
shlibdeps_args=""
if [ "$arch" != "$(dpkg --print-architecture)" ]; then
    command -v "$DEB_HOST_GNU_TYPE-objdump" >/dev/null || fail "$DEB_HOST_GNU_TYPE-objdump is missing (binutils-$DEB_HOST_GNU_TYPE)"
    [ -d "$sysroot/usr/lib/$ma" ] || fail "--sysroot $sysroot is not a Debian tree of $arch"
    libs="$work/sysroot-libs"
    mkdir -p "$libs/DEBIAN"
    ln -s "$sysroot/usr" "$libs/usr"
    ln -s "$sysroot/lib" "$libs/lib"
    cat "$admindir"/info/*.symbols >"$libs/DEBIAN/symbols"
    cat "$admindir"/info/*.shlibs >"$libs/DEBIAN/shlibs" 2>/dev/null || : >"$libs/DEBIAN/shlibs"
    shlibdeps_args="-S$libs"
fi

cd "$work"
dh_testdir
dh_installdirs
dh_install --sourcedir=debian/tmp
dh_missing --fail-missing --sourcedir=debian/tmp
dh_installdocs
dh_installchangelogs
# The group of the socket first, then the units that name it: the sysusers snippet runs before the socket
# starts. Every unit of the package is enabled and started but snapbackd.service: it starts at the first
# connection to its socket, and as it Requires= the socket, stopping the socket at removal stops it and
# restarting the socket at an upgrade restarts it if it runs.
dh_installsysusers
dh_installsystemd -psnapbackd -Xsnapbackd.service
# The agent is enabled and started too; its unit's ConditionPathExists= keeps it from running until the
# operator writes /etc/snapback/sync.conf.
if [ -e "$tmp/usr/bin/snapback-sync" ]; then dh_installsystemd -psnapback-sync; fi
# The bridge as the daemon: its sockets enabled and started, its service started by the first page.
dh_installsystemd -psnapback-web -Xsnapback-web.service
# The aggregator enabled and started: it reads the installed /etc/snapback/fleet.conf (the hub's NATS).
if [ -e "$tmp/usr/bin/snapback-fleet" ]; then dh_installsystemd -psnapback-fleet; fi
dh_lintian
dh_link
dh_compress
dh_fixperms
# The install stripped the symbols; this drops the .comment and .note sections and the static library's
# debug information too. No -dbgsym packages: the staged binaries carry no debug information to ship.
dh_strip --no-automatic-dbgsym
# Any difference between the library's exports and debian/libsnapback0.symbols fails the build.
dh_makeshlibs -- -c4
# shellcheck disable=SC2086
dh_shlibdeps -- $shlibdeps_args
dh_installdeb
dh_gencontrol
dh_md5sums
dh_builddeb --destdir="$out"
for p in $(dh_listpackages); do echo "build-deb: $out/${p}_$version-${revision}_$arch.deb"; done
