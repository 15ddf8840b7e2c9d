// SPDX-License-Identifier: LGPL-3.0-or-later
#include "layout/grants.hpp"

#include <algorithm>

namespace flexfiles::layout {

void GrantRegistry::add(Grant& grant, UnseenFlag* flag) {
    std::lock_guard lock(mu_);
    grant.id = next_id_++;
    by_file_[grant.file].push_back(&grant);
    count_++;
    mirror_locked(grant.file, flag);
}

bool GrantRegistry::remove(const Grant& grant, UnseenFlag* flag) {
    std::lock_guard lock(mu_);
    auto it = by_file_.find(grant.file);
    if (it == by_file_.end())
        return false;
    auto& list = it->second;
    auto pos = std::find(list.begin(), list.end(), &grant);
    if (pos == list.end())
        return false;
    list.erase(pos);
    if (list.empty())
        by_file_.erase(it);
    count_--;
    if (grant.iomode == Iomode::ReadWrite && !rw_granted_locked(grant.file))
        unseen_[grant.file] = std::chrono::steady_clock::now();
    mirror_locked(grant.file, flag);
    return true;
}

bool GrantRegistry::rw_granted_locked(std::uint64_t file) const {
    auto it = by_file_.find(file);
    if (it == by_file_.end())
        return false;
    return std::any_of(it->second.begin(), it->second.end(),
                       [](const Grant* g) { return g->iomode == Iomode::ReadWrite; });
}

bool GrantRegistry::writes_unseen_locked(std::uint64_t file) const {
    return unseen_.contains(file) || rw_granted_locked(file);
}

void GrantRegistry::mirror_locked(std::uint64_t file, UnseenFlag* flag) const {
    if (flag != nullptr)
        flag->store(writes_unseen_locked(file), std::memory_order_release);
}

bool GrantRegistry::writes_unseen(std::uint64_t file) const {
    std::lock_guard lock(mu_);
    return writes_unseen_locked(file);
}

void GrantRegistry::mirror_unseen(std::uint64_t file, UnseenFlag& flag) const {
    std::lock_guard lock(mu_);
    mirror_locked(file, &flag);
}

void GrantRegistry::data_servers_seen(std::uint64_t file,
                                      std::chrono::steady_clock::time_point asked,
                                      UnseenFlag* flag) {
    std::lock_guard lock(mu_);
    auto it = unseen_.find(file);
    if (it != unseen_.end() && it->second <= asked)
        unseen_.erase(it);
    mirror_locked(file, flag);
}

void GrantRegistry::forget_unseen(std::uint64_t file, UnseenFlag* flag) {
    std::lock_guard lock(mu_);
    unseen_.erase(file);
    mirror_locked(file, flag);
}

std::size_t GrantRegistry::files_unseen() const {
    std::lock_guard lock(mu_);
    return unseen_.size();
}

std::vector<std::uint64_t> GrantRegistry::holders(std::uint64_t file, std::uint64_t except,
                                                  std::optional<Iomode> iomode) const {
    std::vector<std::uint64_t> out;
    std::lock_guard lock(mu_);
    auto it = by_file_.find(file);
    if (it == by_file_.end())
        return out;
    for (const Grant* g : it->second) {
        if (except != 0 && g->client == except)
            continue;
        if (iomode && g->iomode != *iomode)
            continue;
        if (std::find(out.begin(), out.end(), g->client) == out.end())
            out.push_back(g->client);
    }
    return out;
}

std::size_t GrantRegistry::grants(std::uint64_t file) const {
    std::lock_guard lock(mu_);
    auto it = by_file_.find(file);
    return it == by_file_.end() ? 0 : it->second.size();
}

std::size_t GrantRegistry::size() const {
    std::lock_guard lock(mu_);
    return count_;
}

std::uint32_t next_fencing_id(std::uint32_t current, std::uint32_t min,
                              std::uint32_t max) noexcept {
    if (max < min)
        std::swap(min, max);
    if (current < min || current >= max)
        return min;
    return current + 1;
}

} // namespace flexfiles::layout
