#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Run by scripts/check-deb.sh inside a clean Debian tree, with the packages in /tmp/debs:
#
#   /bin/sh /tmp/check-deb-chroot.sh VERSION
#
# What the packages need from Debian is installed first, and the tree's file list taken; then
# `apt install ./…deb`, and checks: the group of the socket, the socket unit enabled, `snapbackd
# --version` and `--check-config`, every shared object's libraries found, libsnapback's pkg-config file,
# the mpv plugin enabled; then the daemon started as its unit starts it, but without systemd as PID 1
# (systemd-socket-activate holds the socket, owned and moded as snapbackd.socket has it; the daemon runs
# under a DynamicUser=-style uid with the unit's ExecStart=, state and runtime directories and umask), a
# player in the "snapback" group runs `snapback demo` through the default socket, a user outside it is
# refused. Last, dpkg -r leaves only what Debian keeps on removal (the configuration, the state, the unit's
# enablement), and dpkg --purge leaves nothing but the "snapback" group (Debian keeps system groups).
set -eu
export LC_ALL=C DEBIAN_FRONTEND=noninteractive
version=${1:?usage: check-deb-chroot.sh VERSION}
upstream=${version%-*}
fail() { echo "check-deb (chroot): FAIL $*" >&2; exit 1; }
ok() { echo "check-deb (chroot): ok   $*"; }
cd /tmp/debs
ours=$(for d in ./*.deb; do dpkg-deb -f "$d" Package; done)

# The file list, without what the package tools and the kernel keep, and the account databases' backups
# (/etc/group- and the like, written when the group is added: the group stays, and so do they).
snapshot() {
    find / -xdev \( -path /proc -o -path /sys -o -path /dev -o -path /run -o -path /tmp -o -path /var/cache/apt \
        -o -path /var/lib/apt -o -path /var/lib/dpkg -o -path /var/log -o -path /var/cache/debconf \
        -o -path /etc/group- -o -path /etc/gshadow- -o -path /etc/passwd- -o -path /etc/shadow- \) -prune -o -print |
        sort
}

apt-get update -qq || fail "apt-get update"
# shellcheck disable=SC2086
deps=$(apt-get -s install --no-install-recommends ./*.deb | sed -n 's/^Inst \([^ ]*\) .*/\1/p' | grep -vxF "$ours" || :)
# pkg-config reads libsnapback's .pc below; snapback-fleet is run against Debian's nats-server.
extra=pkg-config
if echo "$ours" | grep -qx snapback-fleet; then extra="$extra nats-server"; fi
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $deps $extra >/tmp/deps.log 2>&1 \
    || { cat /tmp/deps.log; fail "installing the dependencies: $deps"; }
ok "$(echo $deps | wc -w) packages the packages depend on installed from the mirror"
snapshot >/tmp/before

apt-get install -y -qq --no-install-recommends ./*.deb >/tmp/apt.log 2>&1 || { cat /tmp/apt.log; fail "apt install ./*.deb"; }
for p in $ours; do
    [ "$(dpkg-query -W -f '${db:Status-Abbrev}${Version}' "$p")" = "ii $version" ] || fail "$p $version is not installed"
done
ok "apt install ./*.deb: $(echo $ours)"

gid=$(getent group snapback | cut -d: -f3)
[ -n "$gid" ] || fail "no \"snapback\" group (systemd-sysusers in the postinst)"
[ -L /etc/systemd/system/sockets.target.wants/snapbackd.socket ] || fail "snapbackd.socket is not enabled"
snapbackd --version | grep -q "$upstream" || fail "snapbackd --version does not print $upstream: $(snapbackd --version)"
snapbackd --check-config >/tmp/config.txt 2>&1 || { cat /tmp/config.txt; fail "snapbackd --check-config"; }
ok "group snapback ($gid), snapbackd.socket enabled, snapbackd --version $upstream, --check-config passes"

for f in /usr/bin/snapback /usr/bin/snapback-fleet /usr/lib/*/libsnapback.so.0 /usr/lib/mpv-snapback/snapback.so /usr/lib/*/gstreamer-1.0/libgstsnapback.so; do
    [ -e "$f" ] || continue
    out=$(ldd "$f" 2>&1) || fail "ldd $f: $out"
    if echo "$out" | grep -q "not found"; then echo "$out"; fail "$f needs a library no dependency installed"; fi
done
pkg-config --cflags --libs libsnapback | grep -q -- -lsnapback || fail "pkg-config does not give -lsnapback"
[ -e /usr/lib/*/libsnapback.so ] || fail "libsnapback.so (the link) is not there"
[ -e /etc/mpv/scripts/snapback.so ] || fail "the mpv plugin is not in /etc/mpv/scripts"
ok "shared objects' libraries found, pkg-config libsnapback, mpv plugin in /etc/mpv/scripts"

# The daemon as snapbackd.service runs it, socket-activated as snapbackd.socket would.
unit=/lib/systemd/system/snapbackd.service
exec_start=$(sed -n 's/^ExecStart=//p' "$unit")
case $exec_start in /usr/bin/snapbackd\ *) ;; *) fail "ExecStart= is not /usr/bin/snapbackd: $exec_start" ;; esac
socket=$(sed -n 's/^ListenStream=//p' /lib/systemd/system/snapbackd.socket)
uid=61184   # the first uid systemd gives DynamicUser= services
# StateDirectory= (systemd keeps a DynamicUser= service's in /var/lib/private, reached from the service's
# own mount namespace; here it is the plain directory the daemon is given).
install -d -o $uid -g $uid -m 0700 /var/lib/snapback
install -d -o $uid -g $uid -m 0755 /run/snapback
# The daemon socket-activated as the unit runs it (its uid, its umask), the socket given to the snapback
# group as snapbackd.socket's SocketGroup= and SocketMode= would; sets $daemon.
start_daemon() {
    systemd-socket-activate -l "$socket" --fdname=snapbackd \
        setpriv --reuid=$uid --regid=$uid --clear-groups sh -c "umask 0077 && exec $exec_start" 2>/tmp/daemon.log &
    daemon=$!
    i=0
    until [ -S "$socket" ]; do
        i=$((i + 1)); [ $i -le 200 ] || fail "no socket $socket"; sleep 0.05
    done
    chgrp snapback "$socket" && chmod 0660 "$socket"
}
start_daemon
if setpriv --reuid=1001 --regid=1001 --clear-groups snapback status >/tmp/refused.txt 2>&1; then
    fail "a user outside the snapback group got an answer"
fi
grep -q "Permission denied" /tmp/refused.txt || { cat /tmp/refused.txt; fail "a non-member was not refused by the socket's mode"; }
setpriv --reuid=1000 --regid=1000 --groups="$gid" snapback demo >/tmp/demo.txt 2>&1 \
    || { cat /tmp/demo.txt /tmp/daemon.log; kill $daemon 2>/dev/null; fail "snapback demo against the installed daemon"; }
grep -q "seek" /tmp/demo.txt || { cat /tmp/demo.txt; fail "snapback demo told no story"; }
[ "$(stat -c %u /var/lib/snapback/snapback.db)" = $uid ] || fail "the daemon's database is not in its state directory"
kill -TERM $daemon
status=0; wait $daemon || status=$?
[ $status = 0 ] || { cat /tmp/daemon.log; fail "snapbackd exited $status on SIGTERM"; }
ok "socket-activated snapbackd as uid $uid served snapback demo to a member of snapback, refused a non-member, stopped cleanly"

# The sync agent's package: its user in the snapback group, its unit enabled (it runs once sync.conf
# exists), its example configuration valid once the servers and the household are set, and snapbackd
# serving it the admin-only calls (the package's admin-groups drop-in) while the socket's other users
# are refused them.
if echo "$ours" | grep -qx snapback-sync; then
    id -nG snapback-sync | tr ' ' '\n' | grep -qx snapback || fail "the snapback-sync user is not in the snapback group"
    [ -L /etc/systemd/system/multi-user.target.wants/snapback-sync.service ] || fail "snapback-sync.service is not enabled"
    { echo "servers = nats://127.0.0.1:4222"; echo "household = smith"; cat /etc/snapback/sync.conf.example; } >/tmp/sync.conf
    snapback-sync --check-config --config /tmp/sync.conf >/tmp/sync-check.txt 2>&1 \
        || { cat /tmp/sync-check.txt; fail "snapback-sync --check-config with the example"; }
    # `snapback watch` streams until stopped when it is served (timeout's 124), and ends at once when refused.
    # The agent reaches the socket through a supplementary group, which qemu-user hides from the daemon.
    if [ "${EMULATED:-no}" = yes ]; then
        echo "check-deb (chroot): SKIPPED the agent's admin call: qemu-user fails SO_PEERGROUPS, the daemon sees no supplementary group"
        served="the admin call skipped under qemu"
    else
        rm -f "$socket"  # the first run's: the wait below is for the new one
        start_daemon
        status=0
        agent_uid=$(id -u snapback-sync) agent_gid=$(id -g snapback-sync)
        setpriv --reuid="$agent_uid" --regid="$agent_gid" --groups="$agent_gid,$gid" timeout 3 snapback watch >/tmp/watch.txt 2>&1 \
            || status=$?
        [ $status = 124 ] || { cat /tmp/watch.txt /tmp/daemon.log; fail "snapbackd did not serve the snapback-sync user an admin call (exit $status)"; }
        status=0
        setpriv --reuid=1000 --regid=1000 --groups="$gid" timeout 3 snapback watch >/tmp/watch.txt 2>&1 || status=$?
        [ $status != 124 ] && grep -qi "permission" /tmp/watch.txt || { cat /tmp/watch.txt; fail "a player was served an admin call"; }
        kill -TERM $daemon
        status=0; wait $daemon || status=$?
        [ $status = 0 ] || { cat /tmp/daemon.log; fail "snapbackd exited $status on SIGTERM"; }
        served="served the admin calls a player is refused"
    fi
    ok "snapback-sync: its user in snapback, its unit enabled, its example configuration valid, $served"
fi

# The fleet's aggregator (for the operator's hub): its user, its unit enabled, the installed fleet.conf
# valid, and the aggregator run as its unit runs it (its user, ExecStart=, state directory, umask) against
# a nats-server -js: it makes the telemetry stream and its durable consumer there, and its database, and
# stops cleanly on SIGTERM. The server listens on a port of its own (the tree shares the machine's
# network), which a copy of the installed fleet.conf names.
if echo "$ours" | grep -qx snapback-fleet; then
    getent passwd snapback-fleet >/dev/null || fail "no snapback-fleet user (systemd-sysusers in the postinst)"
    [ -L /etc/systemd/system/multi-user.target.wants/snapback-fleet.service ] || fail "snapback-fleet.service is not enabled"
    snapback-fleet --version | grep -q "$upstream" || fail "snapback-fleet --version does not print $upstream"
    snapback-fleet --check-config >/tmp/fleet-check.txt 2>&1 || { cat /tmp/fleet-check.txt; fail "snapback-fleet --check-config"; }
    fleet_exec=$(sed -n 's/^ExecStart=//p' /lib/systemd/system/snapback-fleet.service)
    case $fleet_exec in /usr/bin/snapback-fleet\ --config\ /etc/snapback/fleet.conf) ;;
        *) fail "snapback-fleet's ExecStart= is not /usr/bin/snapback-fleet --config /etc/snapback/fleet.conf: $fleet_exec" ;;
    esac
    fleet_uid=$(id -u snapback-fleet) fleet_gid=$(id -g snapback-fleet)
    install -d -o "$fleet_uid" -g "$fleet_gid" -m 0700 /var/lib/snapback-fleet
    nats=""
    for port in 24222 34222 44222 54222 14222; do
        mkdir -p /tmp/nats
        nats-server -js -a 127.0.0.1 -p $port -sd /tmp/nats >/tmp/nats.log 2>&1 &
        nats=$!
        i=0
        until grep -q "Server is ready" /tmp/nats.log; do
            kill -0 $nats 2>/dev/null || break
            i=$((i + 1)); [ $i -le 200 ] || break; sleep 0.05
        done
        if grep -q "Server is ready" /tmp/nats.log; then break; fi
        kill $nats 2>/dev/null || :; wait $nats 2>/dev/null || :; nats=""
    done
    [ -n "$nats" ] || { cat /tmp/nats.log; fail "nats-server -js did not start on any of its ports"; }
    sed "s#^servers = .*#servers = nats://127.0.0.1:$port#" /etc/snapback/fleet.conf >/tmp/fleet.conf
    chmod 0644 /tmp/fleet.conf
    setpriv --reuid="$fleet_uid" --regid="$fleet_gid" --clear-groups \
        sh -c "umask 0077 && exec ${fleet_exec% --config *} --config /tmp/fleet.conf" >/tmp/fleet.log 2>&1 &
    fleet=$!
    consumer="/tmp/nats/jetstream/\$G/streams/SNAPBACK_TELEMETRY/obs/snapback-fleet"
    i=0
    until [ -d "$consumer" ] && [ -f /var/lib/snapback-fleet/fleet.db ]; do
        kill -0 $fleet 2>/dev/null || { cat /tmp/fleet.log; kill $nats; fail "snapback-fleet exited"; }
        i=$((i + 1)); [ $i -le 400 ] || { cat /tmp/fleet.log /tmp/nats.log; kill $fleet $nats; fail "snapback-fleet made no stream, consumer or database"; }
        sleep 0.05
    done
    [ "$(stat -c %u /var/lib/snapback-fleet/fleet.db)" = "$fleet_uid" ] || fail "the aggregator's database is not its user's"
    [ "$(stat -c %a /var/lib/snapback-fleet/fleet.db)" = 600 ] || fail "the aggregator's database is not 0600 (the unit's umask)"
    kill -TERM $fleet
    status=0; wait $fleet || status=$?
    kill -TERM $nats; wait $nats || :
    [ $status = 0 ] || { cat /tmp/fleet.log; fail "snapback-fleet exited $status on SIGTERM"; }
    grep -q "snapback-fleet: stopped" /tmp/fleet.log || { cat /tmp/fleet.log; fail "snapback-fleet did not log its stop"; }
    ok "snapback-fleet: its user, its unit enabled, fleet.conf valid, run as its user it made the stream, its consumer and its database, stopped cleanly"
fi

# dpkg -r: Debian keeps the configuration, the state and the units' enablement until the purge.
# shellcheck disable=SC2086
dpkg -r $ours >/tmp/dpkg.log 2>&1 || { cat /tmp/dpkg.log; fail "dpkg -r"; }
snapshot >/tmp/removed
left=$(comm -13 /tmp/before /tmp/removed | grep -v -e '^/etc/snapback' -e '^/var/lib/snapback' \
    -e '^/etc/systemd/system/' -e '^/var/lib/systemd/deb-systemd-helper-enabled' || :)
[ -z "$left" ] || fail "dpkg -r left: $left"
[ -f /etc/snapback/snapbackd.conf ] || fail "dpkg -r removed the configuration"
ok "dpkg -r: the configuration, the state and the enablement are kept"
# shellcheck disable=SC2086
dpkg --purge $ours >/tmp/dpkg.log 2>&1 || { cat /tmp/dpkg.log; fail "dpkg --purge"; }
snapshot >/tmp/purged
changed=$(comm -3 /tmp/before /tmp/purged)
[ -z "$changed" ] || fail "dpkg --purge left or took (left column: gone, right: left behind): $changed"
getent group snapback >/dev/null || fail "the snapback group went with the purge"
ok "dpkg --purge: nothing left but the system accounts (Debian keeps them)"
