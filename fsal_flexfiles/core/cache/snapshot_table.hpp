// SPDX-License-Identifier: LGPL-3.0-or-later
//
// The attribute cache's RCU mechanics: one liburcu lock-free hash table (cds_lfht, urcu-bp
// flavour like Ganesha) keyed by the MDS file id, whose nodes are the files' immutable
// snapshots. Only the cache's own .cpp files include this header (it pulls in liburcu);
// attr_cache.hpp holds the table as a plain cds_lfht* so that its users need no liburcu.
//
// Snapshots
//   A node is itself the file's snapshot: a 48-byte header, then an optional barrier
//   record and the data files' records sorted by slot (attr_rules.hpp). Keeping a file's
//   data files together makes the merged view one consistent read: a GETATTR never mixes
//   two publications, and a reader chases two pointers (bucket, node), not three.
//
// Writers
//   A writer first takes the snapshot's sequence word (lock_for_write: a spin lock among
//   writers of that file, held for a copy and a few stores). An update that keeps the
//   snapshot's shape (the same data files, the barrier or not) is written into it in place
//   and the word released one step on (a writer's next report, the common case: no
//   allocation, no call_rcu). Any other builds a new snapshot (make_snapshot), swaps it in
//   with replace() and never releases the old one's word: a snapshot that left the table
//   stays locked. remove() takes a snapshot out the same way, under its word.
//
// Readers and memory reclamation
//   Readers take no lock and write nothing: a ReadSection (rcu_read_lock; urcu-bp
//   registers the thread on first use), find, read_consistent, unlock. read_consistent is
//   a sequence-lock read: it copies out what it needs and keeps the copy only when the
//   word was even and unchanged around it, so a reader sees one whole update or retries;
//   a snapshot that left the table meanwhile is looked up again. A replaced or removed
//   snapshot is retired: handed to call_rcu, and after a grace period its memory goes back
//   to snapshot_pool.
//   Do not call destroy() or wait_for_retired_snapshots() from a call_rcu callback: liburcu forbids
//   rcu_barrier() there, and destroy() blocks the callback thread for a grace period.
#pragma once

// urcu's read side is inlined only when _LGPL_SOURCE comes before its first include; a
// file that includes this header after urcu without it would silently call out of line.
#ifndef _LGPL_SOURCE
#error "define _LGPL_SOURCE before any include in files that include snapshot_table.hpp"
#endif

#include "cache/attr_rules.hpp"

#include <atomic>
#include <cstdint>
#include <optional>
#include <sched.h>
#include <span>
#include <type_traits>
#include <urcu-bp.h>
#include <urcu/rculfhash.h>

namespace flexfiles::wcc {

class CacheAnchor; // attr_cache.hpp

/// One file's immutable snapshot, which is also its hash-table node.
/// Layout: this header, [barrier record], data-file records by slot.
struct Snapshot {
    // What only writers read, and only while the snapshot is in the table (see retire()).
    struct Publication {
        // The file's anchor (attr_cache.hpp), carried from snapshot to snapshot: the writer
        // that publishes this snapshot points the anchor at it. nullptr: none.
        CacheAnchor* anchor;
        // The cache's publication counter when this snapshot was made: a file's snapshots
        // are published in increasing order, so an anchor never goes back to an older one.
        std::uint64_t generation;
    };

    cds_lfht_node ht_node; // first: the table hands back a pointer to it
    union {
        Publication pub; // while in the table
        rcu_head rcu;    // once it has left: call_rcu writes over pub (readers never read
                         // pub; a writer that read it from a retired snapshot loses its
                         // replace and starts again)
    };
    FileId file = 0;
    // Even: nobody writes the snapshot. Odd: a writer holds it (writing it in place, or
    // replacing or removing it: a snapshot that left the table stays odd).
    std::atomic<std::uint32_t> seq{0};
    std::uint16_t count = 0; // data-file records (make_snapshot bounds it)
    std::uint8_t has_barrier = 0;
    std::uint8_t pool_class = 0; // snapshot_pool class, or snapshot_pool::kNotPooled

    Record* base() {
        return reinterpret_cast<Record*>(reinterpret_cast<char*>(this) + sizeof(*this));
    }
    const Record* base() const {
        return reinterpret_cast<const Record*>(reinterpret_cast<const char*>(this) + sizeof(*this));
    }
    const Record* barrier() const { return has_barrier ? base() : nullptr; }
    std::span<const Record> files() const { return {base() + has_barrier, count}; }
    const Record* find(DataFileSlot slot) const {
        for (const Record& r : files()) {
            if (r.slot == slot) {
                return &r;
            }
        }
        return nullptr;
    }
};
static_assert(std::is_standard_layout_v<Snapshot>);
static_assert(sizeof(Snapshot) == 48, "header + 80 bytes per record");
static_assert(sizeof(Snapshot) % alignof(Record) == 0);

/// A new, unpublished snapshot of the file holding barrier (or none) and files, naming
/// anchor (or none), made at generation; nullptr when memory ran out (or for more than
/// 65535 data files, which no layout has).
Snapshot* make_snapshot(FileId file, const Record* barrier, std::span<const Record> files,
                        CacheAnchor* anchor, std::uint64_t generation);

/// The snapshot has left the table (replaced or removed): reclaim it after a grace period.
void retire(Snapshot* s);

/// A snapshot no reader ever saw (it was never published): reclaim it now.
void discard(Snapshot* s);

/// Process-wide (all caches; the call_rcu callback has no cache to report to): snapshots
/// retired, and of those reclaimed.
std::uint64_t snapshots_retired();
std::uint64_t snapshots_freed();

/// Wait until every snapshot retired so far is reclaimed (rcu_barrier).
void wait_for_retired_snapshots();

/// rcu_read_lock / unlock as a scope. urcu-bp registers the thread on first use.
class ReadSection {
public:
    ReadSection() { rcu_read_lock(); }
    ~ReadSection() {
        if (held_) {
            rcu_read_unlock();
        }
    }
    void unlock() {
        rcu_read_unlock();
        held_ = false;
    }
    ReadSection(const ReadSection&) = delete;
    ReadSection& operator=(const ReadSection&) = delete;

private:
    bool held_ = true;
};

/// The table itself. AttrCache owns the cds_lfht*; these are everything done to it. Every
/// call but create() and destroy() must be inside a ReadSection, and a snapshot found
/// stays readable only until that section ends.
namespace snapshot_table {

/// Spinning on a snapshot's word: pause, and after a while let the holder (perhaps
/// preempted) have the core.
inline void back_off(unsigned& spins) noexcept {
    if (++spins % 64 == 0) {
        sched_yield();
    } else {
        caa_cpu_relax();
    }
}

/// A writer takes the snapshot (inside a ReadSection): its word, odd from now on. False
/// when the snapshot left the table (replaced or removed): look the file up again.
inline bool lock_for_write(Snapshot* s) noexcept {
    unsigned spins = 0;
    for (;;) {
        std::uint32_t v = s->seq.load(std::memory_order_relaxed);
        if ((v & 1) == 0) {
            if (s->seq.compare_exchange_weak(v, v + 1, std::memory_order_acquire,
                                             std::memory_order_relaxed)) {
                // Readers must see the word odd before any store into the records.
                std::atomic_thread_fence(std::memory_order_release);
                return true;
            }
        } else if (cds_lfht_is_node_deleted(&s->ht_node)) {
            return false;
        }
        back_off(spins);
    }
}

/// The writer is done with a snapshot it holds and that stays in the table: changed (it
/// wrote records in place) moves the word on, so readers that overlapped read again; else
/// it goes back to what it was.
inline void unlock_after_write(Snapshot* s, bool changed) noexcept {
    const std::uint32_t held = s->seq.load(std::memory_order_relaxed);
    s->seq.store(changed ? held + 1 : held - 1, std::memory_order_release);
}

/// read(s), kept only if no writer wrote the snapshot meanwhile (a sequence-lock read:
/// read must copy out, and must not trust what it reads to be whole until this returns).
/// nullopt when the snapshot left the table: its successor is in the table.
template <class Read>
auto read_consistent(const Snapshot& s, Read&& read)
    -> std::optional<std::invoke_result_t<Read&, const Snapshot&>> {
    unsigned spins = 0;
    for (;;) {
        const std::uint32_t before = s.seq.load(std::memory_order_acquire);
        if ((before & 1) == 0) {
            auto result = read(s);
            std::atomic_thread_fence(std::memory_order_acquire);
            if (s.seq.load(std::memory_order_relaxed) == before) {
                return result;
            }
        } else if (cds_lfht_is_node_deleted(&s.ht_node)) {
            return std::nullopt;
        }
        back_off(spins);
    }
}

/// Buckets for expected_files up front, and never fewer (see the definition).
cds_lfht* create(std::size_t expected_files);

/// Removes and frees every snapshot, then the table. No concurrent callers.
void destroy(cds_lfht* table);

// splitmix64's finaliser: file ids are often sequential, the table wants spread bits.
inline unsigned long hash_file(FileId f) {
    std::uint64_t x = f + 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return static_cast<unsigned long>(x ^ (x >> 31));
}

inline int match_file(cds_lfht_node* node, const void* key) {
    return reinterpret_cast<const Snapshot*>(node)->file == *static_cast<const FileId*>(key);
}

inline Snapshot* find(cds_lfht* table, FileId file) {
    cds_lfht_iter it;
    cds_lfht_lookup(table, hash_file(file), match_file, &file, &it);
    return reinterpret_cast<Snapshot*>(cds_lfht_iter_get_node(&it));
}

/// Where a writer found the file's snapshot (current, or nullptr), to publish its
/// successor there.
struct Position {
    FileId file;
    unsigned long hash;
    cds_lfht_iter it;
    Snapshot* current;
};

inline Position locate(cds_lfht* table, FileId file) {
    Position p{file, hash_file(file), {}, nullptr};
    cds_lfht_lookup(table, p.hash, match_file, &p.file, &p.it);
    p.current = reinterpret_cast<Snapshot*>(cds_lfht_iter_get_node(&p.it));
    return p;
}

/// Publishes fresh as the file's first snapshot (p.current is nullptr). False: another
/// writer added one first; fresh stays unpublished.
inline bool add(cds_lfht* table, Position& p, Snapshot* fresh) {
    return cds_lfht_add_unique(table, p.hash, match_file, &p.file, &fresh->ht_node) ==
           &fresh->ht_node;
}

/// Publishes fresh in place of p.current, which the caller holds (lock_for_write). False
/// only if it left the table anyway; fresh stays unpublished. On success the caller
/// retires p.current.
inline bool replace(cds_lfht* table, Position& p, Snapshot* fresh) {
    return cds_lfht_replace(table, &p.it, p.hash, match_file, &p.file, &fresh->ht_node) == 0;
}

/// Takes s, which the caller holds (lock_for_write), out of the table. On success the
/// caller retires s.
inline bool remove(cds_lfht* table, Snapshot* s) {
    return cds_lfht_del(table, &s->ht_node) == 0;
}

} // namespace snapshot_table

} // namespace flexfiles::wcc
