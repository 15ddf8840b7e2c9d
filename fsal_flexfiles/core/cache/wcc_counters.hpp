// SPDX-License-Identifier: LGPL-3.0-or-later
//
// Counters of the LAYOUT_WCC apply path, the GETATTR overlay and the fallback: per-thread
// stripes, one set per FLEXFILES export (Export::wcc_counters()), read with snapshot()
// (for logs and dbus). The attribute cache keeps its own (AttrCache::stats()) and
// so does each data server (fleet::DsCounters); these are the FSAL's view.
#pragma once

#include "cache/striped_counters.hpp"

#include <cstdint>

namespace flexfiles::wcc {

struct WccStats {
    // LAYOUT_WCC operations reaching the FSAL, and how they ended.
    std::uint64_t ops = 0;
    std::uint64_t ops_badxdr = 0;       // body did not decode: nothing applied
    std::uint64_t ops_inval = 0;        // attribute outside Table 1 (or bad value): nothing applied
    std::uint64_t ops_untrusted = 0;    // Trust_WCC = false: answered NFS4_OK, nothing applied
    std::uint64_t ops_no_authority = 0; // layout state without segments: nothing applied
    std::uint64_t ops_no_data_files = 0; // the file has no data-file map: nothing applied
    std::uint64_t ops_fenced = 0; // through a layout fenced since granted: NFS4_OK, nothing applied
    // Entries (ff_data_server_wcc4) of the operations that were applied.
    std::uint64_t entries_applied = 0;
    std::uint64_t entries_empty = 0; // empty attribute mask: nothing to apply
    std::uint64_t entries_ignored_unmatched = 0;
    std::uint64_t entries_ignored_stale = 0;
    std::uint64_t entries_ignored_unauthorised = 0; // READ layout offering only non-atime
    std::uint64_t entries_ignored_invalid = 0;      // no time_metadata: cannot be ordered
    std::uint64_t entries_ignored_future_ctime = 0; // ctime ahead by > WCC_Max_Ctime_Skew
    std::uint64_t entries_ignored_stale_mirror = 0; // names a mirror that is stale now
    std::uint64_t entries_untrusted = 0;            // entries of Trust_WCC = false bodies
    std::uint64_t attrs_unauthorised = 0;           // attribute values dropped for authority
    // Data-file credentials (fencing uid/gid) reported by clients.
    std::uint64_t credential_mismatches = 0;
    std::uint64_t credential_repairs_sent = 0;      // SETATTR sent to the data server
    std::uint64_t credential_repairs_coalesced = 0; // one already in flight for that data file
    std::uint64_t credential_repairs_done = 0;
    std::uint64_t credential_repairs_failed = 0;
    // Owner strings (owner / owner_group) of the entries.
    std::uint64_t owners_unknown = 0; // mapped to no id (unmappable, or past the per-body bound)
    std::uint64_t owner_lookups = 0;  // names looked up through the idmapper
    // GETATTR overlay of regular files.
    std::uint64_t overlay_calls = 0;   // overlay_cached + overlay_fetched
    std::uint64_t overlay_cached = 0;  // answered from the cache, no data-server traffic
    std::uint64_t overlay_fetched = 0; // a fallback ran first
    std::uint64_t overlay_no_data = 0; // no data attributes at all: the MDS file's were served
    // The fallback NFSv3 GETATTRs to data servers.
    std::uint64_t fallback_sent = 0;      // GETATTRs sent (one per flight)
    std::uint64_t fallback_coalesced = 0; // callers that joined a flight in progress
    std::uint64_t fallback_timed_out = 0; // callers whose deadline passed first
    std::uint64_t fallback_failed = 0;    // flights that ended in an error (timeout included)
    std::uint64_t fallback_applied = 0;   // answers the cache accepted
};

class WccCounters {
public:
    enum Id : unsigned {
        kOps,
        kOpsBadXdr,
        kOpsInval,
        kOpsUntrusted,
        kOpsNoAuthority,
        kOpsNoDataFiles,
        kOpsFenced,
        kEntriesApplied,
        kEntriesEmpty,
        kEntriesUnmatched,
        kEntriesStale,
        kEntriesUnauthorised,
        kEntriesInvalid,
        kEntriesFutureCtime,
        kEntriesStaleMirror,
        kEntriesUntrusted,
        kAttrsUnauthorised,
        kCredMismatches,
        kCredRepairsSent,
        kCredRepairsCoalesced,
        kCredRepairsDone,
        kCredRepairsFailed,
        kOwnersUnknown,
        kOwnerLookups,
        kOverlayCached,
        kOverlayFetched,
        kOverlayNoData,
        kFallbackSent,
        kFallbackCoalesced,
        kFallbackTimedOut,
        kFallbackFailed,
        kFallbackApplied,
        kCount
    };

    // Every GETATTR bumps one: striped per thread (striped_counters.hpp), so that worker
    // threads on different cores never write the same cache line.
    void add(Id id, std::uint64_t n = 1) noexcept { values_.add(id, n); }
    std::uint64_t get(Id id) const noexcept { return values_.sum(id); }
    WccStats snapshot() const noexcept;

private:
    StripedCounters<kCount> values_;
};

} // namespace flexfiles::wcc
