#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-3.0-or-later
#
# Builds the guest's initramfs: busybox-static, the guest's init (guest/init), and the
# modules the NFS client needs with their dependency closure (each module's
# `modinfo -F depends`), listed in load order in /modules.load.
#
#   make-initramfs.sh KERNEL_DIR GUEST_DIR OUT.cpio.gz
set -euo pipefail
kernel=${1:?usage: make-initramfs.sh KERNEL_DIR GUEST_DIR OUT}
guest=${2:?}
out=${3:?}
modules="$kernel/modules/kernel"
busybox=/bin/busybox
# grep reads the whole list: with -q it may exit early and pipefail would see SIGPIPE.
[ -x "$busybox" ] && "$busybox" --list | grep -x ip >/dev/null || {
    echo "make-initramfs: $busybox (busybox-static) is missing" >&2
    exit 1
}

# What the guest loads: the paravirtual NIC and the NFS client with pNFS flex files.
wanted="virtio_pci virtio_net nfsv3 nfsv4 nfs_layout_flexfiles"

declare -A path_of=()
while IFS= read -r ko; do
    name=$(basename "$ko" .ko)
    path_of[${name//-/_}]=$ko
done < <(find "$modules" -name '*.ko')

declare -A placed=()
order=()
place() { # depth-first: dependencies before the module
    local name=${1//-/_} dep
    [ -n "${placed[$name]:-}" ] && return
    local ko=${path_of[$name]:-}
    [ -n "$ko" ] || { echo "make-initramfs: no module $name in $modules" >&2; exit 1; }
    placed[$name]=1
    for dep in $(/sbin/modinfo -F depends "$ko" | tr ',' ' '); do
        place "$dep"
    done
    order+=("$name")
}
for m in $wanted; do place "$m"; done

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage"/{bin,sbin,dev,proc,sys,tmp,mnt,etc,lib/modules,root}
cp "$busybox" "$stage/bin/busybox"
ln -s busybox "$stage/bin/sh"
install -m 0755 "$guest/init" "$stage/init"
: > "$stage/modules.load"
for name in "${order[@]}"; do
    cp "${path_of[$name]}" "$stage/lib/modules/$name.ko"
    echo "$name" >> "$stage/modules.load"
done
mkdir -p "$(dirname "$out")"
(cd "$stage" && find . | sort | cpio -o -H newc --quiet) | gzip -1 > "$out.tmp"
mv "$out.tmp" "$out"
echo "make-initramfs: $out (${#order[@]} modules: ${order[*]})"
