// SPDX-License-Identifier: LGPL-3.0-or-later
//
// The WCC attribute cache: the last known attributes of every data file, learned from
// LAYOUT_WCC (RFC 9766), from the MDS's own NFSv3 GETATTRs to the data servers, and from
// LAYOUTCOMMIT / MDS-side SETATTR(size). It knows nothing about RPC or Ganesha: the FSAL
// resolves the RFC's (deviceid, stateid, filehandle) triple to a DataFileKey first.
//
// Data structure
//   One liburcu lock-free hash table (cds_lfht, urcu-bp flavour like Ganesha) keyed by the
//   MDS file id. Each node is itself the file's immutable snapshot: the file id, then an
//   array of per-data-file records (one per (mirror, data server) the cache has heard of,
//   sorted by slot) and an optional barrier record (the last LAYOUTCOMMIT or MDS
//   SETATTR(size)). Keeping a file's data files together makes the merged view one
//   consistent read: a GETATTR never mixes two publications.
//
// Readers and memory reclamation
//   Readers take no lock: rcu_read_lock (urcu-bp registers the thread on first use), hash
//   lookup, copy out, rcu_read_unlock. A reader sees a whole node or none of it, never size
//   from one update and mtime from another. Writers copy the current node, change the copy,
//   and swap it in with cds_lfht_replace (lock-free; it fails when another writer replaced
//   the node first, and the loser frees its unpublished copy and starts again from the
//   winner's). The replaced node is handed to call_rcu; after a grace period its memory
//   goes back to a per-size pool that writers allocate from (or to free() when the pool is
//   full). forget() removes the node (cds_lfht_del) and reclaims it the same way. Counters
//   are per-thread stripes bumped without atomic read-modify-writes, so a lookup executes
//   no locked instruction (on x86 one would be a full barrier).
//
// Ordering (never replace newer with older), per data file
//   - Every report must carry time_metadata (the data file's ctime on its data server); a
//     report without one cannot be ordered and is ignored (counted as invalid).
//   - A report whose ctime is older than the cached ctime is stale: ignored, counted.
//   - Tie (same ctime): the later arrival wins for every field it is allowed to set, except
//     atime, which never moves backwards on a tie (atime changes without a ctime change).
//   - Barrier: a LAYOUTCOMMIT or MDS SETATTR(size) records, per data file, a floor = the
//     newest ctime known for that data file at that moment (for SETATTR(size): the ctime
//     the data server returned for the truncate, when the caller passes it). A later report
//     with ctime <= floor is older than the barrier and ignored as stale: ties go to the
//     barrier. For SETATTR(size), a data file whose truncate ctime is unknown is "unordered":
//     client reports for it are ignored until an MDS GETATTR issued after the barrier (by
//     the MDS monotonic clock, strictly after) re-establishes its ctime. A LAYOUTCOMMIT does
//     not need that: it can only grow the file (RFC 8881 18.42.3), so its size is a floor
//     for the merged size until the next SETATTR(size).
// Authority (who may set what)
//   - A client report comes with the iomode of the reporter's layout. READ_WRITE may set
//     every attribute. READ may move atime only; everything else in its report is ignored
//     and counted per attribute (attrs_unauthorised); an entry with nothing left is counted
//     as ignored_unauthorised. A READ report never refreshes a record's learned time.
//   - The MDS's own sources (DS_GETATTR, MDS_WRITE, LAYOUTCOMMIT) have full authority.
//   - mode/uid/gid are the data file's credentials on its data server, never the file's:
//     stored, exposed through check_credentials() against the expected fencing credentials,
//     and never part of the merged view.
// Merged view (what GETATTR returns)
//   Mirrors hold the same bytes, so size, mtime and ctime all come from one record: the
//   freshest data file by ctime (ties: the most recently learned, then the lowest (mirror,
//   data server) slot). With a barrier, only data files updated past their floor compete;
//   if none did, size (and mtime when given) come from the barrier record. atime is the
//   maximum over all data files: reads are spread over the mirrors. space_used is the sum
//   over data files: RFC 8881 defines it as the bytes the file system allocates to the
//   object, and a mirrored file really occupies every copy (what quota and du should see);
//   max would under-report by the mirror count. The merged view says how many data files
//   the sum covers, so the caller can tell a partial sum.
// Freshness
//   Each record carries learned_ns (monotonic ns when its ctime-ordered state was last
//   accepted, 0 = never); MergedAttrs::learned_ns is when the record the answer came from
//   was learned: its age is what the fallback compares with WCC_Max_Age.
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

struct cds_lfht;

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
    std::uint32_t ignored_stale = 0;
    std::uint32_t ignored_unauthorised = 0;
    std::uint32_t ignored_unmatched = 0;
    std::uint32_t ignored_invalid = 0;
    std::uint32_t attrs_unauthorised = 0; // attribute values dropped for authority
    bool out_of_memory = false;           // nothing was applied
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

/// The file's attributes as the data servers see them (see "Merged view" above).
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

/// Counter snapshot, for logs and (later) dbus.
struct CacheStats {
    std::uint64_t ops = 0; // apply_wcc calls (LAYOUT_WCC operations)
    std::uint64_t entries_applied = 0;
    std::uint64_t entries_ignored_unmatched = 0;
    std::uint64_t entries_ignored_stale = 0;
    std::uint64_t entries_ignored_unauthorised = 0;
    std::uint64_t entries_ignored_invalid = 0;
    std::uint64_t attrs_unauthorised = 0;
    std::uint64_t credential_checks = 0;
    std::uint64_t credential_mismatches = 0;
    std::uint64_t hits = 0;   // lookup()/merged() found the file
    std::uint64_t misses = 0; // ... did not
    std::uint64_t ds_getattr_applied = 0;
    std::uint64_t ds_getattr_stale = 0;
    std::uint64_t layoutcommits = 0;
    std::uint64_t mds_setattrs = 0;
    std::uint64_t publish_retries = 0; // lost compare-and-swap races
    std::uint64_t alloc_failures = 0;
    std::uint64_t files = 0; // files in the table now
    // Process-wide (all caches): snapshots handed to call_rcu, and freed by it.
    std::uint64_t snapshots_retired = 0;
    std::uint64_t snapshots_freed = 0;
};

/// Monotonic clock in ns (CLOCK_MONOTONIC), the time base of learned_ns and barriers.
std::int64_t monotonic_now_ns();

class AttrCache {
public:
    /// expected_files sizes the initial hash table; it grows by itself.
    explicit AttrCache(std::size_t expected_files = 1024);
    ~AttrCache(); // no concurrent callers allowed
    AttrCache(const AttrCache&) = delete;
    AttrCache& operator=(const AttrCache&) = delete;

    /// A LAYOUT_WCC body for one file, from a client holding a layout of this iomode. All
    /// entries are published together (one snapshot). Entries for the same slot are taken
    /// in order.
    /// per_entry, when its size matches reports, receives each entry's outcome (for logs).
    WccResult apply_wcc(FileId file, Iomode iomode, std::span<const WccReport> reports,
                        std::span<Outcome> per_entry = {},
                        std::int64_t now_ns = monotonic_now_ns());

    /// The MDS's own GETATTR answer; issued_ns is when the GETATTR was sent (it orders the
    /// answer against barriers).
    Outcome apply_ds_getattr(const DataFileKey& key, const DsAttrs& attrs, std::int64_t issued_ns,
                             std::int64_t now_ns = monotonic_now_ns());

    /// LAYOUTCOMMIT: new_size is last_write_offset + 1 when the client sent one; mtime when
    /// it sent one. Sets the barrier (see the top of this file).
    Outcome record_layoutcommit(FileId file, std::optional<std::uint64_t> new_size,
                                std::optional<NfsTime> mtime,
                                std::int64_t now_ns = monotonic_now_ns());

    /// The MDS truncated the file to size (on every data file in truncated). Sets the
    /// barrier; post-op attributes, when given, become the data files' records.
    Outcome record_mds_setattr_size(FileId file, std::uint64_t size, std::optional<NfsTime> mtime,
                                    std::span<const TruncatedDataFile> truncated,
                                    std::int64_t now_ns = monotonic_now_ns());

    std::optional<DataFileAttrs> lookup(const DataFileKey& key) const;
    std::optional<MergedAttrs> merged(FileId file) const;
    std::vector<DataFileAttrs> data_files(FileId file) const;

    /// Compare the cached data file's credentials with the fencing ones (Unknown when the
    /// cache has no uid/gid for it). Mismatches are counted: the caller repairs.
    CredCheck check_credentials(const DataFileKey& key, const FencingCreds& expected) const;
    /// The same for attributes a client reported (e.g. with LAYOUTERROR NFS4ERR_ACCESS)
    /// without storing them; works for reports from any iomode.
    CredCheck check_reported_credentials(const DsAttrs& reported,
                                         const FencingCreds& expected) const;

    /// Drop the file (it was removed or evicted); memory is freed after a grace period.
    void forget(FileId file);

    std::size_t files() const;
    CacheStats stats() const;

    /// Wait until every snapshot retired so far is freed (rcu_barrier). Tests and shutdown.
    static void wait_for_reclaim();

    // Defined in attr_cache.cpp.
    struct Record;   // one data file (or the barrier), 80 bytes
    struct Node;     // hash-table node = the file's immutable snapshot of records
    struct Counters; // striped counters

private:
    struct Draft;
    enum class Published : std::uint8_t;

    Node* find_node(FileId file) const;
    template <class Edit> Published publish(FileId file, Edit&& edit);

    cds_lfht* table_ = nullptr;
    std::unique_ptr<Counters> counters_;
};

} // namespace flexfiles::wcc
