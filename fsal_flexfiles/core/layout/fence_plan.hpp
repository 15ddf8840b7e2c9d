// SPDX-License-Identifier: LGPL-3.0-or-later
//
// The decisions of fencing (pnfs/fencing.cpp) that need no Ganesha and no data server:
// when a layout that ends needs fencing, and which mirrors a failed fence marks stale.
// Pure functions: unit-tested alone.
#pragma once

#include "model/data_files.hpp"

#include <cstdint>
#include <optional>
#include <vector>

namespace flexfiles::layout {

// Why a layout segment ends (Ganesha's fsal_layoutreturn_circumstance, in our words).
enum class SegmentEnd : std::uint8_t {
    returned,        // LAYOUTRETURN from the client (or its answer to a recall)
    reclaimed,       // a return of a layout held before the server restarted
    closed,          // return-on-close: the client closed its last open
    forgotten,       // the client asked for a new layout without the old layout stateid
    revoked,         // taken away: recall not answered, lease expired, client forgotten
                     // by the server or an administrator, export removed
    server_shutdown, // the server is going down
    unsent,          // granted, but the LAYOUTGET failed after (its reply did not fit the
                     // session): the client never received it
};

// Whether the holder ended the segment itself (so it stopped using it): false for a layout
// taken away while its holder may still reach the data servers.
bool ended_by_holder(SegmentEnd end) noexcept;

// Whether `granted` (the data files as a layout named them) still opens some data file of
// `current` (the file's map now): some data file has the same synthetic owner in both.
// A layout that no longer does was fenced already; fencing it again would only move
// every other holder to a new owner for nothing.
bool layout_still_writes(const mds::DataFileMap& granted, const mds::DataFileMap& current) noexcept;

// Which mirrors to mark stale after a fence that failed on `failed` (mirror indexes): a
// mirror whose owner could not be changed may still be written by the fenced client, so
// its bytes cannot be trusted to match the others'. Mirrors already stale (`stale_now`)
// are not marked again. The last in-sync mirror is never marked (the resilverer copies
// from in-sync mirrors; with none left there is nothing to copy from): when every in-sync
// mirror failed, the lowest of them stays in sync and is named in `kept_in_sync`.
struct StalePlan {
    std::vector<std::uint32_t> mark; // ascending
    std::optional<std::uint32_t> kept_in_sync;
};
StalePlan stale_after_failed_fence(const std::vector<std::uint32_t>& failed,
                                   const std::vector<std::uint32_t>& stale_now,
                                   std::uint32_t mirror_count);

} // namespace flexfiles::layout
