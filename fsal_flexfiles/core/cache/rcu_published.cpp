// SPDX-License-Identifier: LGPL-3.0-or-later
#define _LGPL_SOURCE
#include "cache/rcu_published.hpp"

#include <memory>
#include <new>
#include <type_traits>
#include <urcu-bp.h>

namespace flexfiles::wcc {

namespace {

// Standard layout, so that the rcu_head call_rcu hands back converts to its Retired.
struct Retired {
    using Owner = std::shared_ptr<const void>;
    rcu_head head;
    alignas(Owner) unsigned char owner[sizeof(Owner)];
};
static_assert(std::is_standard_layout_v<Retired>);

void free_retired(rcu_head* head) {
    auto* r = reinterpret_cast<Retired*>(head);
    std::destroy_at(std::launder(reinterpret_cast<Retired::Owner*>(r->owner)));
    delete r;
}

} // namespace

RcuReadLock::RcuReadLock() noexcept {
    rcu_read_lock();
}

RcuReadLock::~RcuReadLock() {
    rcu_read_unlock();
}

void release_after_grace_period(std::shared_ptr<const void> owner) {
    auto* r = new Retired{};
    new (r->owner) Retired::Owner(std::move(owner));
    call_rcu(&r->head, free_retired);
}

} // namespace flexfiles::wcc
