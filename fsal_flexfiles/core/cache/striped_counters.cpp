// SPDX-License-Identifier: LGPL-3.0-or-later
//
// Who owns which counter stripe (striped_counters.hpp).
#include "cache/striped_counters.hpp"

#include <mutex>

namespace flexfiles::wcc::counter_stripes {

namespace {

class StripeRegistry {
public:
    std::size_t acquire() {
        std::lock_guard lock(mu_);
        for (std::size_t i = 0; i < kOwnedStripes; ++i) {
            if (!taken_[i]) {
                taken_[i] = true;
                return i;
            }
        }
        return kSharedStripe;
    }
    void release(std::size_t i) {
        if (i < kOwnedStripes) {
            std::lock_guard lock(mu_);
            taken_[i] = false;
        }
    }

private:
    std::mutex mu_;
    std::array<bool, kOwnedStripes> taken_{};
};

StripeRegistry& stripe_registry() {
    static StripeRegistry* r = new StripeRegistry; // outlives every thread's ThreadStripe
    return *r;
}

} // namespace

std::size_t acquire() {
    return stripe_registry().acquire();
}

void release(std::size_t stripe) {
    stripe_registry().release(stripe);
}

} // namespace flexfiles::wcc::counter_stripes
