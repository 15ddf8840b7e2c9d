// SPDX-License-Identifier: LGPL-3.0-or-later
#include "fleet/libnfs_nfs3.hpp"

#include <cstdint>
#include <cstring>

namespace flexfiles::fleet {

nfs3::Time from_libnfs(const nfstime3& t) {
    return {t.seconds, t.nseconds};
}

nfs3::Fattr from_libnfs(const fattr3& a) {
    nfs3::Fattr out;
    out.type = static_cast<nfs3::Ftype>(enum_bits(a.type));
    out.mode = a.mode;
    out.nlink = a.nlink;
    out.uid = a.uid;
    out.gid = a.gid;
    out.size = a.size;
    out.used = a.used;
    out.rdev_major = a.rdev.specdata1;
    out.rdev_minor = a.rdev.specdata2;
    out.fsid = a.fsid;
    out.fileid = a.fileid;
    out.atime = from_libnfs(a.atime);
    out.mtime = from_libnfs(a.mtime);
    out.ctime = from_libnfs(a.ctime);
    return out;
}

std::optional<nfs3::Fattr> from_libnfs(const post_op_attr& a) {
    if (!a.attributes_follow)
        return std::nullopt;
    return from_libnfs(a.post_op_attr_u.attributes);
}

std::optional<nfs3::WccAttr> from_libnfs(const pre_op_attr& a) {
    if (!a.attributes_follow)
        return std::nullopt;
    const wcc_attr& b = a.pre_op_attr_u.attributes;
    return nfs3::WccAttr{b.size, from_libnfs(b.mtime), from_libnfs(b.ctime)};
}

nfs3::Wcc from_libnfs(const wcc_data& w) {
    return {from_libnfs(w.before), from_libnfs(w.after)};
}

nfs3::WriteVerf from_libnfs(const writeverf3& v) {
    static_assert(sizeof(nfs3::WriteVerf) == sizeof(writeverf3));
    nfs3::WriteVerf out;
    std::memcpy(out.data(), v, out.size());
    return out;
}

nfstime3 to_libnfs(const nfs3::Time& t) {
    return {t.seconds, t.nseconds};
}

sattr3 to_libnfs(const nfs3::SetAttrs& s) {
    sattr3 out;
    std::memset(&out, 0, sizeof(out));
    if (s.mode) {
        out.mode.set_it = 1;
        out.mode.set_mode3_u.mode = *s.mode;
    }
    if (s.uid) {
        out.uid.set_it = 1;
        out.uid.set_uid3_u.uid = *s.uid;
    }
    if (s.gid) {
        out.gid.set_it = 1;
        out.gid.set_gid3_u.gid = *s.gid;
    }
    if (s.size) {
        out.size.set_it = 1;
        out.size.set_size3_u.size = *s.size;
    }
    out.atime.set_it = DONT_CHANGE;
    out.mtime.set_it = DONT_CHANGE;
    if (s.atime) {
        out.atime.set_it = SET_TO_CLIENT_TIME;
        out.atime.set_atime_u.atime = to_libnfs(*s.atime);
    }
    if (s.mtime) {
        out.mtime.set_it = SET_TO_CLIENT_TIME;
        out.mtime.set_mtime_u.mtime = to_libnfs(*s.mtime);
    }
    return out;
}

} // namespace flexfiles::fleet
