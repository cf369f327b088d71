#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Makes ARCH's programs run here under qemu-user, or says why they cannot and fails:
#
#   scripts/qemu-binfmt.sh ARCH      (a Debian architecture: arm64)
#
# binfmt_misc mounted (a fresh machine or container often has it unmounted), then qemu-user-static's
# interpreter registered and enabled (binfmt-support's update-binfmts), with the F flag: the kernel holds
# the emulator open, so that it runs ARCH's programs inside a tree that does not have it (mmdebstrap's,
# the tests', check-deb's).
set -eu
arch=${1:?usage: qemu-binfmt.sh ARCH}
fail() { echo "qemu-binfmt: $arch programs cannot run here: $*" >&2; exit 1; }
[ "$arch" != "$(dpkg --print-architecture)" ] || exit 0
cpu=$(dpkg-architecture -a"$arch" -qDEB_HOST_GNU_CPU 2>/dev/null) || fail "dpkg-architecture does not know $arch (dpkg-dev)"
entry=/proc/sys/fs/binfmt_misc/qemu-$cpu
if [ ! -e /proc/sys/fs/binfmt_misc/status ]; then
    [ "$(id -u)" = 0 ] || fail "binfmt_misc is not mounted, and mounting it needs root"
    mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc 2>/dev/null \
        || fail "binfmt_misc is not mounted and cannot be (a container without the right to mount it?)"
fi
[ -e /usr/libexec/qemu-binfmt/$cpu-binfmt-P ] || [ -e /usr/bin/qemu-$cpu-static ] || fail "qemu-$cpu-static is missing: qemu-user-static is not installed (the make target installs it)"
if ! grep -qx enabled "$entry" 2>/dev/null; then
    command -v update-binfmts >/dev/null || fail "update-binfmts is missing (binfmt-support)"
    update-binfmts --import "qemu-$cpu" >/dev/null 2>&1 || :
    update-binfmts --enable "qemu-$cpu" || fail "update-binfmts could not register qemu-$cpu"
fi
grep -qx enabled "$entry" 2>/dev/null || fail "qemu-$cpu is not enabled in binfmt_misc"
grep -q '^flags:.*F' "$entry" || fail "qemu-$cpu is registered without the F flag (the emulator is not held open: it cannot run in a tree)"
