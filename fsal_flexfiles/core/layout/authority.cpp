// SPDX-License-Identifier: LGPL-3.0-or-later
#include "layout/authority.hpp"

#include <algorithm>

namespace flexfiles::layout {

DsCredentials layout_credentials(const mds::DataFile& file, Iomode iomode,
                                 std::uint32_t read_uid) noexcept {
    if (iomode == Iomode::ReadWrite)
        return {file.fencing_uid, file.fencing_gid};
    return {read_uid, file.fencing_gid};
}

void OpenRegistry::set(const void* key, std::uint64_t file, std::uint64_t client, bool write) {
    std::lock_guard lock(mu_);
    auto [it, inserted] = by_state_.try_emplace(key, Entry{file, client, write});
    if (!inserted) {
        if (it->second.file == file) {
            it->second.client = client;
            it->second.write = write;
            return;
        }
        // The address now names a state of another file (the old one was freed unseen).
        auto& old = by_file_[it->second.file];
        std::erase(old, key);
        if (old.empty())
            by_file_.erase(it->second.file);
        it->second = Entry{file, client, write};
    }
    by_file_[file].push_back(key);
}

void OpenRegistry::forget(const void* key) {
    std::lock_guard lock(mu_);
    const auto it = by_state_.find(key);
    if (it == by_state_.end())
        return;
    const auto f = by_file_.find(it->second.file);
    if (f != by_file_.end()) {
        std::erase(f->second, key);
        if (f->second.empty())
            by_file_.erase(f);
    }
    by_state_.erase(it);
}

bool OpenRegistry::client_may_write(std::uint64_t file, std::uint64_t client) const {
    std::lock_guard lock(mu_);
    const auto f = by_file_.find(file);
    if (f == by_file_.end())
        return false;
    return std::any_of(f->second.begin(), f->second.end(), [&](const void* key) {
        const Entry& e = by_state_.at(key);
        return e.client == client && e.write;
    });
}

std::size_t OpenRegistry::size() const {
    std::lock_guard lock(mu_);
    return by_state_.size();
}

} // namespace flexfiles::layout
