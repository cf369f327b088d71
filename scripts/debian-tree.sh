# SPDX-License-Identifier: Apache-2.0
# Sourced by the checks that build or run in a Debian tree of their own (check-swift62.sh, test-arm64.sh):
# making the tree once with mmdebstrap and reusing it, and passing the host's git redirections into it.
# The caller defines skip() (prints why and exits 0) and its own name in $tool.

# The Swift 6.2 tree's packages (check-swift62.sh builds and tests in it, test-arm64.sh cross-compiles in
# it): the toolchain and what the build and the tests use: the -dev packages of the system libraries,
# pkg-config for their flags, git for the package dependencies, and for the tests that run them python3,
# util-linux's setpriv, mount (the store and durability tests mount a tmpfs) and systemd's
# systemd-socket-activate.
swift62_packages=swiftlang,libuv1-dev,libprotobuf-c-dev,libsqlite3-dev,libnats-dev,pkg-config,python3,ca-certificates,git,util-linux,mount,systemd

# debian_tree ROOT ARCH PACKAGES MIRROR MIRROR_VARIABLE: makes ROOT, a Debian sid tree of ARCH with
# PACKAGES (comma list) from MIRROR (MIRROR_VARIABLE: the environment variable that names another), unless
# ROOT was made from the same architecture and package list (its .snapback-packages); a changed list makes
# it again. Made beside ROOT and moved in place, so an interrupted run leaves no tree.
debian_tree() {
    local root=$1 arch=$2 packages=$3 mirror=$4 variable=$5 stamp
    stamp=$packages
    # A tree of the host's architecture is stamped with its package list alone, one of another with both.
    [ "$arch" = "$(dpkg --print-architecture)" ] || stamp="$arch:$packages"
    [ "$(cat "$root/.snapback-packages" 2>/dev/null)" != "$stamp" ] || return 0
    [ "$(id -u)" = 0 ] || skip "making the $arch tree in $root needs root (mmdebstrap, chroot)"
    command -v mmdebstrap >/dev/null || skip "mmdebstrap is not installed (the make target installs it)"
    echo "$tool: making the Debian sid $arch tree in $root"
    rm -rf "$root.tmp"
    mkdir -p "$(dirname "$root")"
    local start=$SECONDS
    # sid's Release file on a mirror that is not refreshed carries an expired Valid-Until.
    if ! mmdebstrap --arch="$arch" --variant=apt --aptopt='Acquire::Check-Valid-Until "false"' \
        --include="$packages" sid "$root.tmp" "$mirror"; then
        rm -rf "$root.tmp"
        skip "mmdebstrap could not make the $arch tree from $mirror ($variable names another mirror)"
    fi
    echo "$stamp" >"$root.tmp/.snapback-packages"
    rm -rf "$root"
    mv "$root.tmp" "$root"
    echo "$tool: $arch tree made in $((SECONDS - start)) s, $(du -sh "$root" | cut -f1)"
}

# git_redirections: the host's system and global url.BASE.insteadOf (e.g. to local mirrors of the
# package dependencies) as GIT_CONFIG_* assignments in git_env, and each BASE that is a host directory
# in binds, to be bind-mounted at the same path in the tree.
git_redirections() {
    git_env=()
    binds=()
    local count=0 key value base
    while read -r key value; do
        base=${key#url.}
        base=${base%.insteadof}
        git_env+=("GIT_CONFIG_KEY_$count=url.$base.insteadOf" "GIT_CONFIG_VALUE_$count=$value")
        count=$((count + 1))
        if [ -d "$base" ]; then binds+=("$base"); fi
    done < <(git -C / config --get-regexp '^url\..*\.insteadof$' 2>/dev/null || true)
    git_env+=("GIT_CONFIG_COUNT=$count")
}

# in_tree TREE SCRIPT [NAME=VALUE...]: runs SCRIPT (bash) chrooted in TREE, in a mount namespace of its own
# (the mounts end with it, even when it is interrupted): the caller's $package at its own path, each of
# $binds and $EXTRA_BINDS read-only at its path, /proc, /dev and a fresh /tmp; its environment the
# NAME=VALUEs given and a plain PATH, HOME and LANG.
in_tree() {
    local tree=$1 script=$2
    ROOT="$tree" PACKAGE="$package" BINDS="${binds[*]} ${EXTRA_BINDS:-}" unshare --mount --propagation private \
        /bin/bash -c '
set -euo pipefail
mkdir -p "$ROOT$PACKAGE"
mount --bind "$PACKAGE" "$ROOT$PACKAGE"
mount -t proc proc "$ROOT/proc"
mount --rbind /dev "$ROOT/dev"
mount -t tmpfs tmpfs "$ROOT/tmp"
for dir in $BINDS; do
    mkdir -p "$ROOT$dir"
    mount --bind -o ro "$dir" "$ROOT$dir"
done
cp /etc/resolv.conf "$ROOT/etc/resolv.conf" 2>/dev/null || true
exec chroot "$ROOT" /usr/bin/env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/root LANG=C.UTF-8 "$@"
' _ "${@:3}" /bin/bash -c "$script"
}
