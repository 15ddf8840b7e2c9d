// SPDX-License-Identifier: LGPL-3.0-or-later
#include "layout/fence_plan.hpp"

#include <algorithm>

namespace flexfiles::layout {

bool ended_by_holder(SegmentEnd end) noexcept {
    switch (end) {
    case SegmentEnd::returned:
    case SegmentEnd::reclaimed:
    case SegmentEnd::closed:
    case SegmentEnd::forgotten:
    case SegmentEnd::unsent:
        return true;
    case SegmentEnd::revoked:
    case SegmentEnd::server_shutdown:
        return false;
    }
    return false;
}

bool layout_still_writes(const mds::DataFileMap& granted,
                         const mds::DataFileMap& current) noexcept {
    for (const mds::DataFile& g : granted.files)
        for (const mds::DataFile& c : current.files)
            if (c.mirror == g.mirror && c.fencing_uid == g.fencing_uid &&
                c.fencing_gid == g.fencing_gid)
                return true;
    return false;
}

StalePlan stale_after_failed_fence(const std::vector<std::uint32_t>& failed,
                                   const std::vector<std::uint32_t>& stale_now,
                                   std::uint32_t mirror_count) {
    auto stale = [&](std::uint32_t m) {
        return std::find(stale_now.begin(), stale_now.end(), m) != stale_now.end();
    };
    StalePlan plan;
    for (std::uint32_t m : failed)
        if (m < mirror_count && !stale(m) &&
            std::find(plan.mark.begin(), plan.mark.end(), m) == plan.mark.end())
            plan.mark.push_back(m);
    std::sort(plan.mark.begin(), plan.mark.end());
    std::uint32_t in_sync = 0;
    for (std::uint32_t m = 0; m < mirror_count; m++)
        if (!stale(m))
            in_sync++;
    if (!plan.mark.empty() && plan.mark.size() >= in_sync) {
        plan.kept_in_sync = plan.mark.front();
        plan.mark.erase(plan.mark.begin());
    }
    return plan;
}

} // namespace flexfiles::layout
