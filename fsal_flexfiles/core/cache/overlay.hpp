// SPDX-License-Identifier: LGPL-3.0-or-later
//
// GETATTR of a FLEXFILES regular file: the rules that decide whether the data servers must
// be asked, and how the data files' attributes replace the metadata file's. Pure C++; the
// Ganesha side (wcc_ops.cpp) converts fsal_attrlist to and from FileAttrView.
//
// When to ask the data servers (fetch_reason)
//   - The cache knows nothing of the file's data files (first GETATTR after a restart, a
//     file created before the cache saw it): ask, whatever the layouts. Without an answer
//     the size would be the metadata file's, which says nothing about the data.
//   - An RW layout is outstanding (some client may be writing to the data servers behind
//     the MDS's back), or the last one ended and the data servers have not answered since
//     (its holder may have written without LAYOUTCOMMIT or LAYOUT_WCC: a crash, a lost
//     lease, a forgetful client), and the cached answer is older than WCC_Max_Age (0 =
//     always ask). The caller passes both as rw_layout_outstanding (the FSAL handle's
//     writes_unseen flag, kept by layout::GrantRegistry).
//   - The answer was learned while layouts of the MDS's previous instance could still
//     write (layout/previous_instance.hpp; the caller passes relearn_before_ns): ask once.
//     While they still can, the caller passes rw_layout_outstanding for every file.
//   - Otherwise (no RW layout, or fresh enough): the cache answers, no data-server traffic.
//     Without an RW layout nobody can change the data files except through the MDS, which
//     updates the cache itself.
//
// What the answer holds (overlay)
//   size, space_used, mtime and atime: the cache's merged view (attr_rules.hpp: the freshest
//   data file's size/mtime, the sum of space_used over mirrors, the latest atime).
//   ctime: the later of the metadata file's and the data files' ctime, so that metadata
//   changes made on the MDS (chmod, rename, ...) and data changes both move it.
//   change: the metadata file's change plus the data ctime in ns, so that NFSv4 clients see
//   the change attribute move when data changes on the data servers (they revalidate their
//   caches on it); both parts only grow, and the sum is the same after an MDS restart.
#pragma once

#include "cache/attr_cache.hpp"

#include <cstdint>
#include <optional>

namespace flexfiles::wcc {

enum class FetchReason : std::uint8_t {
    None,    // the cache answers
    Empty,   // the cache has nothing for the file
    Stale,   // RW layout outstanding and the answer older than WCC_Max_Age
    Relearn, // learned while the previous MDS instance's layouts could still write
};
const char* to_string(FetchReason r);

// relearn_before_ns: an answer learned before it is asked again whatever the layouts
// (layout/previous_instance.hpp; 0: none).
FetchReason fetch_reason(const std::optional<MergedAttrs>& merged, bool rw_layout_outstanding,
                         std::int64_t max_age_ns, std::int64_t now_ns,
                         std::int64_t relearn_before_ns = 0);

/// The attributes GETATTR overlays, as the namespace FSAL filled them.
struct FileAttrView {
    std::uint16_t valid = 0; // AttrBit: kAttrSize, kAttrSpaceUsed, kAttrAtime/Mtime/Ctime
    bool has_change = false;
    std::uint64_t size = 0;
    std::uint64_t space_used = 0;
    NfsTime atime, mtime, ctime;
    std::uint64_t change = 0;
};

/// Puts the merged data attributes into view (see the rules above); returns the AttrBits
/// it set.
std::uint16_t overlay(const MergedAttrs& merged, FileAttrView& view);

} // namespace flexfiles::wcc
