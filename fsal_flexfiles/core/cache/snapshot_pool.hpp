// SPDX-License-Identifier: LGPL-3.0-or-later
//
// Recycled memory for the attribute cache's snapshots (snapshot_table.hpp). A replaced
// snapshot becomes reusable after a grace period: the call_rcu callback gives its memory
// back here, and writers take their next snapshot from here. Measured reason: with
// malloc/free, the call_rcu thread freeing what writers allocate made them contend for
// glibc's arena lock (futex syscalls) and walk cold free lists, a third of an update's time.
//
// Small snapshots only (up to kPooledRecords records: a file with up to 3 mirrors plus its
// barrier), one pool per record count; each keeps at most kPoolCap blocks, beyond that
// they go back to free(). Every block, pooled or not, is malloc'd memory, so free() is
// always a correct way to release one too (the cache's destructor does).
#pragma once

#include <cstddef>
#include <cstdint>

namespace flexfiles::wcc::snapshot_pool {

inline constexpr std::size_t kPooledRecords = 4;
inline constexpr std::size_t kPoolCap = 8192;
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

/// Gives back a block no reader can see any more (after a grace period, or never
/// published). Lock-free; callable from a call_rcu callback.
void give_back(void* block, std::uint8_t cls);

} // namespace flexfiles::wcc::snapshot_pool
