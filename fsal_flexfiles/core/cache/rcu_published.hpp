// SPDX-License-Identifier: LGPL-3.0-or-later
//
// A value that readers reach with one load and no lock, for the FSAL's hot paths (a
// handle's data-file map on GETATTR). Writers are rare (placement, fencing, removal) and
// serialise among themselves; readers run inside an RCU read section (urcu-bp, Ganesha's
// flavour) and may use what read() gave them until the section ends: a replaced value's
// owner is released only after a grace period.
//
// Ownership stays with std::shared_ptr for everyone who needs the value longer than a read
// section (the GETATTR fallback waits for data servers; an RCU section must not block).
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <utility>

namespace flexfiles::wcc {

/// rcu_read_lock / rcu_read_unlock as a scope. Sections nest.
class RcuReadLock {
public:
    RcuReadLock() noexcept;
    ~RcuReadLock();
    RcuReadLock(const RcuReadLock&) = delete;
    RcuReadLock& operator=(const RcuReadLock&) = delete;
};

/// Drops `owner` after a grace period: every read section open now has ended by then.
void release_after_grace_period(std::shared_ptr<const void> owner);

template <class T> class RcuPublished {
public:
    RcuPublished() = default;
    ~RcuPublished() = default; // no reader may be left: the owner goes at once
    RcuPublished(const RcuPublished&) = delete;
    RcuPublished& operator=(const RcuPublished&) = delete;

    /// The current value or nullptr, valid until the caller's RcuReadLock ends.
    const T* read() const noexcept { return fast_.load(std::memory_order_acquire); }
    /// The current value, owned.
    std::shared_ptr<const T> get() const {
        std::lock_guard lock(mu_);
        return owner_;
    }
    /// Makes next the value; readers of the old one keep it until their sections end.
    void publish(std::shared_ptr<const T> next) {
        std::shared_ptr<const T> old;
        {
            std::lock_guard lock(mu_);
            old = std::exchange(owner_, std::move(next));
            fast_.store(owner_.get(), std::memory_order_release);
        }
        if (old)
            release_after_grace_period(std::move(old));
    }

private:
    mutable std::mutex mu_;
    std::shared_ptr<const T> owner_; // guarded by mu_
    std::atomic<const T*> fast_{nullptr};
};

} // namespace flexfiles::wcc
