// SPDX-License-Identifier: LGPL-3.0-or-later
//
// The RCU table of file snapshots (snapshot_table.hpp): building a snapshot, reclaiming it
// through call_rcu, creating and destroying the table.
// Inline urcu's read-side fast path (licence-compatible: we are LGPL too).
#define _LGPL_SOURCE
#include "cache/snapshot_table.hpp"

#include "cache/snapshot_pool.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

namespace flexfiles::wcc {

namespace {

// Process-wide reclamation counters (the rcu callback has no cache to report to).
std::atomic<std::uint64_t> g_snapshots_retired{0};
std::atomic<std::uint64_t> g_snapshots_freed{0};

constexpr std::size_t snapshot_bytes(std::size_t records) {
    return sizeof(Snapshot) + records * sizeof(Record);
}

void free_snapshot_rcu(rcu_head* head) {
    discard(caa_container_of(head, Snapshot, rcu));
    g_snapshots_freed.fetch_add(1, std::memory_order_relaxed);
}

} // namespace

Snapshot* make_snapshot(FileId file, const Record* barrier, std::span<const Record> files,
                        CacheAnchor* anchor, std::uint64_t generation) {
    if (files.size() > UINT16_MAX) {
        return nullptr;
    }
    const std::size_t n = files.size() + (barrier ? 1 : 0);
    const std::uint8_t cls = snapshot_pool::pool_class(n);
    void* mem = snapshot_pool::take(cls, snapshot_bytes(n));
    if (mem == nullptr) {
        return nullptr;
    }
    auto* s = new (mem) Snapshot{};
    cds_lfht_node_init(&s->ht_node);
    s->file = file;
    s->count = static_cast<std::uint16_t>(files.size());
    s->has_barrier = barrier ? 1 : 0;
    s->pool_class = cls;
    s->pub = Snapshot::Publication{anchor, generation};
    Record* out = s->base();
    if (barrier) {
        std::memcpy(static_cast<void*>(out++), barrier, sizeof(Record));
    }
    if (!files.empty()) {
        std::memcpy(static_cast<void*>(out), files.data(), files.size() * sizeof(Record));
    }
    return s;
}

void retire(Snapshot* s) {
    g_snapshots_retired.fetch_add(1, std::memory_order_relaxed);
    call_rcu(&s->rcu, free_snapshot_rcu);
}

void discard(Snapshot* s) {
    snapshot_pool::give_back(s, s->pool_class);
}

std::uint64_t snapshots_retired() {
    return g_snapshots_retired.load(std::memory_order_relaxed);
}

std::uint64_t snapshots_freed() {
    return g_snapshots_freed.load(std::memory_order_relaxed);
}

void wait_for_retired_snapshots() {
    rcu_barrier();
}

namespace snapshot_table {

cds_lfht* create(std::size_t expected_files) {
    // Buckets for expected_files up front, and never fewer: growth beyond that is automatic
    // but asynchronous (a resize walks every node), so a well-sized cache never waits on it.
    const unsigned long init = std::bit_ceil(std::clamp<std::size_t>(expected_files, 1, 1ul << 30));
    cds_lfht* t = cds_lfht_new(init, init, 0, CDS_LFHT_AUTO_RESIZE | CDS_LFHT_ACCOUNTING, nullptr);
    if (t == nullptr) {
        throw std::bad_alloc();
    }
    return t;
}

void destroy(cds_lfht* table) {
    std::vector<Snapshot*> snapshots;
    {
        ReadSection rs;
        cds_lfht_iter it;
        cds_lfht_first(table, &it);
        for (cds_lfht_node* n; (n = cds_lfht_iter_get_node(&it)) != nullptr;
             cds_lfht_next(table, &it)) {
            if (cds_lfht_del(table, n) == 0) {
                snapshots.push_back(reinterpret_cast<Snapshot*>(n));
            }
        }
    }
    synchronize_rcu();
    for (Snapshot* s : snapshots) {
        discard(s); // back to its pool, or free()
    }
    cds_lfht_destroy(table, nullptr);
}

} // namespace snapshot_table

} // namespace flexfiles::wcc
