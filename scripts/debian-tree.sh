# SPDX-License-Identifier: Apache-2.0
# Sourced by the checks that build or run in a Debian tree of their own (check-swift62.sh, test-arm64.sh):
# making the tree once with mmdebstrap and reusing it, and passing the host's git redirections into it.
# The caller defines fail() (prints why and exits non-zero) and its own name in $tool. The trees' package
# lists are mk/packages.list's (scripts/packages.sh).
packages_of() { "$(dirname "${BASH_SOURCE[0]}")/packages.sh" "$1" ,; }

# debian_tree ROOT ARCH SUITE PACKAGES MIRROR MIRROR_VARIABLE: makes ROOT, a Debian SUITE tree of ARCH with
# PACKAGES (comma list) from MIRROR (MIRROR_VARIABLE: the environment variable that names another), unless
# ROOT was made from the same suite, architecture and package list (its .snapback-packages). A list that
# only grew has its new packages installed into ROOT by apt (minutes less than a new tree: the arm64 one
# takes 20 minutes or more under qemu); any other change makes it again. Made beside ROOT and moved in
# place, so an interrupted run leaves no tree (an interrupted addition leaves the old stamp: the next run
# adds them again); one run at a time makes it (ROOT.lock). Another architecture's tree runs its
# maintainer scripts under qemu-user.
debian_tree() {
    local root=$1 arch=$2 suite=$3 packages=$4 mirror=$5 variable=$6 stamp validity=true
    stamp="$suite $arch:$packages"
    [ "$(cat "$root/.snapback-packages" 2>/dev/null)" != "$stamp" ] || return 0
    [ "$(id -u)" = 0 ] || fail "making the $suite $arch tree in $root needs root (mmdebstrap, chroot)"
    command -v mmdebstrap >/dev/null || fail "mmdebstrap is not installed (the make target installs it)"
    if [ "$arch" != "$(dpkg --print-architecture)" ]; then
        command -v arch-test >/dev/null || fail "arch-test is not installed (mmdebstrap needs it for a foreign architecture; the make target installs it)"
        "$(dirname "${BASH_SOURCE[0]}")/qemu-binfmt.sh" "$arch" || fail "the $arch tree's programs cannot run here (above)"
    fi
    mkdir -p "$(dirname "$root")"
    exec 8>"$root.lock"
    flock 8
    # Another run may have made it while this one waited.
    if [ "$(cat "$root/.snapback-packages" 2>/dev/null)" = "$stamp" ]; then exec 8>&-; return 0; fi
    if tree_add "$root" "$suite $arch" "$packages"; then
        echo "$stamp" >"$root/.snapback-packages"
        exec 8>&-
        return 0
    fi
    echo "$tool: making the Debian $suite $arch tree in $root"
    rm -rf "$root.tmp"
    local start=$SECONDS
    # sid's Release file on a mirror that is not refreshed carries an expired Valid-Until.
    case $suite in sid | unstable) validity=false ;; esac
    if ! mmdebstrap --arch="$arch" --variant=apt --aptopt="Acquire::Check-Valid-Until \"$validity\"" \
        --include="$packages" "$suite" "$root.tmp" "$mirror"; then
        rm -rf "$root.tmp"
        fail "mmdebstrap could not make the $suite $arch tree from $mirror ($variable names another mirror)"
    fi
    echo "$stamp" >"$root.tmp/.snapback-packages"
    rm -rf "$root"
    mv "$root.tmp" "$root"
    exec 8>&-
    echo "$tool: $suite $arch tree made in $((SECONDS - start)) s, $(du -sh "$root" | cut -f1)"
}

# sysroot_links ROOT: ROOT's absolute symbolic links under usr/lib made relative (libm.so ->
# /lib/aarch64-linux-gnu/libm.so.6 in Debian 12), so that a linker given ROOT as --sysroot follows them
# into ROOT: lld follows the absolute one to the build machine's own path, finds nothing there, and links
# libm.a instead, whose calls into libc.a are then undefined. Idempotent.
# tree_add ROOT "SUITE ARCH" PACKAGES: true when ROOT is a tree of SUITE and ARCH whose list PACKAGES
# only extends, and apt installed the packages it adds (none of its others removed or changed).
tree_add() {
    local root=$1 made old added removed start=$SECONDS
    old=$(cat "$root/.snapback-packages" 2>/dev/null) || return 1
    made=${old%%:*}
    [ "$made" = "$2" ] || return 1
    added=$(comm -13 <(tr , '\n' <<<"${old#*:}" | sort -u) <(tr , '\n' <<<"$3" | sort -u))
    removed=$(comm -23 <(tr , '\n' <<<"${old#*:}" | sort -u) <(tr , '\n' <<<"$3" | sort -u))
    [ -n "$added" ] && [ -z "$removed" ] || return 1
    echo "$tool: adding to the Debian $made tree in $root:" $added
    # As in_tree, without the package: apt's maintainer scripts want /proc and /dev.
    if ROOT="$root" unshare --mount --propagation private /bin/bash -c '
set -euo pipefail
mount -t proc proc "$ROOT/proc"
mount --rbind /dev "$ROOT/dev"
cp /etc/resolv.conf "$ROOT/etc/resolv.conf" 2>/dev/null || true
run() { chroot "$ROOT" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"; }
run apt-get update -qq
run apt-get install -y -qq --no-install-recommends "${@}"
run apt-get clean
' _ $added; then
        echo "$tool: added to the $made tree in $((SECONDS - start)) s"
        return 0
    fi
    echo "$tool: apt could not add them: making the $made tree again"
    return 1
}

sysroot_links() {
    local root=$1 link target
    while IFS= read -r -d '' link; do
        target=$(readlink "$link")
        ln -sfn "$(realpath -m -s --relative-to="$(dirname "$link")" "$root$target")" "$link"
    done < <(find "$root/usr/lib" -type l -lname '/*' -print0)
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
# (the mounts end with it, even when it is interrupted): a fresh /tmp, /proc, /dev, the caller's $package at its own
# path and each of $binds and $EXTRA_BINDS read-only at its path (wherever they are, under /tmp too); its environment the
# NAME=VALUEs given and a plain PATH, HOME and LANG.
in_tree() {
    local tree=$1 script=$2
    ROOT="$tree" PACKAGE="$package" BINDS="${binds[*]} ${EXTRA_BINDS:-}" unshare --mount --propagation private \
        /bin/bash -c '
set -euo pipefail
# /tmp first: the package (or a bind) may live under /tmp here, and a tmpfs mounted after it would
# hide it.
mount -t tmpfs tmpfs "$ROOT/tmp"
mount -t proc proc "$ROOT/proc"
mount --rbind /dev "$ROOT/dev"
mkdir -p "$ROOT$PACKAGE"
mount --bind "$PACKAGE" "$ROOT$PACKAGE"
for dir in $BINDS; do
    mkdir -p "$ROOT$dir"
    mount --bind -o ro "$dir" "$ROOT$dir"
done
cp /etc/resolv.conf "$ROOT/etc/resolv.conf" 2>/dev/null || true
exec chroot "$ROOT" /usr/bin/env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/root LANG=C.UTF-8 "$@"
' _ "${@:3}" /bin/bash -c "$script"
}
