// SPDX-License-Identifier: LGPL-3.0-or-later
#include "layout/rw_grant_marks.hpp"

namespace flexfiles::layout {

bool RwGrantMarks::write_with_drops(const CreateCommit& write) {
    std::vector<Key> drop(to_drop_.begin(), to_drop_.end());
    if (!write(drop))
        return false;
    for (const Key& k : drop)
        durable_.erase(k);
    to_drop_.clear();
    return true;
}

bool RwGrantMarks::granted(const Key& key, std::uint64_t file_id, std::string& error,
                           const Key& handle) {
    std::lock_guard lock(mu_);
    if (durable_.count(key) != 0) {
        to_drop_.erase(key); // still needed: the lazy drop must not remove it
        held_[key]++;
        return true;
    }
    if (!write_with_drops([&](const std::vector<Key>& drop) {
            return persist_({Mark{key, file_id, handle}}, drop, error);
        }))
        return false;
    durable_.insert(key);
    held_[key]++;
    return true;
}

bool RwGrantMarks::with_create(const Key& key, const CreateCommit& commit) {
    std::lock_guard lock(mu_);
    if (!write_with_drops(commit))
        return false;
    durable_.insert(key);
    if (held_.count(key) == 0)
        to_drop_.insert(key);
    return true;
}

void RwGrantMarks::ended(const Key& key) {
    std::lock_guard lock(mu_);
    const auto it = held_.find(key);
    if (it == held_.end())
        return;
    if (--it->second == 0) {
        held_.erase(it);
        to_drop_.insert(key);
    }
}

bool RwGrantMarks::flush(std::string& error) {
    std::lock_guard lock(mu_);
    if (to_drop_.empty())
        return true;
    return write_with_drops(
        [&](const std::vector<Key>& drop) { return persist_({}, drop, error); });
}

std::size_t RwGrantMarks::files_held() const {
    std::lock_guard lock(mu_);
    return held_.size();
}

std::size_t RwGrantMarks::drops_pending() const {
    std::lock_guard lock(mu_);
    return to_drop_.size();
}

} // namespace flexfiles::layout
