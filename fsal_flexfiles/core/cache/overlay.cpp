// SPDX-License-Identifier: LGPL-3.0-or-later
#include "cache/overlay.hpp"

#include <algorithm>

namespace flexfiles::wcc {

const char* to_string(FetchReason r) {
    switch (r) {
    case FetchReason::None:
        return "cached";
    case FetchReason::Empty:
        return "nothing cached";
    case FetchReason::Stale:
        return "older than WCC_Max_Age";
    case FetchReason::Relearn:
        return "learned while the previous instance's layouts could write";
    }
    return "?";
}

FetchReason fetch_reason(const std::optional<MergedAttrs>& merged, bool rw_layout_outstanding,
                         std::int64_t max_age_ns, std::int64_t now_ns,
                         std::int64_t relearn_before_ns) {
    if (!merged || merged->data_files == 0) {
        return FetchReason::Empty;
    }
    if (merged->learned_ns < relearn_before_ns) {
        return FetchReason::Relearn;
    }
    if (!rw_layout_outstanding) {
        return FetchReason::None;
    }
    if (max_age_ns <= 0 || merged->older_than(max_age_ns, now_ns)) {
        return FetchReason::Stale;
    }
    return FetchReason::None;
}

std::uint16_t overlay(const MergedAttrs& merged, FileAttrView& view) {
    const DsAttrs& d = merged.attrs;
    std::uint16_t set = 0;
    if (d.has(kAttrSize)) {
        view.size = d.size;
        set |= kAttrSize;
    }
    if (d.has(kAttrSpaceUsed)) {
        view.space_used = d.space_used;
        set |= kAttrSpaceUsed;
    }
    if (d.has(kAttrMtime)) {
        view.mtime = d.mtime;
        set |= kAttrMtime;
    }
    if (d.has(kAttrAtime)) {
        view.atime = (view.valid & kAttrAtime) ? std::max(view.atime, d.atime) : d.atime;
        set |= kAttrAtime;
    }
    if (d.has(kAttrCtime)) {
        view.ctime = (view.valid & kAttrCtime) ? std::max(view.ctime, d.ctime) : d.ctime;
        set |= kAttrCtime;
        if (view.has_change) {
            view.change += static_cast<std::uint64_t>(d.ctime.ns);
        }
    }
    view.valid |= set;
    return set;
}

} // namespace flexfiles::wcc
