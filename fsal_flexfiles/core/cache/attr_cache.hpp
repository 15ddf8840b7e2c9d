// SPDX-License-Identifier: LGPL-3.0-or-later
//
// The WCC attribute cache: the last known attributes of every data file, learned from
// LAYOUT_WCC (RFC 9766), from the MDS's own NFSv3 GETATTRs to the data servers, and from
// LAYOUTCOMMIT / MDS-side SETATTR(size). It knows nothing about RPC or Ganesha: the FSAL
// resolves the RFC's (deviceid, stateid, filehandle) triple to a DataFileKey first.
//
// This header is the whole API; behind it the cache is split by concern:
//   attr_types.hpp        the plain values it takes and returns (included here)
//   attr_rules.hpp        which report wins, who may set what, barriers, the merged view:
//                         pure functions over plain records; read it for the rules
//   snapshot_table.hpp    the RCU mechanics: a liburcu lock-free hash table whose nodes are
//                         the files' snapshots; lock-free readers (sequence-lock reads),
//                         writers that hold one file's snapshot at a time, call_rcu
//                         reclamation of replaced ones
//   snapshot_pool.hpp     recycled snapshot memory
//   CacheAnchor (below)   a file's current snapshot, kept in its FSAL object: a GETATTR's
//                         way in without hashing
//   striped_counters.hpp  per-thread counter stripes: a lookup executes no locked
//                         instruction (on x86 one would be a full barrier)
// attr_cache.cpp joins them: an update takes the file's snapshot, copies it into a draft and
// applies the rules to the draft, then writes it back in place when it has the same data
// files, or publishes it as a new snapshot; a read is one RCU read section.
#pragma once

#include "cache/attr_types.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

struct cds_lfht;

namespace flexfiles::wcc {

/// Counter snapshot, for logs and (later) dbus.
struct CacheStats {
    std::uint64_t ops = 0; // apply_wcc calls (LAYOUT_WCC operations)
    std::uint64_t entries_applied = 0;
    std::uint64_t entries_ignored_unmatched = 0;
    std::uint64_t entries_ignored_stale = 0;
    std::uint64_t entries_ignored_unauthorised = 0;
    std::uint64_t entries_ignored_invalid = 0;
    std::uint64_t entries_ignored_future = 0; // ctime beyond ReportLimits::max_ctime
    std::uint64_t attrs_unauthorised = 0;
    std::uint64_t credential_checks = 0;
    std::uint64_t credential_mismatches = 0;
    std::uint64_t hits = 0;   // lookup()/merged() found the file
    std::uint64_t misses = 0; // ... did not
    std::uint64_t ds_getattr_applied = 0;
    std::uint64_t ds_getattr_stale = 0;
    std::uint64_t layoutcommits = 0;
    std::uint64_t mds_setattrs = 0;
    std::uint64_t publish_retries = 0;        // a writer found the snapshot gone and looked again
    std::uint64_t updates_in_place = 0;       // updates written into the file's snapshot
    std::uint64_t updates_through_anchor = 0; // ... of them reached through its anchor
    std::uint64_t alloc_failures = 0;
    std::uint64_t files = 0; // files in the table now
    // Process-wide (all caches): snapshots handed to call_rcu, and freed by it.
    std::uint64_t snapshots_retired = 0;
    std::uint64_t snapshots_freed = 0;
};

/// A file's way in from its FSAL object, which holds one (AttrCache::attach): the cache
/// keeps it pointing at the file's current snapshot, so a GETATTR reaches the file's records
/// with one dependent load instead of a hash probe. Its memory must stay valid for an RCU
/// grace period after detach() (the FSAL frees its handles after one).
class CacheAnchor {
public:
    CacheAnchor() = default;
    CacheAnchor(const CacheAnchor&) = delete;
    CacheAnchor& operator=(const CacheAnchor&) = delete;

    /// Whether the cache keeps it pointing at a snapshot now (forget() and detach() stop it).
    bool attached() const noexcept { return current_.load(std::memory_order_relaxed) != nullptr; }

private:
    friend class AttrCache;
    std::atomic<const void*> current_{nullptr}; // the file's snapshot (snapshot_table.hpp)
    std::atomic_flag lock_ = ATOMIC_FLAG_INIT;  // taken by writers only
    std::uint64_t generation_ = 0;              // current_'s publication; under lock_
};

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
    /// limits bound what the client may say (a ctime too far ahead: IgnoredFuture).
    WccResult apply_wcc(FileId file, Iomode iomode, std::span<const WccReport> reports,
                        std::span<Outcome> per_entry = {}, std::int64_t now_ns = monotonic_now_ns(),
                        const ReportLimits& limits = {});
    /// The same through the file's anchor: an update that keeps the snapshot's shape (a
    /// writer's next report) reaches it with one load instead of a hash probe; any other,
    /// or one through an anchor that is not attached, goes through the table.
    WccResult apply_wcc(const CacheAnchor& anchor, FileId file, Iomode iomode,
                        std::span<const WccReport> reports, std::span<Outcome> per_entry = {},
                        std::int64_t now_ns = monotonic_now_ns(), const ReportLimits& limits = {});

    /// The MDS's own GETATTR answer (or post-op attributes of its own I/O); issued_ns is when
    /// the request was sent: it orders the answer against barriers, and the answer replaces
    /// a client-reported record learned before it whatever their ctimes (attr_rules.hpp).
    Outcome apply_ds_getattr(const DataFileKey& key, const DsAttrs& attrs, std::int64_t issued_ns,
                             std::int64_t now_ns = monotonic_now_ns());

    /// LAYOUTCOMMIT: new_size is last_write_offset + 1 when the client sent one; mtime when
    /// it sent one. Sets the barrier (attr_rules.hpp).
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
    /// The same through the file's anchor: one dependent load while it is attached, the
    /// table otherwise.
    std::optional<MergedAttrs> merged(const CacheAnchor& anchor, FileId file) const;

    /// Makes `anchor` follow the file's current snapshot from now on (the file gets an empty
    /// one if it has none: merged() then says 0 data files). A file has one anchor: a later
    /// attach() takes the place of the earlier one, which then reads through the table.
    void attach(FileId file, CacheAnchor& anchor);
    /// The cache stops using `anchor` (nothing to do when it is not the file's). After it
    /// returns no snapshot names the anchor; writers that read one before may still touch
    /// it until a grace period has passed.
    void detach(FileId file, CacheAnchor& anchor);
    std::vector<DataFileAttrs> data_files(FileId file) const;

    /// Compare the cached data file's credentials with the fencing ones (Unknown when the
    /// cache has no uid/gid for it). Mismatches are counted: the caller repairs.
    CredCheck check_credentials(const DataFileKey& key, const FencingCreds& expected) const;
    /// The same for attributes a client reported (e.g. with LAYOUTERROR NFS4ERR_ACCESS)
    /// without storing them; works for reports from any iomode.
    CredCheck check_reported_credentials(const DsAttrs& reported,
                                         const FencingCreds& expected) const;

    /// Drop the file (it was removed or evicted); memory is freed after a grace period.
    /// Neither this, the destructor nor wait_for_reclaim() may run in a call_rcu callback.
    void forget(FileId file);

    std::size_t files() const;
    CacheStats stats() const;

    /// Wait until every snapshot retired so far is freed (rcu_barrier). Tests and shutdown.
    static void wait_for_reclaim();

private:
    struct Draft;    // a writer's copy of a snapshot (attr_cache.cpp)
    struct Counters; // striped counters and the file count (attr_cache.cpp)
    enum class Published : std::uint8_t;

    template <class Edit>
    Published publish(FileId file, Edit&& edit, const CacheAnchor* anchor = nullptr);
    WccResult apply_wcc_at(const CacheAnchor* anchor, FileId file, Iomode iomode,
                           std::span<const WccReport> reports, std::span<Outcome> per_entry,
                           std::int64_t now_ns, const ReportLimits& limits);
    std::uint64_t next_generation() noexcept;
    static void follow(CacheAnchor* anchor, const void* snapshot,
                       std::uint64_t generation) noexcept;

    // The snapshot table (snapshot_table.hpp), as the plain pointer liburcu hands out so
    // that this header includes no liburcu: a lookup reaches the table in one load.
    cds_lfht* table_ = nullptr;
    std::unique_ptr<Counters> counters_;
};

} // namespace flexfiles::wcc
