// SPDX-License-Identifier: LGPL-3.0-or-later
#include "layout/previous_instance.hpp"

namespace flexfiles::layout {

void PreviousInstanceWindow::start(bool had_files, std::int64_t now_ns,
                                   std::int64_t lease_ns) noexcept {
    earliest_close_ns_ = now_ns + lease_ns;
    closed_at_ns_.store(had_files ? kOpen : 0, std::memory_order_release);
}

PreviousInstanceWindow::View PreviousInstanceWindow::at(std::int64_t now_ns,
                                                        bool (*in_grace)()) noexcept {
    std::int64_t closed = closed_at_ns_.load(std::memory_order_acquire);
    if (closed == kOpen) {
        if (now_ns < earliest_close_ns_ || (in_grace != nullptr && in_grace()))
            return View{true, 0};
        // The first caller after the end closes it; a racing one reads that time.
        if (closed_at_ns_.compare_exchange_strong(closed, now_ns, std::memory_order_acq_rel))
            closed = now_ns;
    }
    return View{false, closed};
}

} // namespace flexfiles::layout
