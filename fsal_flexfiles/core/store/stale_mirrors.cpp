// SPDX-License-Identifier: LGPL-3.0-or-later
#include "store/stale_mirrors.hpp"

#include <algorithm>
#include <tuple>

namespace flexfiles::mds {

StoreStatus StaleMirrors::load() {
    auto all = store_.stale_mirrors();
    if (!all.ok())
        return all.status;
    std::lock_guard lk(mu_);
    files_.clear();
    for (StaleMirror& m : all.value) {
        Entry& e = files_[m.file_id];
        e.epoch = next_epoch_++;
        e.marks.push_back(std::move(m));
    }
    for (auto& [id, e] : files_)
        std::sort(e.marks.begin(), e.marks.end(),
                  [](const StaleMirror& a, const StaleMirror& b) { return a.mirror < b.mirror; });
    recount();
    return {};
}

std::vector<std::uint32_t> StaleMirrors::of(std::uint64_t file_id) const {
    std::vector<std::uint32_t> out;
    if (count() == 0)
        return out;
    std::lock_guard lk(mu_);
    auto it = files_.find(file_id);
    if (it != files_.end())
        for (const StaleMirror& m : it->second.marks)
            out.push_back(m.mirror);
    return out;
}

std::vector<StaleMirror> StaleMirrors::list() const {
    std::vector<StaleMirror> out;
    {
        std::lock_guard lk(mu_);
        for (const auto& [id, e] : files_)
            out.insert(out.end(), e.marks.begin(), e.marks.end());
    }
    std::sort(out.begin(), out.end(), [](const StaleMirror& a, const StaleMirror& b) {
        return std::tie(a.since_ms, a.file_id, a.mirror) <
               std::tie(b.since_ms, b.file_id, b.mirror);
    });
    return out;
}

StoreStatus StaleMirrors::mark(const ObjectKey& key, std::uint64_t file_id,
                               std::uint32_t mirror_count,
                               const std::vector<std::uint32_t>& mirrors, const std::string& reason,
                               std::uint64_t reporter) {
    bool marked = false;
    if (StoreStatus st = mark_locked(key, file_id, mirror_count, mirrors, reason, marked); !st.ok())
        return st;
    if (marked && on_marked_)
        on_marked_(key, file_id, reporter);
    return {};
}

StoreStatus StaleMirrors::mark_locked(const ObjectKey& key, std::uint64_t file_id,
                                      std::uint32_t mirror_count,
                                      const std::vector<std::uint32_t>& mirrors,
                                      const std::string& reason, bool& marked) {
    std::lock_guard lk(mu_);
    Entry& e = files_[file_id];
    std::vector<std::uint32_t> fresh;
    for (std::uint32_t m : mirrors) {
        const bool known = std::any_of(e.marks.begin(), e.marks.end(),
                                       [m](const StaleMirror& s) { return s.mirror == m; });
        if (!known && std::find(fresh.begin(), fresh.end(), m) == fresh.end())
            fresh.push_back(m);
    }
    if (fresh.empty()) {
        erase_if_idle(files_.find(file_id));
        return {};
    }
    if (e.marks.size() + fresh.size() >= mirror_count) {
        erase_if_idle(files_.find(file_id));
        return StoreStatus{"file " + std::to_string(file_id) +
                           ": marking would leave no in-sync mirror, nothing marked"};
    }
    if (StoreStatus st = store_.mark_stale(key, file_id, fresh, reason); !st.ok()) {
        erase_if_idle(files_.find(file_id));
        return st;
    }
    const std::int64_t now = wall_clock_ms();
    for (std::uint32_t m : fresh)
        e.marks.push_back(StaleMirror{key, file_id, m, now, reason});
    std::sort(e.marks.begin(), e.marks.end(),
              [](const StaleMirror& a, const StaleMirror& b) { return a.mirror < b.mirror; });
    e.epoch = next_epoch_++;
    recount();
    marked = true;
    return {};
}

void StaleMirrors::write_begin(std::uint64_t file_id) {
    std::lock_guard lk(mu_);
    Entry& e = files_[file_id];
    ++e.writers;
    e.epoch = next_epoch_++;
}

void StaleMirrors::write_end(std::uint64_t file_id) {
    std::lock_guard lk(mu_);
    auto it = files_.find(file_id);
    if (it == files_.end())
        return;
    if (it->second.writers > 0)
        --it->second.writers;
    it->second.epoch = next_epoch_++;
    erase_if_idle(it);
}

std::vector<std::uint32_t> StaleMirrors::for_layout(std::uint64_t file_id, bool read_write) {
    std::vector<std::uint32_t> out;
    if (count() == 0)
        return out;
    std::lock_guard lk(mu_);
    auto it = files_.find(file_id);
    if (it == files_.end())
        return out;
    for (const StaleMirror& m : it->second.marks)
        out.push_back(m.mirror);
    if (read_write)
        it->second.epoch = next_epoch_++;
    return out;
}

std::optional<std::uint64_t> StaleMirrors::quiet_epoch(std::uint64_t file_id) const {
    std::lock_guard lk(mu_);
    auto it = files_.find(file_id);
    if (it == files_.end())
        return std::nullopt; // no marks: nothing to resilver
    if (it->second.writers > 0)
        return std::nullopt;
    return it->second.epoch;
}

StoreResult<bool> StaleMirrors::clear_if_quiet(const ObjectKey& key, std::uint64_t file_id,
                                               std::uint32_t mirror, std::uint64_t epoch) {
    StoreResult<bool> out;
    std::lock_guard lk(mu_);
    auto it = files_.find(file_id);
    if (it == files_.end() || it->second.writers > 0 || it->second.epoch != epoch)
        return out;
    auto& marks = it->second.marks;
    auto m = std::find_if(marks.begin(), marks.end(),
                          [mirror](const StaleMirror& s) { return s.mirror == mirror; });
    if (m == marks.end())
        return out;
    if (StoreStatus st = store_.clear_stale(key, mirror); !st.ok()) {
        out.status = st;
        return out;
    }
    marks.erase(m);
    it->second.epoch = next_epoch_++;
    erase_if_idle(it);
    recount();
    out.value = true;
    return out;
}

void StaleMirrors::forget(std::uint64_t file_id) {
    std::lock_guard lk(mu_);
    auto it = files_.find(file_id);
    if (it == files_.end())
        return;
    it->second.marks.clear();
    it->second.epoch = next_epoch_++;
    erase_if_idle(it);
    recount();
}

void StaleMirrors::erase_if_idle(std::unordered_map<std::uint64_t, Entry>::iterator it) {
    if (it != files_.end() && it->second.writers == 0 && it->second.marks.empty())
        files_.erase(it);
}

void StaleMirrors::recount() {
    std::size_t n = 0;
    for (const auto& [id, e] : files_)
        n += e.marks.size();
    count_.store(n, std::memory_order_release);
}

} // namespace flexfiles::mds
