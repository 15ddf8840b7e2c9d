// SPDX-License-Identifier: LGPL-3.0-or-later
//
// Placement of a new file's data files: choose `mirrors` distinct data servers that are
// Up and not drained (the fleet's round-robin), then create one data file per mirror, in
// parallel, with NFSv3 CREATE GUARDED, named after the export's identity, the MDS fileid
// and the mirror index (model/naming.hpp), owned by the file's synthetic fencing uid/gid.
//
// A name that already exists on the chosen data server is replaced only when this
// export's layout store records it as its own leftover: a removal of that name on that
// data server still queued (a former file of the same fileid, a failed create, or a create
// a restart interrupted). take_over_leftovers() tells which, and drops those removals (the
// new data file takes the name); the caller claims the names from the reaper first, so it
// cannot remove the new data file. Such a leftover is removed and the CREATE tried once
// more. Any other existing name is a collision: the data file is nobody this store knows
// of (another MDS or export with the same identity, a store restored from an older copy, a
// file put there by hand), so it is left alone and the create fails (NFS3ERR_EXIST on that
// mirror, reported in PlacementResult::collisions): a create never removes or reuses a data
// file it has no record of making.
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
    std::uint64_t identity = 0; // the export's (LayoutStore::identity()): in every new name
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
    // Per mirror: the store records a data file of that name there as its own leftover, so
    // one that exists may be replaced (take_over_leftovers). Missing entries: false.
    std::vector<bool> replaceable;

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
    std::vector<DataFileName> collisions; // names that existed with no record: left alone
};

// For each planned data file: whether the store has a removal of that name on that data
// server queued (this export made it and no longer needs it). Those removals are dropped:
// the create takes the names over. Call with the names claimed from the reaper.
StoreResult<std::vector<bool>> take_over_leftovers(LayoutStore& store,
                                                   const std::vector<PlannedDataFile>& planned);

// Creates the plan's data files (see the top of this file).
PlacementResult create_data_files(const PlacementPlan& plan, const PlacementSettings& s);

} // namespace flexfiles::mds
