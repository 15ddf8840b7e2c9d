// SPDX-License-Identifier: LGPL-3.0-or-later
//
// The attribute cache's rules: which report wins, who may set what, what a LAYOUTCOMMIT or
// an MDS SETATTR(size) does to a file's records, and how a file's records merge into what
// GETATTR returns. Pure functions over plain values (a Record is 80 trivially copyable
// bytes): no liburcu, no allocation, no global state. AttrCache (attr_cache.cpp) runs them on
// a writer's draft copy of a file's snapshot, or on a published snapshot under an RCU read
// section; tests/unit/cache/test_attr_rules.cpp runs them on records it builds itself.
//
// Ordering (never replace newer with older), per data file
//   - Every report must carry time_metadata (the data file's ctime on its data server); a
//     report without one cannot be ordered and is ignored (counted as invalid).
//   - A client's report whose ctime is ahead of the MDS's wall clock by more than
//     WCC_Max_Ctime_Skew (ApplyRules::max_ctime) is refused (IgnoredFuture, counted): one
//     ctime in the future would make every later honest report and data-server answer look
//     stale.
//   - A report whose ctime is older than the cached ctime is stale: ignored, counted. One
//     exception: the MDS's own sources (DS_GETATTR, MDS_WRITE) replace a record a client
//     reported (Source::Wcc) whatever its ctime, when the MDS sent its request after that
//     record was learned (ApplyRules::issued_ns >= Record::learned_ns). What the data
//     server itself said beats what a client said it said; a wedged record heals at the
//     next data-server answer.
//   - Tie (same ctime), by who reported the cached record and who reports now:
//       client over client: the later arrival wins for every field it may set;
//       MDS source over anything: the later arrival wins;
//       client over an MDS source's record: the record stands (the data server's own word
//         for that ctime), only atime may move forward; nothing else offered: stale.
//     In every case atime never moves backwards on a tie (atime changes without ctime).
//   - Barrier: a LAYOUTCOMMIT or MDS SETATTR(size) records, per data file, a floor = the
//     newest ctime known for that data file at that moment (for SETATTR(size): the ctime
//     the data server returned for the truncate, when the caller passes it). A later report
//     with ctime <= floor is older than the barrier and ignored as stale: ties go to the
//     barrier. For SETATTR(size), a data file whose truncate ctime is unknown is "unordered":
//     client reports for it are ignored until an MDS GETATTR issued after the barrier (by
//     the MDS monotonic clock, strictly after) re-establishes its ctime. A LAYOUTCOMMIT does
//     not need that: it can only grow the file (RFC 8881 18.42.3), so its size is a floor
//     for the merged size until the next SETATTR(size). An MDS answer issued after the
//     barrier also lowers a floor above its ctime (a floor taken from a client's ctime
//     that the data server never reached).
// Authority (who may set what)
//   - A client report comes with the iomode of the reporter's layout. READ_WRITE may set
//     every attribute. READ may move atime only; everything else in its report is ignored
//     and counted per attribute (attrs_unauthorised); an entry with nothing left is counted
//     as ignored_unauthorised. A READ report never refreshes a record's learned time, and
//     it never creates a record: it applies only onto a record that already has a ctime
//     (otherwise ignored_unauthorised). A record without ctime would make the file look
//     cached with nothing to answer size from.
//   - The MDS's own sources (DS_GETATTR, MDS_WRITE, LAYOUTCOMMIT) have full authority.
//   - mode/uid/gid are the data file's credentials on its data server, never the file's:
//     stored, compared with the expected fencing credentials (compare_credentials), and
//     never part of the merged view.
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

#include "cache/attr_types.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <type_traits>

namespace flexfiles::wcc {

/// One data file's cached state, or the file's barrier (slot kBarrierSlot). A snapshot is
/// an array of these copied with memcpy, so it stays small and trivially copyable.
struct Record {
    enum Flag : std::uint8_t {
        kPastBarrier = 1u << 0, // ctime accepted after the file's last barrier
        kUnordered = 1u << 1,   // SETATTR(size) with unknown truncate ctime
        kHasFloor = 1u << 2,    // floor is meaningful
        kGrowOnly = 1u << 3,    // barrier record: size is a lower bound (LAYOUTCOMMIT)
    };

    DsAttrs attrs;
    std::int64_t learned_ns = 0;
    NfsTime floor; // reports with ctime <= floor predate the barrier (kHasFloor)
    DataFileSlot slot;
    Source source = Source::None;
    std::uint8_t flags = 0; // Flag bits
};
static_assert(sizeof(Record) == 80, "keep the per-data-file record small");
static_assert(std::is_trivially_copyable_v<Record>);

/// Whether two records hold the same state: everything but when it was learned.
inline bool same_but_learned(const Record& a, const Record& b) {
    return a.attrs == b.attrs && a.floor == b.floor && a.slot == b.slot && a.source == b.source &&
           a.flags == b.flags;
}

/// The barrier record's slot: no data file can have it (kMaxIndex).
inline constexpr DataFileSlot kBarrierSlot{0xFFFF, 0xFFFF};

/// A slot a data file can have: either index 0xFFFF is the barrier's.
constexpr bool valid_slot(DataFileSlot s) {
    return s.mirror <= kMaxIndex && s.data_server <= kMaxIndex;
}

/// Who sent a report decides how it is applied.
struct ApplyRules {
    std::uint16_t authority;      // AttrBits this source may set
    Source source;                // what the record's source becomes
    bool from_client;             // LAYOUT_WCC: its atime only moves forward
    bool issued_after_barrier;    // an MDS GETATTR sent strictly after the last barrier
    std::int64_t issued_ns = 0;   // MDS sources: when the request was sent (monotonic)
    NfsTime max_ctime{INT64_MAX}; // clients: a ctime beyond it is refused (IgnoredFuture)
};

// client_report_rules, ds_getattr_rules and count_outcome are inline: every update runs them.

/// A LAYOUT_WCC report from a client holding a layout of this iomode: ReadWrite may set
/// every attribute, Read atime only, an iomode outside layoutiomode4's two nothing.
inline ApplyRules client_report_rules(Iomode iomode, const ReportLimits& limits = {}) {
    const std::uint16_t authority = iomode == Iomode::ReadWrite ? kAttrsAll
                                    : iomode == Iomode::Read    ? kAttrsReadAuthority
                                                                : 0;
    return ApplyRules{authority, Source::Wcc, true, false, 0, limits.max_ctime};
}

/// The MDS's own GETATTR answer, sent at issued_ns (the monotonic clock): full authority.
/// It passes the barrier's floors, and settles an unordered record, only when it was sent
/// strictly after the barrier was recorded.
inline ApplyRules ds_getattr_rules(const Record* barrier, std::int64_t issued_ns) {
    const bool after = barrier != nullptr && issued_ns > barrier->learned_ns;
    return ApplyRules{kAttrsAll, Source::DsGetattr, false, after, issued_ns};
}

/// One report against one data file's record (a zero Record with only its slot set for a
/// data file not heard of yet). On Applied / AppliedPartly rec holds the result; otherwise
/// rec is unchanged. dropped receives how many offered attributes the authority refused.
/// have_barrier: the file has a barrier (an accepted ctime then marks rec past it).
Outcome apply_to_record(Record& rec, bool have_barrier, const DsAttrs& report,
                        const ApplyRules& rules, std::int64_t now_ns, std::uint32_t& dropped);

/// Adds one LAYOUT_WCC entry's outcome (and the attributes it had dropped) to the
/// operation's result.
inline void count_outcome(WccResult& res, Outcome o, std::uint32_t dropped) {
    res.attrs_unauthorised += dropped;
    switch (o) {
    case Outcome::Applied:
    case Outcome::AppliedPartly:
        res.applied++;
        break;
    case Outcome::IgnoredStale:
        res.ignored_stale++;
        break;
    case Outcome::IgnoredUnauthorised:
        res.ignored_unauthorised++;
        break;
    case Outcome::IgnoredUnmatched:
        res.ignored_unmatched++;
        break;
    case Outcome::IgnoredFuture:
        res.ignored_future++;
        break;
    default:
        res.ignored_invalid++;
        break;
    }
}

/// The file's merged view from its barrier (or nullptr) and its data files' records.
MergedAttrs merge_records(const Record* barrier, std::span<const Record> files);

/// LAYOUTCOMMIT: raises each data file's floor to its newest known ctime, marks none of
/// them past the barrier, and returns the barrier record that replaces the file's current
/// one (barrier, or nullptr). Its size is max(new_size, the merged size before) and grows
/// only (RFC 8881 18.42.3); its mtime is the client's, when it sent one.
Record apply_layoutcommit(const Record* barrier, std::span<Record> files,
                          std::optional<std::uint64_t> new_size, std::optional<NfsTime> mtime,
                          std::int64_t now_ns);

/// MDS SETATTR(size): marks every known data file unordered (not past the barrier) and
/// returns the barrier record (this size, and mtime when given). Then each truncated data
/// file the cache had not heard of gets unordered_record(), and each one whose data server
/// returned post-op attributes apply_truncate_post_op().
Record apply_setattr_size(std::span<Record> files, std::uint64_t size, std::optional<NfsTime> mtime,
                          std::int64_t now_ns);

/// A truncated data file the cache had not heard of: nothing orders it yet.
Record unordered_record(DataFileSlot slot);

/// The data server's own answer for the truncate becomes the record (full authority) and
/// the floor is exactly its ctime. Without a ctime the record stays unordered (false).
bool apply_truncate_post_op(Record& rec, const DsAttrs& post_op, std::int64_t now_ns);

/// Compares a data file's credentials on its data server with the fencing ones: Unknown
/// when the attributes lack owner, group, or the mode the expectation asks about.
CredCheck compare_credentials(const DsAttrs& attrs, const FencingCreds& expected);

/// A record as callers see it. Inline: lookup() copies one out per call.
inline DataFileAttrs data_file_attrs(FileId file, const Record& r) {
    DataFileAttrs d;
    d.key = DataFileKey{file, r.slot};
    d.attrs = r.attrs;
    d.source = r.source;
    d.learned_ns = r.learned_ns;
    d.past_barrier = (r.flags & Record::kPastBarrier) != 0;
    d.unordered = (r.flags & Record::kUnordered) != 0;
    return d;
}

} // namespace flexfiles::wcc
