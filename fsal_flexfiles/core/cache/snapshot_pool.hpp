// SPDX-License-Identifier: LGPL-3.0-or-later
//
// Recycled memory for the attribute cache's snapshots (snapshot_table.hpp). A replaced
// snapshot becomes reusable after a grace period: the call_rcu callback gives its memory
// back here, and writers take their next snapshot from here. Measured reason: with
// malloc/free, the call_rcu thread freeing what writers allocate made them contend for
// glibc's arena lock (futex syscalls) and walk cold free lists, a third of an update's time.
//
// Small snapshots only (up to kPooledRecords records: a file with up to 3 mirrors plus its
// barrier), one pool per record count. Their blocks are carved from slabs of kSlabBytes,
// each block whole cache lines and line-aligned: a one-record snapshot (128 bytes) is two
// lines that a reader fetches together, where malloc's 16-byte alignment made it three
// most of the time (measured: an anchored lookup at 1M files went from 1.4-1.6 to about
// 1.25 dependent loads; aligned_alloc per block instead cost 268 bytes of RSS per data
// file in fragments). A pooled block never goes back to free(): it waits in its pool for
// the next snapshot of its class, so the memory of the most snapshots the cache ever held
// stays with the process. Larger snapshots are malloc'd and freed.
#pragma once

#include <cstddef>
#include <cstdint>

namespace flexfiles::wcc::snapshot_pool {

inline constexpr std::size_t kPooledRecords = 4;
inline constexpr std::size_t kLine = 64;             // pooled blocks' alignment and unit
inline constexpr std::size_t kSlabBytes = 64 * 1024; // what a thread carves blocks from
/// The pool class of a block that is not pooled (too many records, or none).
inline constexpr std::uint8_t kNotPooled = 0xFF;

/// Which pool a snapshot of this many records belongs to (kNotPooled: none).
constexpr std::uint8_t pool_class(std::size_t records) {
    return records >= 1 && records <= kPooledRecords ? static_cast<std::uint8_t>(records - 1)
                                                     : kNotPooled;
}

/// A block of bytes for a snapshot of pool class cls; every block of one class must have
/// the same size. nullptr when memory ran out. Lock-free.
void* take(std::uint8_t cls, std::size_t bytes);

/// Gives back a block no reader can see any more (after a grace period, never published,
/// or the cache's destructor). Lock-free; callable from a call_rcu callback.
void give_back(void* block, std::uint8_t cls);

/// Process-wide: bytes of slabs carved so far, and of them the bytes waiting in pools.
/// Their difference is the pooled classes' snapshots in use (memory accounting, tests).
std::size_t slab_bytes();
std::size_t pooled_bytes();

} // namespace flexfiles::wcc::snapshot_pool
