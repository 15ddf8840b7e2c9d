// SPDX-License-Identifier: LGPL-3.0-or-later
//
// The plain values the attribute cache speaks in: keys of data files, a data server's
// attributes of one, where they came from, the iomode of the reporter, what became of a
// report, the merged view of a file and the fencing credentials. Nothing here knows how the
// cache stores them: the rules (attr_rules.hpp) and the cache (attr_cache.hpp) both take
// them, and so does every caller, through attr_cache.hpp.
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <optional>

namespace flexfiles::wcc {

/// The MDS's identity of a file (its fileid), the first part of every key.
using FileId = std::uint64_t;

/// Position of a data file in the file's layout: index in ffl_mirrors, index in
/// ffm_data_servers. 0xFFFF is reserved (the barrier record), so at most kMaxIndex.
struct DataFileSlot {
    std::uint16_t mirror = 0;
    std::uint16_t data_server = 0;
    auto operator<=>(const DataFileSlot&) const = default;
};
inline constexpr std::uint16_t kMaxIndex = 0xFFFE;

/// A data file within the MDS: what the FSAL resolves (deviceid, stateid, filehandle) to.
struct DataFileKey {
    FileId file = 0;
    DataFileSlot slot;
    bool operator==(const DataFileKey&) const = default;
};

/// For unordered containers keyed by data file (e.g. the fallback's single-flight).
struct DataFileKeyHash {
    std::size_t operator()(const DataFileKey& k) const noexcept {
        return static_cast<std::size_t>(k.file * 0x9e3779b97f4a7c15ull) ^
               (static_cast<std::size_t>(k.slot.mirror) << 16 | k.slot.data_server);
    }
};

/// Which attributes of a DsAttrs are present.
enum AttrBit : std::uint16_t {
    kAttrSize = 1u << 0,
    kAttrSpaceUsed = 1u << 1,
    kAttrMode = 1u << 2,
    kAttrOwner = 1u << 3,
    kAttrGroup = 1u << 4,
    kAttrAtime = 1u << 5,
    kAttrMtime = 1u << 6,
    kAttrCtime = 1u << 7,
};
inline constexpr std::uint16_t kAttrsAll = 0xFF;
/// What a READ layout's reporter may change.
inline constexpr std::uint16_t kAttrsReadAuthority = kAttrAtime;

/// An NFS timestamp as signed nanoseconds since the epoch: years 1677..2262, a superset of
/// NFSv3's unsigned 32-bit seconds (1970..2106), where every data-file time comes from.
struct NfsTime {
    std::int64_t ns = 0;

    /// From nfstime4 / nfstime3 parts; nullopt when nseconds >= 1e9 or out of range.
    static std::optional<NfsTime> from_parts(std::int64_t seconds, std::uint32_t nseconds);
    std::int64_t seconds() const;
    std::uint32_t nseconds() const;
    auto operator<=>(const NfsTime&) const = default;
};

/// Attributes of one data file as its data server reported them.
struct DsAttrs {
    std::uint64_t size = 0;
    std::uint64_t space_used = 0;
    NfsTime atime, mtime, ctime;
    std::uint32_t mode = 0;  // permission and type bits as NFSv3 reports them
    std::uint32_t uid = 0;   // owner, already mapped from the fattr4 string
    std::uint32_t gid = 0;   // owner_group, likewise
    std::uint16_t valid = 0; // AttrBit mask

    bool has(std::uint16_t bits) const { return (valid & bits) == bits; }
    bool operator==(const DsAttrs&) const = default;
};

/// Where a record's current state was learned.
enum class Source : std::uint8_t {
    None = 0,
    Wcc,          // LAYOUT_WCC from a client
    DsGetattr,    // the MDS's own NFSv3 GETATTR to the data server
    LayoutCommit, // LAYOUTCOMMIT (barrier record only)
    MdsWrite,     // the MDS changed the data file itself (SETATTR(size), ...)
};
const char* to_string(Source s);

/// Layout iomode of the reporting client (values of layoutiomode4).
enum class Iomode : std::uint8_t { Read = 1, ReadWrite = 2 };

/// What happened to one reported entry. The first rule that rejects an entry names it.
enum class Outcome : std::uint8_t {
    Applied,             // everything offered was authorised and stored
    AppliedPartly,       // stored; some attributes were unauthorised and dropped
    IgnoredStale,        // older than the cache or than a barrier
    IgnoredFuture,       // a client's ctime too far ahead of the MDS's clock (ReportLimits)
    IgnoredUnauthorised, // nothing offered was authorised for this iomode
    IgnoredUnmatched,    // the triple named no data file of the layout
    IgnoredInvalid,      // no ctime, or a reserved slot index
    OutOfMemory,         // the copy could not be allocated; cache unchanged
};
const char* to_string(Outcome o);

/// One ff_data_server_wcc4 entry after the FSAL resolved its triple.
struct WccReport {
    std::optional<DataFileSlot> slot; // nullopt: matched no data file of the layout
    DsAttrs attrs;
};

/// Per-operation summary of apply_wcc (also added to the cache counters).
struct WccResult {
    std::uint32_t applied = 0; // Applied + AppliedPartly
    // Of those, entries that changed what their record holds; the others only renewed when
    // it was learned (a client repeating its last report): nothing for MDCACHE to hear.
    std::uint32_t changed = 0;
    std::uint32_t ignored_stale = 0;
    std::uint32_t ignored_unauthorised = 0;
    std::uint32_t ignored_unmatched = 0;
    std::uint32_t ignored_invalid = 0;
    std::uint32_t ignored_future = 0;     // ctime beyond ReportLimits::max_ctime
    std::uint32_t attrs_unauthorised = 0; // attribute values dropped for authority
    bool out_of_memory = false;           // nothing was applied
};

/// What a client's report may say, set per operation by the caller (LAYOUT_WCC:
/// max_ctime = the MDS's wall clock + WCC_Max_Ctime_Skew).
struct ReportLimits {
    NfsTime max_ctime{INT64_MAX}; // a report's ctime beyond it: IgnoredFuture
};

/// A data file the MDS just truncated, with the post-operation attributes its data server
/// returned for the SETATTR when there were any (NFSv3 SETATTR replies carry them).
struct TruncatedDataFile {
    DataFileSlot slot;
    std::optional<DsAttrs> post_op;
};

/// One data file as cached.
struct DataFileAttrs {
    DataFileKey key;
    DsAttrs attrs;
    Source source = Source::None;
    std::int64_t learned_ns = 0; // 0: ctime-ordered state never learned (READ-only reports)
    bool past_barrier = false;   // updated after the file's last barrier
    bool unordered = false;      // waiting for an MDS GETATTR after a SETATTR(size)

    std::int64_t age_ns(std::int64_t now_ns) const;
};

/// The file's attributes as the data servers see them (attr_rules.hpp, "Merged view").
struct MergedAttrs {
    DsAttrs attrs; // size, space_used, atime, mtime, ctime (valid says which); no credentials
    Source size_source = Source::None;
    std::uint32_t data_files = 0;       // data files the cache knows of
    std::uint32_t space_used_known = 0; // of those, how many the space_used sum covers
    std::int64_t learned_ns = 0;        // when the size/mtime/ctime answer was learned
    std::int64_t oldest_learned_ns = 0; // oldest data file (0 if one was never learned)

    /// True when the answer is older than max_age_ns (or was never learned).
    bool older_than(std::int64_t max_age_ns, std::int64_t now_ns) const;
};

/// What a data file must look like for fencing (the synthetic credentials of the layout).
struct FencingCreds {
    std::uint32_t uid = 0;
    std::uint32_t gid = 0;
    std::optional<std::uint32_t> mode; // permission bits (07777) to compare, if any
};
enum class CredCheck : std::uint8_t { Match, Mismatch, Unknown };
const char* to_string(CredCheck c);

/// Monotonic clock in ns (CLOCK_MONOTONIC), the time base of learned_ns and barriers.
std::int64_t monotonic_now_ns();

/// The MDS's wall clock (CLOCK_REALTIME), what reported ctimes are compared with.
NfsTime wall_clock_now();

} // namespace flexfiles::wcc
