// SPDX-License-Identifier: LGPL-3.0-or-later
//
// Placement of a new file's data files: choose `mirrors` distinct data servers that are
// Up and not drained (the fleet's round-robin), then create one data file per mirror, in
// parallel, with NFSv3 CREATE GUARDED, named after the MDS fileid and the mirror index
// (model/naming.hpp), owned by the file's synthetic fencing uid/gid.
//
// A name that already exists on the chosen data server is a leftover: names derive from
// the MDS fileid, which is unique among live files, so the old data file belongs to no
// live file (a removal still queued, or a create a crash interrupted). It is removed and
// the CREATE tried once more. The caller claims the names from the reaper first (so the
// reaper cannot remove the new data file) and cancels their queued removals.
//
// When any mirror fails, the data files already made are removed again; those that
// cannot be (or whose CREATE timed out and so may exist) are returned as leftovers for
// the removal queue. Nothing here touches the layout store or the namespace: the caller
// records the intent, persists the map, or undoes the namespace object.
//
// Every RPC has a deadline (settings.timeout from when it is sent), so the whole placement
// is bounded by three round trips of that deadline.
#pragma once

#include "fleet/fleet.hpp"
#include "mds/reaper.hpp"
#include "model/data_files.hpp"
#include "store/layout_store.hpp"

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

namespace flexfiles::mds {

struct PlacementSettings {
    unsigned mirrors = 1;
    std::uint64_t stripe_unit = 1u << 20;
    std::uint32_t fencing_uid_min = 1000000, fencing_uid_max = 1999999;
    std::uint32_t fencing_gid_min = 1000000, fencing_gid_max = 1999999;
    std::uint32_t mode = kDataFileMode; // model/data_files.hpp
    std::chrono::milliseconds timeout{5000};
};

// The synthetic owner of a new file's data files: min + fileid mod the size of the range,
// so files spread over the range and the MDS can fence one file's clients by moving its
// data files to another id in it.
std::uint32_t fencing_id_for(std::uint64_t file_id, std::uint32_t min, std::uint32_t max);

// What a placement is about to create.
struct PlacementPlan {
    std::uint64_t file_id = 0;
    std::uint64_t stripe_unit = 0;
    std::vector<std::shared_ptr<fleet::DataServer>> servers; // one per mirror, in mirror order
    std::vector<DataFile> files;                             // filehandles still empty

    std::vector<PlannedDataFile> planned() const;
    std::vector<DataFileName> names() const;
};

// Chooses the data servers and names. Errors: too_few_servers or
// servers_unavailable (fleet/placement.hpp; the message says how many are eligible of how
// many), invalid_argument.
fleet::DsResult<PlacementPlan> plan_placement(fleet::Fleet& fleet, const PlacementSettings& s,
                                              std::uint64_t file_id,
                                              std::uint8_t fsal_id = fleet::kDefaultFsalId);

struct PlacementResult {
    fleet::DsStatus status; // ok, or the first mirror's failure (names the data server)
    DataFileMap map;        // complete when ok
    std::vector<std::optional<fleet::DsAttrs>> attrs; // per mirror: attributes after CREATE
    std::vector<PendingRemoval> leftovers;            // to queue for removal (failure only)
    std::uint32_t replaced_leftovers = 0;             // names that existed and were removed first
};

// Creates the plan's data files (see the top of this file).
PlacementResult create_data_files(const PlacementPlan& plan, const PlacementSettings& s);

} // namespace flexfiles::mds
