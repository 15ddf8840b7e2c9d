// SPDX-License-Identifier: LGPL-3.0-or-later
//
// Stale mirrors: mirrors that missed a write the file's other mirrors took.
//
// Mirrors hold the same bytes only while every write reaches every mirror. When a write
// through the MDS reaches some mirrors and not others (a data server down, frozen, full),
// failing the client's write would not undo anything: the mirrors that took it keep the
// new bytes, and reads would then answer old or new bytes depending on the mirror they
// pick. FLEXFILES instead degrades, as RAID 1 does:
//
//   * the mirrors that missed the write are marked stale in the layout store before the
//     client hears success (the write itself is FILE_SYNC on every in-sync mirror); if the
//     mark cannot be persisted, the write fails;
//   * the last in-sync mirror is never marked: when every in-sync mirror fails, the write
//     fails and nothing is marked;
//   * a stale mirror is not read from (proxy reads) and not handed out in layouts
//     (LAYOUTGET names the in-sync mirrors only), but writes through the MDS still go to
//     it, best effort: its failures no longer fail a write;
//   * the resilverer (resilver.hpp) copies an in-sync mirror over a stale one and clears
//     the mark, but only when it can show that nothing wrote the file while it copied.
//
// This class is the in-memory view of the marks (loaded at start, written through to the
// store, so a restart forgets nothing) plus what that showing needs: per file, the number
// of writes through the MDS in flight and an epoch that every write's end, every RW layout
// granted and every new mark moves on. Where several MDSs share the namespace, the marks
// are also on the files' namespace objects and each MDS takes the others' into this
// registry (data_path/namespace_marks.cpp, docs/scale-out.md).
//
// Thread-safe. One mutex; of() takes it only while some file has a stale mirror.
#pragma once

#include "store/layout_store.hpp"

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

namespace flexfiles::mds {

class StaleMirrors {
public:
    // Called (outside the registry's lock) after mark() marked something: layouts granted
    // before name the mirror, so the export recalls them, but not from `reporter` (the
    // client whose report marked it, 0 for none: it knows).
    using MarkedHook =
        std::function<void(const ObjectKey& key, std::uint64_t file_id, std::uint64_t reporter)>;

    explicit StaleMirrors(LayoutStore& store, MarkedHook on_marked = {})
        : store_(store), on_marked_(std::move(on_marked)) {}

    // At start: the marks the store holds.
    StoreStatus load();

    // The file's stale mirrors, ascending (empty for nearly every file).
    std::vector<std::uint32_t> of(std::uint64_t file_id) const;
    // Every mark, oldest first.
    std::vector<StaleMirror> list() const;
    std::size_t count() const { return count_.load(std::memory_order_acquire); }

    // Marks `mirrors` of the file (which has `mirror_count`) stale: in the store, then
    // here. Refused, with nothing marked, when no in-sync mirror would be left.
    StoreStatus mark(const ObjectKey& key, std::uint64_t file_id, std::uint32_t mirror_count,
                     const std::vector<std::uint32_t>& mirrors, const std::string& reason,
                     std::uint64_t reporter = 0);

    // A write or truncate through the MDS (RAII: see WriteBracket).
    void write_begin(std::uint64_t file_id);
    void write_end(std::uint64_t file_id);
    // LAYOUTGET: the mirrors to leave out of the layout; for an RW layout (a client may
    // write the in-sync mirrors directly) the file's epoch moves on in the same step, so a
    // copy in progress is not taken for complete.
    std::vector<std::uint32_t> for_layout(std::uint64_t file_id, bool read_write);

    // The file's epoch, or std::nullopt while a write through the MDS is in flight.
    std::optional<std::uint64_t> quiet_epoch(std::uint64_t file_id) const;
    // Clears the mark (store, then here) if the file's epoch is still `epoch` and no write
    // is in flight; false (nothing cleared) when the file moved on.
    StoreResult<bool> clear_if_quiet(const ObjectKey& key, std::uint64_t file_id,
                                     std::uint32_t mirror, std::uint64_t epoch);

    // The file was removed (its marks went with its map in the store).
    void forget(std::uint64_t file_id);

private:
    struct Entry {
        std::vector<StaleMirror> marks; // by mirror, ascending
        std::uint32_t writers = 0;
        std::uint64_t epoch = 0;
    };
    StoreStatus mark_locked(const ObjectKey& key, std::uint64_t file_id, std::uint32_t mirror_count,
                            const std::vector<std::uint32_t>& mirrors, const std::string& reason,
                            bool& marked);
    void erase_if_idle(std::unordered_map<std::uint64_t, Entry>::iterator it);
    void recount();

    LayoutStore& store_;
    const MarkedHook on_marked_;
    mutable std::mutex mu_;
    std::unordered_map<std::uint64_t, Entry> files_; // files with marks or writes in flight
    std::uint64_t next_epoch_ = 1;                   // global, so an erased entry never repeats one
    std::atomic<std::size_t> count_{0};              // marks in files_
};

// Brackets one write through the MDS; does nothing without a registry.
class WriteBracket {
public:
    WriteBracket(StaleMirrors* stale, std::uint64_t file_id) : stale_(stale), file_id_(file_id) {
        if (stale_ != nullptr)
            stale_->write_begin(file_id_);
    }
    ~WriteBracket() {
        if (stale_ != nullptr)
            stale_->write_end(file_id_);
    }
    WriteBracket(const WriteBracket&) = delete;
    WriteBracket& operator=(const WriteBracket&) = delete;

private:
    StaleMirrors* stale_;
    std::uint64_t file_id_;
};

} // namespace flexfiles::mds
