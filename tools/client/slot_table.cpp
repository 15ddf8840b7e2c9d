// SPDX-License-Identifier: LGPL-3.0-or-later
#include "slot_table.hpp"

#include <algorithm>

namespace flexfiles::client {

SlotTable::SlotTable(uint32_t slots)
    : slots_(std::max<uint32_t>(slots, 1)), target_highest_(std::max<uint32_t>(slots, 1) - 1) {}

uint32_t SlotTable::highest_busy_locked() const {
    uint32_t highest = 0;
    for (uint32_t i = 0; i < slots_.size(); ++i) {
        if (slots_[i].busy) {
            highest = i;
        }
    }
    return highest;
}

std::optional<SlotTable::Lease> SlotTable::acquire(std::chrono::steady_clock::time_point deadline) {
    std::unique_lock lock(mu_);
    while (true) {
        bool any_usable = false;
        const uint32_t limit = std::min<uint32_t>(target_highest_ + 1, size());
        for (uint32_t i = 0; i < limit; ++i) {
            Slot& s = slots_[i];
            if (s.retired) {
                continue;
            }
            any_usable = true;
            if (!s.busy) {
                s.busy = true;
                return Lease{i, s.seqid, highest_busy_locked()};
            }
        }
        if (!any_usable) {
            return std::nullopt;
        }
        if (freed_.wait_until(lock, deadline) == std::cv_status::timeout) {
            return std::nullopt;
        }
    }
}

void SlotTable::release(uint32_t slot, Outcome outcome, std::optional<uint32_t> target_highest) {
    {
        std::lock_guard lock(mu_);
        if (slot >= slots_.size()) {
            return;
        }
        Slot& s = slots_[slot];
        s.busy = false;
        switch (outcome) {
        case Outcome::processed:
            s.seqid++;
            break;
        case Outcome::not_processed:
            break;
        case Outcome::unknown:
            s.retired = true;
            break;
        }
        if (target_highest) {
            target_highest_ = std::min<uint32_t>(*target_highest, size() - 1);
        }
    }
    freed_.notify_all();
}

uint32_t SlotTable::usable() const {
    std::lock_guard lock(mu_);
    const uint32_t limit = std::min<uint32_t>(target_highest_ + 1, size());
    uint32_t n = 0;
    for (uint32_t i = 0; i < limit; ++i) {
        n += slots_[i].retired ? 0 : 1;
    }
    return n;
}

uint32_t SlotTable::retired() const {
    std::lock_guard lock(mu_);
    return static_cast<uint32_t>(
        std::count_if(slots_.begin(), slots_.end(), [](const Slot& s) { return s.retired; }));
}

} // namespace flexfiles::client
