// SPDX-License-Identifier: LGPL-3.0-or-later
//
// Which files some client may hold an RW layout on, kept durable for the next instance of
// the MDS. Layouts live in memory: after a crash, or on the standby of a failover pair,
// nothing would say which data files clients can still write with credentials the new
// instance never saw. With these marks it fences those files (new owner on every data
// file) before it grants a layout (pnfs/fencing.cpp, fence_previous_rw_layouts).
//
// A file is marked before its first RW layout goes out (granted() returns once the mark
// is durable; a create marks it with its map, with_create()) and unmarked after its last
// one ended. Unmarking is lazy: the drops ride on the next mark's transaction (or
// flush()), so a file's RW layout costs one store
// transaction, not two; a mark left behind only makes the next start fence a file that
// needed none. Thread-safe: one mutex, held across the store call, so that a mark and a
// drop of one file never cross.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace flexfiles::layout {

class RwGrantMarks {
public:
    using Key = std::vector<std::uint8_t>; // the namespace object's handle key
    struct Mark {
        Key key;
        std::uint64_t file_id = 0;
        Key handle; // the namespace FSAL's host handle, when the export records it
    };
    // Makes `add` durable and drops `drop` in one transaction; false (and `error`) when
    // nothing changed.
    using Persist = std::function<bool(const std::vector<Mark>& add, const std::vector<Key>& drop,
                                       std::string& error)>;

    explicit RwGrantMarks(Persist persist) : persist_(std::move(persist)) {}

    // An RW layout of the file is about to go out. True once the file's mark is durable
    // (at once when it already was); false when the store failed: the layout must not go
    // out (error says why).
    bool granted(const Key& key, std::uint64_t file_id, std::string& error, const Key& handle = {});
    // A create: `commit` writes the new file's map together with its mark, dropping the
    // marks in `drops` in the same transaction (its RW layout follows at once, and then
    // granted() costs no transaction). Until a layout comes, the new mark waits to be
    // dropped like any other. Returns what commit returned.
    using CreateCommit = std::function<bool(const std::vector<Key>& drops)>;
    bool with_create(const Key& key, const CreateCommit& commit);
    // One RW layout of the file ended (returned, revoked, or never sent).
    void ended(const Key& key);
    // Writes the pending drops now (at a clean stop).
    bool flush(std::string& error);

    std::size_t files_held() const;    // files with an RW layout out now
    std::size_t drops_pending() const; // marks to drop with the next transaction

private:
    // Calls `write` with the marks waiting to be dropped (a transaction that drops them);
    // on success they are gone. Call with mu_ held.
    bool write_with_drops(const CreateCommit& write);

    Persist persist_;
    mutable std::mutex mu_;
    std::map<Key, unsigned> held_; // RW layouts out, per file
    std::set<Key> durable_;        // marks in the store
    std::set<Key> to_drop_;        // of those, files with no RW layout out any more
};

} // namespace flexfiles::layout
