// SPDX-License-Identifier: LGPL-3.0-or-later
//
// The attribute cache's rules (attr_rules.hpp says them): the per-record ordering and
// authority rule, the merge, the barriers and the credential check. Who may set what
// (client_report_rules, ds_getattr_rules) and count_outcome are inline in the header.
#include "cache/attr_rules.hpp"

#include <algorithm>
#include <bit>
#include <limits>

namespace flexfiles::wcc {

using enum Record::Flag;

// ---------------------------------------------------------------------------------------
// One report against one data file's record

namespace {

bool from_mds(Source s) {
    return s == Source::DsGetattr || s == Source::MdsWrite;
}

} // namespace

Outcome apply_to_record(Record& rec, bool have_barrier, const DsAttrs& r, const ApplyRules& rules,
                        std::int64_t now_ns, std::uint32_t& dropped) {
    dropped = 0;
    if (!r.has(kAttrCtime)) {
        return Outcome::IgnoredInvalid;
    }
    if (rules.from_client && r.ctime > rules.max_ctime) {
        return Outcome::IgnoredFuture;
    }
    const bool cached_ctime = rec.attrs.has(kAttrCtime);
    // The MDS's own answer replaces what a client reported before the MDS asked.
    const bool replaces_client = !rules.from_client && cached_ctime && rec.source == Source::Wcc &&
                                 rules.issued_ns >= rec.learned_ns;
    if (cached_ctime && r.ctime < rec.attrs.ctime && !replaces_client) {
        return Outcome::IgnoredStale;
    }
    if (!rules.issued_after_barrier) {
        if (rec.flags & kUnordered) {
            return Outcome::IgnoredStale;
        }
        if ((rec.flags & kHasFloor) && r.ctime <= rec.floor) {
            return Outcome::IgnoredStale; // ties go to the barrier
        }
    }
    const std::uint16_t offered = r.valid & kAttrsAll;
    std::uint16_t allowed = offered & rules.authority;
    dropped = static_cast<std::uint32_t>(std::popcount(static_cast<unsigned>(offered & ~allowed)));
    if (allowed == 0) {
        return Outcome::IgnoredUnauthorised;
    }
    if (!cached_ctime && !(allowed & kAttrCtime)) {
        // A READ report never creates a record: one without ctime would make the file look
        // cached with nothing ordered in it.
        return Outcome::IgnoredUnauthorised;
    }
    const bool tie = cached_ctime && r.ctime == rec.attrs.ctime;
    if (tie && rules.from_client && from_mds(rec.source)) {
        // The data server's own word for this ctime stands; atime may still move forward.
        allowed &= kAttrAtime;
        if (allowed == 0) {
            return Outcome::IgnoredStale;
        }
    }
    DsAttrs& a = rec.attrs;
    if (allowed & kAttrSize) {
        a.size = r.size;
    }
    if (allowed & kAttrSpaceUsed) {
        a.space_used = r.space_used;
    }
    if (allowed & kAttrMode) {
        a.mode = r.mode;
    }
    if (allowed & kAttrOwner) {
        a.uid = r.uid;
    }
    if (allowed & kAttrGroup) {
        a.gid = r.gid;
    }
    if (allowed & kAttrMtime) {
        a.mtime = r.mtime;
    }
    if (allowed & kAttrAtime) {
        // A client's atime, or anyone's on a ctime tie, only moves forward: reads change
        // atime without changing ctime, so arrival order says nothing about it.
        const bool replace = !a.has(kAttrAtime) || (!rules.from_client && !tie);
        a.atime = replace ? r.atime : std::max(a.atime, r.atime);
    }
    if (allowed & kAttrCtime) {
        a.ctime = r.ctime;
        // The record's ctime-ordered state is now as new as this report.
        rec.source = rules.source;
        rec.learned_ns = now_ns;
        if (have_barrier) {
            rec.flags |= kPastBarrier;
        }
        if (rules.issued_after_barrier) {
            rec.flags &= static_cast<std::uint8_t>(~kUnordered);
            // Asked after the barrier: the data file's ctime at the barrier was no later.
            if ((rec.flags & kHasFloor) && rec.floor > r.ctime) {
                rec.floor = r.ctime;
            }
        }
    }
    a.valid |= allowed;
    return dropped ? Outcome::AppliedPartly : Outcome::Applied;
}

// ---------------------------------------------------------------------------------------
// The merged view

namespace {

bool fresher(const Record& a, const Record& b) {
    if (a.attrs.ctime != b.attrs.ctime) {
        return a.attrs.ctime > b.attrs.ctime;
    }
    return a.learned_ns > b.learned_ns; // equal too: the earlier (lower) slot stays
}

} // namespace

MergedAttrs merge_records(const Record* barrier, std::span<const Record> files) {
    MergedAttrs m;
    DsAttrs& out = m.attrs;
    const Record* best_past = nullptr; // freshest that competes with the barrier
    const Record* best_any = nullptr;  // freshest at all
    std::int64_t oldest = std::numeric_limits<std::int64_t>::max();
    bool never_learned = false;
    for (const Record& r : files) {
        if (r.attrs.has(kAttrSpaceUsed)) {
            out.space_used += r.attrs.space_used;
            m.space_used_known++;
        }
        if (r.attrs.has(kAttrAtime)) {
            out.atime = out.has(kAttrAtime) ? std::max(out.atime, r.attrs.atime) : r.attrs.atime;
            out.valid |= kAttrAtime;
        }
        if (r.learned_ns == 0) {
            never_learned = true;
        } else {
            oldest = std::min(oldest, r.learned_ns);
        }
        if (!r.attrs.has(kAttrCtime)) {
            continue;
        }
        if (best_any == nullptr || fresher(r, *best_any)) {
            best_any = &r;
        }
        if ((barrier == nullptr || (r.flags & kPastBarrier)) &&
            (best_past == nullptr || fresher(r, *best_past))) {
            best_past = &r;
        }
    }
    m.data_files = static_cast<std::uint32_t>(files.size());
    if (m.space_used_known) {
        out.valid |= kAttrSpaceUsed;
    }
    m.oldest_learned_ns = (never_learned || files.empty()) ? 0 : oldest;

    auto take = [&out](const Record& r, std::uint16_t bits) {
        const std::uint16_t have = r.attrs.valid & bits;
        if (have & kAttrSize) {
            out.size = r.attrs.size;
        }
        if (have & kAttrMtime) {
            out.mtime = r.attrs.mtime;
        }
        if (have & kAttrCtime) {
            out.ctime = r.attrs.ctime;
        }
        out.valid |= have;
    };
    if (best_past) {
        take(*best_past, kAttrSize | kAttrMtime | kAttrCtime);
        m.size_source = best_past->source;
        m.learned_ns = best_past->learned_ns;
        // A LAYOUTCOMMIT's size is a floor; any barrier's size stands in for a missing one.
        if (barrier && barrier->attrs.has(kAttrSize) &&
            (!out.has(kAttrSize) ||
             ((barrier->flags & kGrowOnly) && barrier->attrs.size > out.size))) {
            out.size = barrier->attrs.size;
            out.valid |= kAttrSize;
            m.size_source = barrier->source;
        }
    } else if (barrier) {
        take(*barrier, kAttrSize | kAttrMtime);
        if (best_any) {
            take(*best_any,
                 static_cast<std::uint16_t>(kAttrCtime | (out.has(kAttrMtime) ? 0 : kAttrMtime)));
        }
        m.size_source = barrier->source;
        m.learned_ns = barrier->learned_ns;
    }
    return m;
}

// ---------------------------------------------------------------------------------------
// Barriers

Record apply_layoutcommit(const Record* barrier, std::span<Record> files,
                          std::optional<std::uint64_t> new_size, std::optional<NfsTime> mtime,
                          std::int64_t now_ns) {
    const MergedAttrs now = merge_records(barrier, files);
    Record b{};
    b.slot = kBarrierSlot;
    b.source = Source::LayoutCommit;
    b.learned_ns = now_ns;
    b.flags = kGrowOnly;
    // RFC 8881 18.42.3: the new size is max(current size, last_write_offset + 1).
    if (new_size || now.attrs.has(kAttrSize)) {
        b.attrs.size =
            std::max(new_size.value_or(0), now.attrs.has(kAttrSize) ? now.attrs.size : 0);
        b.attrs.valid |= kAttrSize;
    }
    if (mtime) {
        b.attrs.mtime = *mtime;
        b.attrs.valid |= kAttrMtime;
    }
    for (Record& r : files) {
        if (r.attrs.has(kAttrCtime) && (!(r.flags & kHasFloor) || r.attrs.ctime > r.floor)) {
            r.floor = r.attrs.ctime;
            r.flags |= kHasFloor;
        }
        r.flags &= static_cast<std::uint8_t>(~kPastBarrier);
    }
    return b;
}

Record apply_setattr_size(std::span<Record> files, std::uint64_t size, std::optional<NfsTime> mtime,
                          std::int64_t now_ns) {
    Record b{};
    b.slot = kBarrierSlot;
    b.source = Source::MdsWrite;
    b.learned_ns = now_ns;
    b.attrs.size = size;
    b.attrs.valid = kAttrSize;
    if (mtime) {
        b.attrs.mtime = *mtime;
        b.attrs.valid |= kAttrMtime;
    }
    // Without the truncate's own ctime no floor is safe (a client's report of a write made
    // just before the truncate would pass any older floor): unordered until the data server
    // answers a GETATTR, or the post-op attributes (apply_truncate_post_op) settle it.
    for (Record& r : files) {
        r.flags = static_cast<std::uint8_t>((r.flags & ~kPastBarrier) | kUnordered);
    }
    return b;
}

Record unordered_record(DataFileSlot slot) {
    Record r{};
    r.slot = slot;
    r.flags = kUnordered;
    return r;
}

bool apply_truncate_post_op(Record& rec, const DsAttrs& post_op, std::int64_t now_ns) {
    if (!post_op.has(kAttrCtime)) {
        return false;
    }
    rec.attrs = post_op;
    rec.attrs.valid &= kAttrsAll;
    rec.source = Source::MdsWrite;
    rec.learned_ns = now_ns;
    rec.floor = post_op.ctime;
    rec.flags = kHasFloor | kPastBarrier;
    return true;
}

// ---------------------------------------------------------------------------------------
// Credentials

CredCheck compare_credentials(const DsAttrs& a, const FencingCreds& e) {
    if (!a.has(kAttrOwner | kAttrGroup) || (e.mode && !a.has(kAttrMode))) {
        return CredCheck::Unknown;
    }
    const bool same =
        a.uid == e.uid && a.gid == e.gid && (!e.mode || (a.mode & 07777u) == (*e.mode & 07777u));
    return same ? CredCheck::Match : CredCheck::Mismatch;
}

} // namespace flexfiles::wcc
