#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The packages `make deb` built, checked as a box would get them (`make check-deb` runs it):
#
#   scripts/check-deb.sh --debs DIR --arch ARCH --suite SUITE --version VERSION --cache DIR --mirror MIRROR
#
# 1. lintian: no error and no warning on any package (each override is explained in packaging/deb/);
#    every package has VERSION.
# 2. A clean Debian SUITE tree of ARCH (mmdebstrap --variant=apt: only the Essential packages and apt),
#    made once from MIRROR (the sources apt uses here) under CACHE/deb-SUITE-ARCH and reused: each run
#    works on an overlay of it, so the cached tree stays clean. Another architecture runs there under
#    qemu-user (scripts/qemu-binfmt.sh sets it up).
# 3. In it, scripts/check-deb-chroot.sh: `apt install ./…deb`, the daemon's checks and a run of `snapback
#    demo` against it, then dpkg -r and --purge and what they leave behind.
set -eu
export LC_ALL=C

repo=$(cd "$(dirname "$0")/.." && pwd)
debs="" arch="" suite="" version="" cache="" mirror=""
while [ $# -gt 0 ]; do
    case $1 in
        --debs) debs=$2 ;;
        --arch) arch=$2 ;;
        --suite) suite=$2 ;;
        --version) version=$2 ;;
        --cache) cache=$2 ;;
        --mirror) mirror=$2 ;;
        *) echo "check-deb: unknown argument $1" >&2; exit 2 ;;
    esac
    shift 2
done
fail() { echo "check-deb: FAIL $*" >&2; exit 1; }
[ -n "$debs" ] && [ -n "$arch" ] && [ -n "$suite" ] && [ -n "$version" ] && [ -n "$cache" ] && [ -n "$mirror" ] \
    || fail "usage: see the head of $0"
debs=$(cd "$debs" && pwd)
started=$(date +%s)
if [ "$(id -u)" != 0 ]; then
    exec "$repo/scripts/cannot-run.sh" check-deb "the clean tree (mmdebstrap, chroot, mounts) needs root"
fi

set -- "$debs"/*_"$arch".deb
[ -e "$1" ] || fail "no ${arch} package in $debs"
for deb in "$@"; do
    [ "$(dpkg-deb -f "$deb" Version)" = "$version" ] || fail "$(basename "$deb") is not version $version"
done
echo "check-deb: lintian $(echo "$@" | wc -w) packages"
lintian --fail-on error,warning "$@" 2>&1 | grep -v '^running with root privileges' || :
lintian --fail-on error,warning "$@" >/dev/null 2>&1 || fail "lintian reports errors or warnings"
echo "check-deb: ok   lintian: no error, no warning"

# Another architecture's programs run under qemu-user through binfmt_misc.
"$repo/scripts/qemu-binfmt.sh" "$arch" || fail "the $arch tree's programs cannot run here (above)"

base="$cache/deb-$suite-$arch"
# A sources file for another suite than SUITE gives its first mirror, for SUITE.
if [ -f "$mirror" ] && ! grep -qw "$suite" "$mirror"; then
    mirror=$(sed -n 's/^URIs: *//p; s/^deb \(\[[^]]*\] \)\{0,1\}\([^ ]*\) .*/\2/p' "$mirror" | head -1)
fi
# One run at a time per tree: the tree is made once, and apt in the chroot locks the shared archives.
mkdir -p "$cache"
exec 9>"$base.lock"
flock 9
if [ ! -d "$base" ]; then
    echo "check-deb: making the clean $suite $arch tree $base (once)"
    rm -rf "$base.tmp"
    t0=$(date +%s)
    # sid's Release file on a mirror that is not refreshed carries an expired Valid-Until (a tree of
    # DEB_SUITE=sid, for packages built against sid).
    validity="Acquire::Check-Valid-Until \"true\""
    case $suite in sid | unstable) validity="Acquire::Check-Valid-Until \"false\"" ;; esac
    mmdebstrap --quiet --variant=apt --arch="$arch" --aptopt="$validity" "$suite" "$base.tmp" "$mirror" </dev/null \
        || { rm -rf "$base.tmp"; fail "mmdebstrap $suite $arch"; }
    mv "$base.tmp" "$base"
    echo "check-deb: made $base in $(($(date +%s) - t0)) s"
fi
# Packages apt downloads into the tree are kept beside it for the next run.
archives="$cache/deb-$suite-$arch.archives"
mkdir -p "$archives/partial"

work=$(mktemp -d "${TMPDIR:-/tmp}/snapback-check-deb.XXXXXX")
root="$work/root"
mounted=""
cleanup() {
    for m in $mounted; do umount -l "$m" 2>/dev/null || :; done
    # Never remove through a mount that is still there.
    if grep -q " $work/" /proc/mounts; then echo "check-deb: $work is still mounted: left in place" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir -p "$work/upper" "$work/overlay-work" "$root"
if mount -t overlay overlay -o "lowerdir=$base,upperdir=$work/upper,workdir=$work/overlay-work" "$root" 2>/dev/null; then
    mounted="$root"
else
    echo "check-deb: no overlayfs here: working on a copy of $base"
    cp -a "$base/." "$root/"
fi
# (mmdebstrap made the device nodes the tree needs in its /dev.)
for d in proc sys run tmp var/cache/apt/archives; do
    case $d in
        proc) mount -t proc proc "$root/proc" ;;
        sys) mount -t sysfs sysfs "$root/sys" ;;
        run | tmp) mount -t tmpfs -o mode=0755 tmpfs "$root/$d" ;;
        var/cache/apt/archives) mount --bind "$archives" "$root/$d" ;;
    esac
    mounted="$root/$d $mounted"
done
chmod 1777 "$root/tmp"
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || :
mkdir "$root/tmp/debs"
cp "$@" "$root/tmp/debs/"
cp "$repo/scripts/check-deb-chroot.sh" "$root/tmp/"

echo "check-deb: installing in a clean $suite $arch tree"
# Under qemu-user (another architecture) the daemon cannot read a peer's supplementary groups: qemu 7.2
# fails SO_PEERGROUPS (docs/development.md), so the check that needs them says so and is left out.
emulated=no
[ "$arch" = "$(dpkg --print-architecture)" ] || emulated=yes
chroot "$root" /usr/bin/env EMULATED=$emulated /bin/sh /tmp/check-deb-chroot.sh "$version" || fail "in the $suite $arch tree (above)"
echo "check-deb: ok   $arch: lintian, install, daemon, demo, remove, purge in $(($(date +%s) - started)) s"
