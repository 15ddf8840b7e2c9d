#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-3.0-or-later
#
# Package test: build the .debs, install them (over Debian's own nfs-ganesha 4.3-2, which
# they must upgrade in place, when the machine has no Ganesha), run a loopback flex-files
# cluster (1 MDS + 3 NFSv3 data servers) from the installed binaries and sample configs,
# write files with LAYOUT_WCC, manage the MDS with the installed ganesha-ff over a private
# dbus-daemon, drain a data server and check new files avoid it; then purge the packages
# and put back the Ganesha packages the machine had before.
#
#   package_test.sh REPO FF_CLIENT WORKDIR
#
# Root only (it installs packages); fails otherwise. Everything it starts or installs is
# undone on exit, whatever the outcome. FF_PACKAGE_DEBS=DIR uses .debs already built there.
set -euo pipefail

repo="$1"
ff_client="$2"
work="$3"

if [ "$(id -u)" -ne 0 ]; then
    echo "package test: FAILED: needs root (it installs packages)" >&2
    exit 1
fi

log() { echo "package test: $*"; }
fail() {
    echo "package test: FAILED: $*" >&2
    exit 1
}

# Loopback slot 251: the integration harness takes 16..250.
net=127.251.0
mds_addr=$net.10
ds_ids=(1 2 3)
lock_dir=/tmp/ff-harness-slots # shared with the harness: NFSv3 starts are serialised
our_packages=(nfs-ganesha nfs-ganesha-vfs nfs-ganesha-mem nfs-ganesha-nullfs
              nfs-ganesha-proxy-v4 nfs-ganesha-flexfiles)
export DEBIAN_FRONTEND=noninteractive

rm -rf "$work"
mkdir -p "$work" "$lock_dir"
started_pids=()
policy_rc_d=""
installed=0
before_packages="$work/packages-before.txt"
before_ganesha="$work/ganesha-before.txt"

# Conffile questions answered without asking, keeping the administrator's files.
apt_install() {
    apt-get install -y -qq --no-install-recommends \
        -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold "$@"
}

installed_packages() {
    dpkg-query -W -f='${Package} ${db:Status-Abbrev}\n' | awk '$2 == "ii" {print $1}' | sort
}

cleanup() {
    local rc=$?
    set +e
    for pid in "${started_pids[@]}"; do
        kill -TERM "$pid" 2>/dev/null
    done
    for pid in "${started_pids[@]}"; do
        for _ in $(seq 50); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        kill -KILL "$pid" 2>/dev/null
    done
    if [ "$installed" = 1 ]; then
        # Ours that the machine did not have before go (purged); the Ganesha packages it had
        # come back by downgrading ours to their previous versions, which keeps conffiles
        # such as /etc/ganesha/ganesha.conf as the administrator left them.
        local ours=()
        for p in "${our_packages[@]}"; do
            dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null | grep -q '^.i' &&
                ! grep -q "^$p=" "$before_ganesha" && ours+=("$p")
        done
        log "purging ${ours[*]}"
        [ ${#ours[@]} -gt 0 ] && apt-get purge -y -qq "${ours[@]}" >"$work/purge.log" 2>&1
        if [ -s "$before_ganesha" ]; then
            log "restoring $(tr '\n' ' ' <"$before_ganesha")"
            # shellcheck disable=SC2046
            apt_install --allow-downgrades \
                $(cat "$before_ganesha") >"$work/restore.log" 2>&1 ||
                { echo "package test: restore FAILED (see $work/restore.log)" >&2; rc=1; }
        fi
        # Dependencies the installation pulled in (nfs-common...), and only those.
        local pulled
        pulled=$(comm -13 "$before_packages" <(installed_packages) |
                 grep -Fxf <(apt-mark showauto) || true)
        if [ -n "$pulled" ]; then
            # shellcheck disable=SC2086
            apt-get purge -y -qq $pulled >>"$work/purge.log" 2>&1
        fi
        local now
        now=$(dpkg-query -W -f='${Package}=${Version} ${db:Status-Abbrev}\n' 'nfs-ganesha*' \
                  'python3-nfs-ganesha' 2>/dev/null | awk '$2 == "ii" {print $1}')
        if [ "$now" != "$(cat "$before_ganesha")" ]; then
            echo "package test: Ganesha packages now: $now; before: $(cat "$before_ganesha")" >&2
            rc=1
        fi
    fi
    [ -n "$policy_rc_d" ] && rm -f "$policy_rc_d"
    if [ "$rc" -eq 0 ]; then
        rm -rf "$work"
    else
        echo "package test: logs kept in $work" >&2
    fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

start=$(date +%s)

# 1. The packages.
debs="${FF_PACKAGE_DEBS:-$work/debs}"
if [ -z "${FF_PACKAGE_DEBS:-}" ]; then
    log "building the .debs"
    "$repo/packaging/build-debs.sh" "$debs"
fi
log "debs ready after $(( $(date +%s) - start )) s"

# 2. What is installed now, to put it back afterwards.
installed_packages >"$before_packages"
dpkg-query -W -f='${Package}=${Version} ${db:Status-Abbrev}\n' 'nfs-ganesha*' 'python3-nfs-ganesha' \
    2>/dev/null | awk '$2 == "ii" {print $1}' >"$before_ganesha" || true
log "Ganesha packages installed before: $(tr '\n' ' ' <"$before_ganesha")"

# 3. Install ours. Keep maintainer scripts from starting daemons (nfs-common's statd...).
if [ ! -e /usr/sbin/policy-rc.d ]; then
    policy_rc_d=/usr/sbin/policy-rc.d
    printf '#!/bin/sh\nexit 101\n' >"$policy_rc_d"
    chmod 755 "$policy_rc_d"
fi
installed=1
# What an administrator has: on a machine without Ganesha, first install Debian's own
# nfs-ganesha and nfs-ganesha-vfs, so that ours must upgrade them in place (cleanup
# removes them again with ours). FF_PACKAGE_UPGRADE=0 skips this.
stock=""
if [ ! -s "$before_ganesha" ] && [ "${FF_PACKAGE_UPGRADE:-1}" != 0 ]; then
    apt_install nfs-ganesha nfs-ganesha-vfs >"$work/install-stock.log" 2>&1 ||
        { cat "$work/install-stock.log" >&2; fail "installing Debian's nfs-ganesha"; }
    stock=$(dpkg-query -W -f='${Version}' nfs-ganesha)
    log "Debian's nfs-ganesha $stock and nfs-ganesha-vfs installed, to be upgraded"
fi
apt_install "$debs"/nfs-ganesha_*.deb "$debs"/nfs-ganesha-vfs_*.deb \
    "$debs"/nfs-ganesha-flexfiles_*.deb >"$work/install.log" 2>&1 ||
    { cat "$work/install.log" >&2; fail "apt-get install"; }
version=$(dpkg-query -W -f='${Version}' nfs-ganesha-flexfiles)
log "installed nfs-ganesha-flexfiles $version after $(( $(date +%s) - start )) s"
for p in nfs-ganesha nfs-ganesha-vfs; do
    [ "$(dpkg-query -W -f='${Version}' "$p")" = "$version" ] ||
        fail "$p is at $(dpkg-query -W -f='${Version}' "$p"), not $version"
done
if [ -n "$stock" ]; then
    dpkg --compare-versions "$version" gt "$stock" || fail "$version does not upgrade $stock"
    log "upgraded Debian's $stock to $version"
fi
for f in /usr/bin/ganesha.nfsd /usr/bin/ganesha-ff /usr/bin/ff-client \
         /usr/lib/x86_64-linux-gnu/ganesha/libfsalflexfiles.so \
         /usr/lib/x86_64-linux-gnu/ganesha/libfsalvfs.so; do
    [ -e "$f" ] || fail "$f is not installed"
done
examples=/usr/share/doc/nfs-ganesha-flexfiles/examples
[ -f "$examples/flexfiles-mds.conf" ] || fail "$examples/flexfiles-mds.conf is not installed"
[ -f "$examples/nfsv3-data-server.conf" ] || fail "$examples/nfsv3-data-server.conf is not installed"
for d in design failover scale-out; do # dh_compress may have gzipped them
    compgen -G "/usr/share/doc/nfs-ganesha-flexfiles/$d.md*" >/dev/null ||
        fail "docs/$d.md is not installed"
done

# 4. rpcbind (NFSv3 servers exit without one) and a private system bus.
if ! rpcinfo -p 127.0.0.1 >/dev/null 2>&1; then
    /usr/sbin/rpcbind -f -w &
    started_pids+=($!)
    for _ in $(seq 50); do rpcinfo -p 127.0.0.1 >/dev/null 2>&1 && break; sleep 0.1; done
fi
cat >"$work/bus.conf" <<EOF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <listen>unix:path=$work/bus.socket</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_type="method_call"/>
    <allow send_destination="*"/>
    <allow receive_sender="*"/>
  </policy>
</busconfig>
EOF
dbus-daemon --config-file="$work/bus.conf" --nofork >"$work/dbus.log" 2>&1 &
started_pids+=($!)
for _ in $(seq 50); do [ -S "$work/bus.socket" ] && break; sleep 0.1; done
export DBUS_SYSTEM_BUS_ADDRESS="unix:path=$work/bus.socket"

# 5. The servers, from the installed sample configs with addresses and paths substituted.
start_server() { # NAME CONFIG
    local name=$1 conf=$2
    (
        flock 9 # the daemon must not inherit the lock: 9>&- below
        /usr/bin/ganesha.nfsd -F -f "$conf" -L "$work/$name.log" -p "$work/$name.pid" \
            -N NIV_EVENT >"$work/$name.out" 2>&1 9>&- &
        echo $! >"$work/$name.started"
        for _ in $(seq 200); do
            grep -q "NFS SERVER INITIALIZED" "$work/$name.log" 2>/dev/null && break
            kill -0 "$(cat "$work/$name.started")" 2>/dev/null || break
            sleep 0.1
        done
    ) 9>"$lock_dir/ganesha-start.lock"
    started_pids+=("$(cat "$work/$name.started")")
    grep -q "NFS SERVER INITIALIZED" "$work/$name.log" 2>/dev/null ||
        { tail -20 "$work/$name.log" >&2; fail "$name did not start"; }
}

for i in "${ds_ids[@]}"; do
    mkdir -p "$work/ds$i/export" "$work/ds$i/recovery"
    sed -e "s|192\.0\.2\.11|$net.1$i|g" \
        -e "s|/srv/ds|$work/ds$i/export|g" \
        -e "s|/var/lib/nfs/ganesha/recovery|$work/ds$i/recovery|g" \
        -e "s|Export_Id = 11;|Export_Id = 1$i;|" \
        -e "s|^NFS_CORE_PARAM {|NFS_CORE_PARAM {\n    Dbus_Name_Prefix = ds$i;|" \
        "$examples/nfsv3-data-server.conf" >"$work/ds$i/ganesha.conf"
    start_server "ds$i" "$work/ds$i/ganesha.conf"
done

mkdir -p "$work/mds/namespace" "$work/mds/recovery"
# Each Data_Server block gets its own export directory (the n-th Export_Path, ds n).
sed -e "s|192\.0\.2\.10|$mds_addr|g" \
    -e "s|192\.0\.2\.1\([1-3]\)|$net.1\1|g" \
    -e "s|/srv/flexfiles/namespace|$work/mds/namespace|g" \
    -e "s|/var/lib/nfs/ganesha/recovery|$work/mds/recovery|g" \
    -e "s|/var/lib/nfs/ganesha/flexfiles/export-1.db|$work/mds/layouts.db|g" \
    -e "s|^NFS_CORE_PARAM {|NFS_CORE_PARAM {\n    Dbus_Name_Prefix = mds;|" \
    -e "s|^NFSv4 {|NFSv4 {\n    Graceless = true;|" \
    "$examples/flexfiles-mds.conf" |
    awk -v work="$work" '/Export_Path = \/srv\/ds;/ { n++; sub("/srv/ds", work "/ds" n "/export") } { print }' \
    >"$work/mds/ganesha.conf"
grep -v "^[[:space:]]*#" "$work/mds/ganesha.conf" | grep -c "/srv/" >/dev/null && fail "unsubstituted path left in the MDS config"
start_server mds "$work/mds/ganesha.conf"
log "1 MDS + 3 data servers up after $(( $(date +%s) - start )) s"

# 6. A client with LAYOUT_WCC.
head -c 300000 /dev/urandom >"$work/payload"
client() { "$ff_client" --server "$mds_addr" "$@"; }
client put "$work/payload" /ff/first --wcc on --mirrors-check >"$work/put-first.out" 2>&1 ||
    { cat "$work/put-first.out" >&2; fail "ff-client put --wcc on"; }
cat "$work/put-first.out"
grep -q "via layout" "$work/put-first.out" || fail "the write did not go through a layout"
grep -q "^LAYOUT_WCC: NFS4_OK" "$work/put-first.out" || fail "LAYOUT_WCC was not accepted"
client stat /ff/first >"$work/stat-first.out" 2>&1 || { cat "$work/stat-first.out" >&2; fail "ff-client stat"; }
grep -q "300000" "$work/stat-first.out" || { cat "$work/stat-first.out" >&2; fail "stat does not show 300000 bytes"; }

# 7. The installed CLI over the private bus.
ff() { /usr/bin/ganesha-ff --prefix mds "$@"; }
ff list >"$work/list.out" 2>&1 || { cat "$work/list.out" >&2; fail "ganesha-ff list"; }
cat "$work/list.out"
ff stats >"$work/stats.out" 2>&1 || { cat "$work/stats.out" >&2; fail "ganesha-ff stats"; }
cat "$work/stats.out"
ff --json list >"$work/list.json" 2>&1 || { cat "$work/list.json" >&2; fail "ganesha-ff --json list"; }
python3 - "$work/list.json" <<'EOF' || fail "ganesha-ff --json list does not name data servers 1, 2, 3"
import json, sys
ids = sorted(int(s["id"]) for s in json.load(open(sys.argv[1])))
sys.exit(0 if ids == [1, 2, 3] else 1)
EOF
ff --json stats >"$work/stats.json" 2>&1 || { cat "$work/stats.json" >&2; fail "ganesha-ff --json stats"; }
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$work/stats.json" ||
    fail "ganesha-ff --json stats is not JSON"

# 8. Drain data server 1: new files go to 2 and 3 only (Mirrors = 2), old ones stay.
data_files() { find "$work/ds$1/export" -name 'ff-*-m*' | sort; }
data_files 1 >"$work/ds1-before.txt"
ff drain 1 >"$work/drain.out" 2>&1 || { cat "$work/drain.out" >&2; fail "ganesha-ff drain 1"; }
ff --json list >"$work/list-drained.json"
python3 - "$work/list-drained.json" <<'EOF' || fail "ganesha-ff list does not show data server 1 drained"
import json, sys
drained = {int(s["id"]): bool(s["drained"]) for s in json.load(open(sys.argv[1]))}
sys.exit(0 if drained == {1: True, 2: False, 3: False} else 1)
EOF
for n in 1 2 3 4; do
    client put "$work/payload" "/ff/after-drain-$n" --wcc on >"$work/put-$n.out" 2>&1 ||
        { cat "$work/put-$n.out" >&2; fail "put after drain"; }
done
data_files 1 >"$work/ds1-after.txt"
cmp -s "$work/ds1-before.txt" "$work/ds1-after.txt" ||
    { diff "$work/ds1-before.txt" "$work/ds1-after.txt" >&2; fail "new data files on drained data server 1"; }
for i in 2 3; do
    [ "$(data_files $i | wc -l)" -ge 4 ] || fail "data server $i holds fewer than 4 data files"
done
ff undrain 1 >"$work/undrain.out" 2>&1 || { cat "$work/undrain.out" >&2; fail "ganesha-ff undrain 1"; }
log "drain checked: data server 1 kept $(wc -l <"$work/ds1-after.txt") data files, got no new ones"

log "PASSED in $(( $(date +%s) - start )) s"
