// SPDX-License-Identifier: LGPL-3.0-or-later
//
// What one LAYOUT_WCC does to the attribute cache: validation, Trust_WCC, authority,
// matching, the cache update and the credential checks, in that order. Pure C++ (the
// Ganesha side, wcc_ops.cpp, decodes the XDR, finds the layout's iomode, and sends the
// repairs this returns to the data servers).
//
// Order
//   1. Validate every entry (body.hpp): a failure answers BADXDR or INVAL, nothing applied.
//      A malformed body is refused even when Trust_WCC is off: the answer to a request must
//      not depend on whether the server uses it.
//   2. Trust_WCC = false: answer NFS4_OK, apply nothing, count the operation and entries.
//   3. Authority = the caller's layout iomode (its layout state's segments): ReadWrite may
//      set size, space_used, mtime, ctime and atime; Read only moves atime (the cache
//      enforces it per attribute); a layout state with no segment left sets nothing.
//   4. Resolve every non-empty entry's triple. An entry naming a mirror that is stale now
//      (store/stale_mirrors.hpp: it missed writes since the layout was granted) is ignored
//      and counted: the layout as granted still names it, but its data file no longer
//      holds the file's bytes. Apply all other matched reports as one cache publication
//      (AttrCache::apply_wcc, with ApplyPolicy::limits: a ctime too far in the future is
//      refused there); unmatched ones are counted there and here.
//   5. Credentials: mode/uid/gid of a report are the data file's on its data server. For
//      every matched report whose owner and owner_group differ from the data file's
//      expected fencing uid/gid, and that was not stale (an old report says nothing about
//      the data file now), a repair is returned: SETATTR uid/gid on the data file back to
//      the fencing credentials (RFC 9766 3.4.2). At most one repair per data file is in
//      flight (RepairTracker); the MDS file's own mode and owner are never touched. Reports
//      from READ layouts count too: a reader that got NFS3ERR_ACCES reports exactly this.
//      An owner string that mapped to no id (the decoder leaves owner/owner_group out of
//      the report's valid mask, see owner_map.hpp) is unknown: never a mismatch, never a
//      repair.
#pragma once

#include "cache/attr_cache.hpp"
#include "cache/wcc_body.hpp"
#include "cache/wcc_counters.hpp"
#include "model/data_files.hpp"

#include <cstdint>
#include <mutex>
#include <span>
#include <unordered_set>
#include <vector>

namespace flexfiles::wcc {

/// The caller's layout as LAYOUT_WCC sees it.
enum class LayoutAuthority : std::uint8_t {
    None,      // the layout state has no segment: nothing may be set
    Read,      // only READ segments: atime only
    ReadWrite, // at least one READ_WRITE segment
};

struct ApplyPolicy {
    bool trust_wcc = true;
    ReportLimits limits;                      // max_ctime = wall clock + WCC_Max_Ctime_Skew
    std::vector<std::uint32_t> stale_mirrors; // the file's stale mirrors now
    // The file's anchor (attr_cache.hpp) when its FSAL object holds one: a report reaches
    // the file's snapshot without a hash probe.
    const CacheAnchor* anchor = nullptr;
};

/// A data file whose owner or group differs from the fencing credentials.
struct CredentialRepair {
    std::size_t data_file = 0; // index in the DataFileMap
    DataFileKey key;
    std::uint32_t reported_uid = 0;
    std::uint32_t reported_gid = 0;
    std::uint32_t expected_uid = 0;
    std::uint32_t expected_gid = 0;
};

/// Data files of one export with a repair in flight, so that many reports of one mismatch
/// cause one SETATTR. Thread-safe; a short mutex, not on any hot path.
class RepairTracker {
public:
    /// True if the caller now owns the repair of key (none was in flight).
    bool try_begin(const DataFileKey& key);
    void end(const DataFileKey& key);
    std::size_t in_flight() const;

private:
    mutable std::mutex mu_;
    std::unordered_set<DataFileKey, DataFileKeyHash> in_flight_;
};

struct ApplyOutcome {
    BodyStatus status = BodyStatus::Ok; // what the operation answers
    std::string why;                    // for status != Ok: the bad entry and the reason
    std::size_t bad_entry = 0;
    bool untrusted = false; // Trust_WCC off: nothing applied
    WccResult cache;        // what AttrCache::apply_wcc did (zero when not called)
    std::uint32_t empty = 0;
    std::uint32_t unmatched = 0;
    std::uint32_t stale_mirror = 0; // entries naming a stale mirror: ignored
    std::uint32_t credential_mismatches = 0;
    std::uint32_t repairs_coalesced = 0;
    std::vector<CredentialRepair> repairs; // to send; the caller ends each in the tracker
};

/// One LAYOUT_WCC body for map.file_id, already split into entries (see the order above).
/// map is the file's data files now (cache keys, expected fencing credentials); layout,
/// when given, the data files the caller's layout named: only those can be matched.
/// Counts into `counters`.
ApplyOutcome apply_layout_wcc(AttrCache& cache, const mds::DataFileMap& map,
                              const mds::DataFileMap* layout, std::span<const BodyEntry> entries,
                              const AttrDecoder& decode, LayoutAuthority authority,
                              const ApplyPolicy& policy, RepairTracker& repairs,
                              WccCounters& counters, std::int64_t now_ns = monotonic_now_ns());

/// The same with the entries already validated (validate_entries): the FSAL decodes and
/// maps owner strings before it takes the file's state lock, then applies under it.
ApplyOutcome apply_layout_wcc(AttrCache& cache, const mds::DataFileMap& map,
                              const mds::DataFileMap* layout, std::span<const BodyEntry> entries,
                              const Validation& validated, LayoutAuthority authority,
                              const ApplyPolicy& policy, RepairTracker& repairs,
                              WccCounters& counters, std::int64_t now_ns = monotonic_now_ns());

} // namespace flexfiles::wcc
