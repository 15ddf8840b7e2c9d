#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-3.0-or-later
#
# RPM test: packaging/build-rpms.sh builds the RPMs with rpmbuild, and each carries what
# its Debian twin does: the core with ganesha.nfsd and libganesha_nfsd, every FSAL we ship
# pinned to the core of the same build, and nfs-ganesha-flexfiles with the module, the two
# CLIs, the samples and the documentation. (RPMs are not installed: this is Debian.)
#
#   rpm_test.sh REPO WORKDIR
#
# FF_PACKAGE_RPMS=DIR inspects RPMs already built there (scripts/run-tests.sh builds them
# while other tests run).
set -euo pipefail

repo="$1"
work="$2"
fail() {
    echo "rpm test: FAILED: $*" >&2
    exit 1
}

rm -rf "$work"
mkdir -p "$work"
rpms="${FF_PACKAGE_RPMS:-$work/rpms}"
if [ -z "${FF_PACKAGE_RPMS:-}" ]; then
    "$repo/packaging/build-rpms.sh" "$rpms" || fail "build-rpms.sh (log: $rpms/build.log)"
fi

# 4.3-2+ffwcc1 -> 4.3-2.ffwcc1 (the spec's Version-Release)
version="$(dpkg-parsechangelog -l "$repo/packaging/debian/changelog" -S Version | tr + .)"
rpm_of() { echo "$rpms/$1-$version.x86_64.rpm"; }
files_of() { rpm -qpl "$(rpm_of "$1")" 2>/dev/null; }

for p in nfs-ganesha nfs-ganesha-vfs nfs-ganesha-mem nfs-ganesha-nullfs nfs-ganesha-proxy-v4 \
         nfs-ganesha-flexfiles; do
    [ -f "$(rpm_of "$p")" ] || fail "$(basename "$(rpm_of "$p")") was not built"
done
# Match against captured output: with pipefail, "rpm ... | grep -q" fails at random when
# grep stops reading early and rpm dies of SIGPIPE.
expect() { # PACKAGE FILE
    grep -qx "$2" <<<"$(files_of "$1")" || fail "$1 does not contain $2"
}
expect nfs-ganesha /usr/bin/ganesha.nfsd
expect nfs-ganesha /usr/lib64/libganesha_nfsd.so.4.3
expect nfs-ganesha-vfs /usr/lib64/ganesha/libfsalvfs.so
expect nfs-ganesha-flexfiles /usr/lib64/ganesha/libfsalflexfiles.so
expect nfs-ganesha-flexfiles /usr/bin/ganesha-ff
expect nfs-ganesha-flexfiles /usr/bin/ff-client
expect nfs-ganesha-flexfiles /usr/share/doc/nfs-ganesha-flexfiles/examples/flexfiles-mds.conf
expect nfs-ganesha-flexfiles /usr/share/doc/nfs-ganesha-flexfiles/examples/nfsv3-data-server.conf
expect nfs-ganesha-flexfiles /usr/share/doc/nfs-ganesha-flexfiles/design.md
expect nfs-ganesha-flexfiles /usr/share/doc/nfs-ganesha-flexfiles/failover.md
expect nfs-ganesha-flexfiles /usr/share/doc/nfs-ganesha-flexfiles/scale-out.md
for p in nfs-ganesha-vfs nfs-ganesha-mem nfs-ganesha-nullfs nfs-ganesha-proxy-v4 \
         nfs-ganesha-flexfiles; do
    grep -qx "nfs-ganesha = $version" <<<"$(rpm -qpR "$(rpm_of "$p")" 2>/dev/null)" ||
        fail "$p does not require nfs-ganesha = $version"
done
echo "rpm test: PASSED: 6 RPMs at $version"
rm -rf "$work"
