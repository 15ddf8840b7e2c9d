// SPDX-License-Identifier: LGPL-3.0-or-later
//
// What one FLEXFILES export keeps about the layouts it has granted: the grant registry,
// the durable marks of files under RW layouts, the opens that may be granted RW layouts, the layout
// counters, the clients' error-report budgets, the fencing lock and GETDEVICELIST's cookie
// verifier. Owned by the export (export.hpp), so two exports never share or see each other's
// layouts.
#pragma once

#include "layout/authority.hpp"
#include "layout/grants.hpp"
#include "layout/report_limiter.hpp"
#include "layout/rw_grant_marks.hpp"

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>

namespace flexfiles::layout {

struct ExportLayouts {
    GrantRegistry grants;
    // Files under RW layouts, durable in the layout store (set when the data path opens).
    std::unique_ptr<RwGrantMarks> rw_marks;
    OpenRegistry opens; // who may be granted an RW layout (layout/authority.hpp)
    Counters counters;
    // Per client: how many data-server error reports may make the MDS probe and log.
    ReportLimiter reports;
    // Serialises fencings of this export's files (two conflicting opens of one file must
    // not both pick the "next" id from the same old one).
    std::mutex fence_mu;
    // GETDEVICELIST's cookie verifier: this export instance's, so cookies do not outlive
    // it (pnfs/device_info.cpp). Never 0 (what clients send with cookie 0).
    const std::uint64_t devicelist_verifier = new_devicelist_verifier();

private:
    static std::uint64_t new_devicelist_verifier() noexcept {
        const auto now = std::chrono::system_clock::now().time_since_epoch();
        return static_cast<std::uint64_t>(
                   std::chrono::duration_cast<std::chrono::nanoseconds>(now).count()) |
               1;
    }
};

} // namespace flexfiles::layout
