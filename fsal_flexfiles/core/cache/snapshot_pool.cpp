// SPDX-License-Identifier: LGPL-3.0-or-later
//
// The snapshot memory pools (snapshot_pool.hpp): one shared Treiber stack per class, from which
// each writer thread takes the whole stack at once and then uses it without atomics, and the
// slabs new blocks are carved from.
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
    std::atomic<std::size_t> pooled{0};      // blocks in this pool and in threads' local lists
    std::atomic<std::size_t> block_bytes{0}; // the size of this class's blocks
};
std::array<SharedPool, kPooledRecords> g_pools;
std::atomic<std::size_t> g_slab_bytes{0};

void push(std::uint8_t cls, FreeBlock* f) {
    SharedPool& pool = g_pools[cls];
    f->next = pool.head.load(std::memory_order_relaxed);
    while (!pool.head.compare_exchange_weak(f->next, f, std::memory_order_release,
                                            std::memory_order_relaxed)) {
    }
}

// What one writer thread took from the shared pools and has not used yet; given back to
// them when the thread ends (slab blocks cannot go to free()).
struct LocalPools {
    std::array<FreeBlock*, kPooledRecords> head{};
    LocalPools() = default;
    ~LocalPools() {
        for (std::size_t c = 0; c < kPooledRecords; ++c) {
            while (FreeBlock* f = head[c]) {
                head[c] = f->next;
                push(static_cast<std::uint8_t>(c), f);
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

// The slab this thread carves new blocks from: whole cache lines, line-aligned.
struct Slab {
    char* next = nullptr;
    std::size_t left = 0;
};

void* carve(std::uint8_t cls, std::size_t bytes) {
    thread_local Slab slab;
    const std::size_t size = (bytes + kLine - 1) / kLine * kLine;
    if (slab.left < size) {
        void* mem = std::aligned_alloc(kLine, kSlabBytes);
        if (mem == nullptr) {
            return nullptr;
        }
        g_slab_bytes.fetch_add(kSlabBytes, std::memory_order_relaxed);
        slab.next = static_cast<char*>(mem);
        slab.left = kSlabBytes;
    }
    g_pools[cls].block_bytes.store(size, std::memory_order_relaxed);
    void* block = slab.next;
    slab.next += size;
    slab.left -= size;
    return block;
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
            return carve(cls, bytes);
        }
    }
    local.head[cls] = f->next;
    g_pools[cls].pooled.fetch_sub(1, std::memory_order_relaxed);
    return f;
}

void give_back(void* block, std::uint8_t cls) {
    if (cls == kNotPooled) {
        std::free(block);
        return;
    }
    g_pools[cls].pooled.fetch_add(1, std::memory_order_relaxed);
    push(cls, new (block) FreeBlock{nullptr});
}

std::size_t slab_bytes() {
    return g_slab_bytes.load(std::memory_order_relaxed);
}

std::size_t pooled_bytes() {
    std::size_t bytes = 0;
    for (const SharedPool& p : g_pools) {
        bytes += p.pooled.load(std::memory_order_relaxed) *
                 p.block_bytes.load(std::memory_order_relaxed);
    }
    return bytes;
}

} // namespace flexfiles::wcc::snapshot_pool
