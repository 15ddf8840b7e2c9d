// SPDX-License-Identifier: LGPL-3.0-or-later
//
// The snapshot memory pools (snapshot_pool.hpp): one shared Treiber stack per class, from which
// each writer thread takes the whole stack at once and then uses it without atomics.
#include "cache/snapshot_pool.hpp"

#include <array>
#include <atomic>
#include <cstdlib>
#include <new>

namespace flexfiles::wcc::snapshot_pool {

namespace {

// A pooled block's memory while it is free: a link in a Treiber stack (push by CAS, take
// the whole stack by exchange: neither can suffer ABA, there is no single pop).
struct FreeBlock {
    FreeBlock* next;
};

struct alignas(64) SharedPool {
    std::atomic<FreeBlock*> head{nullptr};
    std::atomic<std::size_t> pooled{0}; // blocks in this pool and in threads' local lists
};
std::array<SharedPool, kPooledRecords> g_pools;

// What one writer thread took from the shared pools and has not used yet.
struct LocalPools {
    std::array<FreeBlock*, kPooledRecords> head{};
    LocalPools() = default;
    ~LocalPools() {
        for (std::size_t c = 0; c < kPooledRecords; ++c) {
            while (FreeBlock* f = head[c]) {
                head[c] = f->next;
                g_pools[c].pooled.fetch_sub(1, std::memory_order_relaxed);
                std::free(f);
            }
        }
    }
    LocalPools(const LocalPools&) = delete;
    LocalPools& operator=(const LocalPools&) = delete;
};

LocalPools& local_pools() {
    thread_local LocalPools pools;
    return pools;
}

} // namespace

void* take(std::uint8_t cls, std::size_t bytes) {
    if (cls == kNotPooled) {
        return std::malloc(bytes);
    }
    LocalPools& local = local_pools();
    FreeBlock* f = local.head[cls];
    if (f == nullptr) {
        f = g_pools[cls].head.exchange(nullptr, std::memory_order_acquire);
        if (f == nullptr) {
            return std::malloc(bytes);
        }
    }
    local.head[cls] = f->next;
    g_pools[cls].pooled.fetch_sub(1, std::memory_order_relaxed);
    return f;
}

void give_back(void* block, std::uint8_t cls) {
    if (cls == kNotPooled || g_pools[cls].pooled.load(std::memory_order_relaxed) >= kPoolCap) {
        std::free(block);
        return;
    }
    SharedPool& pool = g_pools[cls];
    pool.pooled.fetch_add(1, std::memory_order_relaxed);
    auto* f = new (block) FreeBlock{pool.head.load(std::memory_order_relaxed)};
    while (!pool.head.compare_exchange_weak(f->next, f, std::memory_order_release,
                                            std::memory_order_relaxed)) {
    }
}

} // namespace flexfiles::wcc::snapshot_pool
