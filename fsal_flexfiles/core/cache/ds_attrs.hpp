// SPDX-License-Identifier: LGPL-3.0-or-later
//
// A data server's NFSv3 attributes (fleet::DsAttrs) as the WCC attribute cache takes them
// (wcc::DsAttrs), and the cache's key of a data file of a DataFileMap.
#pragma once

#include "cache/attr_cache.hpp"
#include "fleet/ds_types.hpp"
#include "model/data_files.hpp"

namespace flexfiles::mds {

// Every attribute LAYOUT_WCC carries (RFC 9766 Table 1) is in an NFSv3 fattr3; a time the
// cache cannot represent is left out of `valid` (a report without ctime is then ignored).
inline wcc::DsAttrs to_cache_attrs(const fleet::DsAttrs& a) {
    wcc::DsAttrs out;
    out.size = a.size;
    out.space_used = a.used;
    out.mode = a.mode;
    out.uid = a.uid;
    out.gid = a.gid;
    out.valid =
        wcc::kAttrSize | wcc::kAttrSpaceUsed | wcc::kAttrMode | wcc::kAttrOwner | wcc::kAttrGroup;
    if (auto t = wcc::NfsTime::from_parts(a.atime.seconds, a.atime.nseconds)) {
        out.atime = *t;
        out.valid |= wcc::kAttrAtime;
    }
    if (auto t = wcc::NfsTime::from_parts(a.mtime.seconds, a.mtime.nseconds)) {
        out.mtime = *t;
        out.valid |= wcc::kAttrMtime;
    }
    if (auto t = wcc::NfsTime::from_parts(a.ctime.seconds, a.ctime.nseconds)) {
        out.ctime = *t;
        out.valid |= wcc::kAttrCtime;
    }
    return out;
}

// The cache key of one data file: the MDS fileid, its mirror, data-server index 0 (each
// mirror is one data file: stripe width 1).
inline wcc::DataFileKey cache_key(const DataFileMap& map, const DataFile& df) {
    return wcc::DataFileKey{map.file_id,
                            wcc::DataFileSlot{static_cast<std::uint16_t>(df.mirror), 0}};
}

} // namespace flexfiles::mds
