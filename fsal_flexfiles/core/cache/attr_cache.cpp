// SPDX-License-Identifier: LGPL-3.0-or-later
//
// The WCC attribute cache's API (attr_cache.hpp): the counters, a writer's draft, the
// publishing loop, then the public methods, each of which applies the rules of
// attr_rules.hpp to a draft or reads one snapshot of snapshot_table.hpp.

// Inline urcu's read-side fast path (licence-compatible: we are LGPL too).
#define _LGPL_SOURCE
#include "cache/attr_cache.hpp"

#include "cache/attr_rules.hpp"
#include "cache/snapshot_table.hpp"
#include "cache/striped_counters.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <vector>

namespace flexfiles::wcc {

// ---------------------------------------------------------------------------------------
// Counters

namespace {

enum Counter : std::size_t {
    kOps,
    kApplied,
    kUnmatched,
    kStale,
    kUnauthorised,
    kInvalid,
    kFuture,
    kAttrsUnauthorised,
    kCredChecks,
    kCredMismatches,
    kHits,
    kMisses,
    kGetattrApplied,
    kGetattrStale,
    kLayoutcommits,
    kMdsSetattrs,
    kRetries,
    kInPlace,
    kThroughAnchor,
    kAllocFailures,
    kNumCounters
};

} // namespace

struct AttrCache::Counters : StripedCounters<kNumCounters> {
    std::atomic<std::int64_t> files{0};
    std::atomic<std::uint64_t> generation{0}; // snapshots made and removals, in order
};

std::uint64_t AttrCache::next_generation() noexcept {
    return counters_->generation.fetch_add(1, std::memory_order_relaxed) + 1;
}

// Points the anchor at `snapshot` (nullptr: at nothing), unless it already follows a later
// publication of the file. Called inside the read section in which the caller found the
// anchor in a snapshot, before the snapshot it replaces is retired: so an anchor never
// holds a retired snapshot, and its memory is still valid (the FSAL frees an anchor a grace
// period after detach()).
void AttrCache::follow(CacheAnchor* anchor, const void* snapshot,
                       std::uint64_t generation) noexcept {
    if (anchor == nullptr) {
        return;
    }
    while (anchor->lock_.test_and_set(std::memory_order_acquire)) {
        caa_cpu_relax();
    }
    if (generation > anchor->generation_) {
        anchor->generation_ = generation;
        anchor->current_.store(snapshot, std::memory_order_release);
    }
    anchor->lock_.clear(std::memory_order_release);
}

// ---------------------------------------------------------------------------------------
// Drafts: a writable copy of a snapshot the writer holds. The scratch vector is per thread
// and reused, so an update allocates at most the snapshot it publishes.

struct AttrCache::Draft {
    std::optional<Record> barrier;
    std::vector<Record>& files;
    CacheAnchor* anchor = nullptr;

    Draft(const Snapshot* s, std::vector<Record>& scratch) : files(scratch) {
        files.clear();
        if (s) {
            anchor = s->pub.anchor;
            if (const Record* b = s->barrier()) {
                barrier = *b;
            }
            const auto f = s->files();
            files.assign(f.begin(), f.end());
        }
    }
    const Record* barrier_record() const { return barrier ? &*barrier : nullptr; }
    Record* find(DataFileSlot slot) {
        for (Record& r : files) {
            if (r.slot == slot) {
                return &r;
            }
        }
        return nullptr;
    }
    void insert(const Record& r) {
        auto at = std::find_if(files.begin(), files.end(),
                               [&](const Record& x) { return r.slot < x.slot; });
        files.insert(at, r);
    }
    // Whether the draft has s's shape (the same records and anchor), so that it can be
    // written into s in place.
    bool fits(const Snapshot& s) const {
        if (anchor != s.pub.anchor || barrier.has_value() != (s.has_barrier != 0) ||
            files.size() != s.count) {
            return false;
        }
        const auto held = s.files();
        return std::equal(files.begin(), files.end(), held.begin(),
                          [](const Record& a, const Record& b) { return a.slot == b.slot; });
    }
    void write_into(Snapshot& s) const {
        Record* out = s.base();
        if (barrier) {
            std::memcpy(static_cast<void*>(out++), &*barrier, sizeof(Record));
        }
        std::memcpy(static_cast<void*>(out), files.data(), files.size() * sizeof(Record));
    }
};

enum class AttrCache::Published : std::uint8_t { Yes, Unchanged, OutOfMemory };

namespace {
std::vector<Record>& thread_scratch() {
    thread_local std::vector<Record> scratch;
    return scratch;
}
} // namespace

// Take the file's snapshot, copy it into a draft, let edit() change it (it returns whether
// anything changed), then write the draft back into the snapshot when it has the same
// shape, or publish it as a new snapshot in its place. A snapshot that left the table
// before the writer took it is looked up again, so edit() must start from the draft
// every time. With the file's anchor, the first try takes the snapshot the anchor names,
// without the table: a snapshot a writer can take is the file's current one, since one
// that left the table never has its word released. Only the in-place case is done that
// way; a new snapshot needs the table's position.
template <class Edit>
AttrCache::Published AttrCache::publish(FileId file, Edit&& edit, const CacheAnchor* anchor) {
    std::vector<Record>& scratch = thread_scratch();
    for (bool via_anchor = anchor != nullptr;; via_anchor = false) {
        ReadSection rs;
        snapshot_table::Position at{file, 0, {}, nullptr};
        if (via_anchor) {
            // Read in the section: the anchor gives up a snapshot before it is retired.
            at.current = static_cast<Snapshot*>(
                const_cast<void*>(anchor->current_.load(std::memory_order_acquire)));
            if (at.current == nullptr || at.current->file != file ||
                !snapshot_table::lock_for_write(at.current)) {
                continue;
            }
        } else {
            at = snapshot_table::locate(table_, file);
            if (at.current != nullptr && !snapshot_table::lock_for_write(at.current)) {
                counters_->add(kRetries);
                continue;
            }
        }
        Draft draft(at.current, scratch);
        if (!edit(draft)) {
            if (at.current != nullptr) {
                snapshot_table::unlock_after_write(at.current, false);
            }
            return Published::Unchanged; // edit() reported its outcomes
        }
        if (at.current != nullptr && draft.fits(*at.current)) {
            draft.write_into(*at.current);
            snapshot_table::unlock_after_write(at.current, true);
            counters_->add(kInPlace);
            if (via_anchor) {
                counters_->add(kThroughAnchor);
            }
            return Published::Yes;
        }
        if (via_anchor) { // nothing written: a new snapshot goes through the table
            snapshot_table::unlock_after_write(at.current, false);
            continue;
        }
        // Once published, `fresh` may be replaced and retired by another writer at once,
        // and call_rcu writes over its pub: the anchor and generation are read from here.
        const std::uint64_t generation = next_generation();
        Snapshot* fresh =
            make_snapshot(file, draft.barrier_record(), {draft.files.data(), draft.files.size()},
                          draft.anchor, generation);
        if (fresh == nullptr) {
            if (at.current != nullptr) {
                snapshot_table::unlock_after_write(at.current, false);
            }
            counters_->add(kAllocFailures);
            return Published::OutOfMemory;
        }
        if (at.current == nullptr) {
            if (snapshot_table::add(table_, at, fresh)) {
                counters_->files.fetch_add(1, std::memory_order_relaxed);
                follow(draft.anchor, fresh, generation);
                return Published::Yes;
            }
            // Another writer added the file's first snapshot meanwhile: edit that one.
        } else if (snapshot_table::replace(table_, at, fresh)) {
            follow(draft.anchor, fresh, generation);
            // at.current is ours to retire (and stays locked): its pub is intact.
            if (at.current->pub.anchor != draft.anchor) { // detached, or another's
                follow(at.current->pub.anchor, nullptr, generation);
            }
            rs.unlock();
            retire(at.current);
            return Published::Yes;
        } else {
            snapshot_table::unlock_after_write(at.current, false);
        }
        discard(fresh); // never published
        counters_->add(kRetries);
    }
}

// The file's snapshot read through read(), consistently (read_consistent), inside the
// caller's read section: nullopt when the file has none.
template <class Read>
auto read_file(cds_lfht* table, FileId file, Read&& read)
    -> std::optional<std::invoke_result_t<Read&, const Snapshot&>> {
    for (;;) {
        const Snapshot* s = snapshot_table::find(table, file);
        if (s == nullptr) {
            return std::nullopt;
        }
        if (auto r = snapshot_table::read_consistent(*s, read)) {
            return r;
        }
        // It left the table while we read: its successor is there.
    }
}

// ---------------------------------------------------------------------------------------
// AttrCache

AttrCache::AttrCache(std::size_t expected_files) : counters_(std::make_unique<Counters>()) {
    table_ = snapshot_table::create(expected_files); // after counters_: a throw leaks nothing
}

AttrCache::~AttrCache() {
    snapshot_table::destroy(table_);
}

void AttrCache::wait_for_reclaim() {
    wait_for_retired_snapshots();
}

WccResult AttrCache::apply_wcc(FileId file, Iomode iomode, std::span<const WccReport> reports,
                               std::span<Outcome> per_entry, std::int64_t now_ns,
                               const ReportLimits& limits) {
    return apply_wcc_at(nullptr, file, iomode, reports, per_entry, now_ns, limits);
}

WccResult AttrCache::apply_wcc(const CacheAnchor& anchor, FileId file, Iomode iomode,
                               std::span<const WccReport> reports, std::span<Outcome> per_entry,
                               std::int64_t now_ns, const ReportLimits& limits) {
    return apply_wcc_at(&anchor, file, iomode, reports, per_entry, now_ns, limits);
}

WccResult AttrCache::apply_wcc_at(const CacheAnchor* anchor, FileId file, Iomode iomode,
                                  std::span<const WccReport> reports, std::span<Outcome> per_entry,
                                  std::int64_t now_ns, const ReportLimits& limits) {
    const ApplyRules rules = client_report_rules(iomode, limits);
    const bool want_outcomes = per_entry.size() == reports.size();
    WccResult res;
    auto edit = [&](Draft& d) {
        res = WccResult{};
        bool changed = false;
        for (std::size_t i = 0; i < reports.size(); ++i) {
            const WccReport& rep = reports[i];
            Outcome o;
            std::uint32_t dropped = 0;
            if (!rep.slot) {
                o = Outcome::IgnoredUnmatched;
            } else if (!valid_slot(*rep.slot) || !rep.attrs.has(kAttrCtime)) {
                o = Outcome::IgnoredInvalid;
            } else {
                Record* rec = d.find(*rep.slot);
                Record fresh{};
                fresh.slot = *rep.slot;
                const Record before = rec ? *rec : fresh;
                o = apply_to_record(rec ? *rec : fresh, d.barrier.has_value(), rep.attrs, rules,
                                    now_ns, dropped);
                const bool applied = o == Outcome::Applied || o == Outcome::AppliedPartly;
                if (applied && rec == nullptr) {
                    d.insert(fresh);
                }
                if (applied && (rec == nullptr || !same_but_learned(before, *rec))) {
                    res.changed++;
                }
                changed |= applied;
            }
            count_outcome(res, o, dropped);
            if (want_outcomes) {
                per_entry[i] = o;
            }
        }
        return changed;
    };
    if (publish(file, edit, anchor) == Published::OutOfMemory) {
        res = WccResult{};
        res.out_of_memory = true;
        if (want_outcomes) {
            std::fill(per_entry.begin(), per_entry.end(), Outcome::OutOfMemory);
        }
    }
    Counters& c = *counters_;
    c.add(kOps);
    c.add(kApplied, res.applied);
    c.add(kStale, res.ignored_stale);
    c.add(kUnauthorised, res.ignored_unauthorised);
    c.add(kUnmatched, res.ignored_unmatched);
    c.add(kInvalid, res.ignored_invalid);
    c.add(kFuture, res.ignored_future);
    c.add(kAttrsUnauthorised, res.attrs_unauthorised);
    return res;
}

Outcome AttrCache::apply_ds_getattr(const DataFileKey& key, const DsAttrs& attrs,
                                    std::int64_t issued_ns, std::int64_t now_ns) {
    if (!valid_slot(key.slot) || !attrs.has(kAttrCtime)) {
        return Outcome::IgnoredInvalid;
    }
    Outcome result = Outcome::IgnoredInvalid;
    auto edit = [&](Draft& d) {
        const ApplyRules rules = ds_getattr_rules(d.barrier_record(), issued_ns);
        Record* rec = d.find(key.slot);
        Record fresh{};
        fresh.slot = key.slot;
        std::uint32_t dropped = 0;
        result = apply_to_record(rec ? *rec : fresh, d.barrier.has_value(), attrs, rules, now_ns,
                                 dropped);
        const bool applied = result == Outcome::Applied;
        if (applied && rec == nullptr) {
            d.insert(fresh);
        }
        return applied;
    };
    if (publish(key.file, edit) == Published::OutOfMemory) {
        return Outcome::OutOfMemory;
    }
    counters_->add(result == Outcome::Applied ? kGetattrApplied : kGetattrStale);
    return result;
}

Outcome AttrCache::record_layoutcommit(FileId file, std::optional<std::uint64_t> new_size,
                                       std::optional<NfsTime> mtime, std::int64_t now_ns) {
    auto edit = [&](Draft& d) {
        d.barrier = apply_layoutcommit(d.barrier_record(), d.files, new_size, mtime, now_ns);
        return true;
    };
    if (publish(file, edit) == Published::OutOfMemory) {
        return Outcome::OutOfMemory;
    }
    counters_->add(kLayoutcommits);
    return Outcome::Applied;
}

Outcome AttrCache::record_mds_setattr_size(FileId file, std::uint64_t size,
                                           std::optional<NfsTime> mtime,
                                           std::span<const TruncatedDataFile> truncated,
                                           std::int64_t now_ns) {
    for (const TruncatedDataFile& t : truncated) {
        if (!valid_slot(t.slot)) {
            return Outcome::IgnoredInvalid;
        }
    }
    auto edit = [&](Draft& d) {
        d.barrier = apply_setattr_size(d.files, size, mtime, now_ns);
        for (const TruncatedDataFile& t : truncated) {
            Record* rec = d.find(t.slot);
            if (rec == nullptr) {
                d.insert(unordered_record(t.slot));
                rec = d.find(t.slot);
            }
            if (t.post_op) {
                apply_truncate_post_op(*rec, *t.post_op, now_ns);
            }
        }
        return true;
    };
    if (publish(file, edit) == Published::OutOfMemory) {
        return Outcome::OutOfMemory;
    }
    counters_->add(kMdsSetattrs);
    return Outcome::Applied;
}

std::optional<DataFileAttrs> AttrCache::lookup(const DataFileKey& key) const {
    std::optional<DataFileAttrs> found;
    {
        ReadSection rs;
        found = read_file(table_, key.file, [&](const Snapshot& s) -> std::optional<DataFileAttrs> {
                    if (const Record* r = s.find(key.slot)) {
                        return data_file_attrs(key.file, *r);
                    }
                    return std::nullopt;
                }).value_or(std::nullopt); // no file, or no such data file: a miss
    }
    counters_->add(found ? kHits : kMisses);
    return found;
}

namespace {
MergedAttrs merge_snapshot(const Snapshot& s) {
    return merge_records(s.barrier(), s.files());
}
} // namespace

std::optional<MergedAttrs> AttrCache::merged(FileId file) const {
    std::optional<MergedAttrs> m;
    {
        ReadSection rs;
        m = read_file(table_, file, merge_snapshot);
    }
    counters_->add(m ? kHits : kMisses);
    return m;
}

std::optional<MergedAttrs> AttrCache::merged(const CacheAnchor& anchor, FileId file) const {
    {
        ReadSection rs;
        const auto* s =
            static_cast<const Snapshot*>(anchor.current_.load(std::memory_order_acquire));
        // A snapshot already replaced in the table (its writer has not moved the anchor
        // on yet) is not read: a caller that saw its successor through the table must not
        // see it go back. Its word stays odd (read_consistent: nullopt).
        if (s != nullptr && s->file == file) {
            if (std::optional<MergedAttrs> m =
                    snapshot_table::read_consistent(*s, merge_snapshot)) {
                rs.unlock();
                counters_->add(kHits);
                return m;
            }
        }
    }
    return merged(file); // not attached (yet, or any more): the table
}

void AttrCache::attach(FileId file, CacheAnchor& anchor) {
    const Published p = publish(file, [&](Draft& d) {
        if (d.anchor == &anchor && anchor.attached()) {
            return false;
        }
        d.anchor = &anchor;
        return true;
    });
    (void)p; // out of memory: the anchor stays empty and reads go through the table
}

void AttrCache::detach(FileId file, CacheAnchor& anchor) {
    const Published p = publish(file, [&](Draft& d) {
        if (d.anchor != &anchor) {
            return false;
        }
        d.anchor = nullptr;
        return true;
    });
    if (p == Published::OutOfMemory) {
        forget(file); // no snapshot may go on naming the anchor
    }
    // Unchanged: no snapshot names the anchor (forget() or a later attach() took it off,
    // and emptied it then).
}

std::vector<DataFileAttrs> AttrCache::data_files(FileId file) const {
    ReadSection rs;
    std::optional<std::vector<DataFileAttrs>> out = read_file(table_, file, [&](const Snapshot& s) {
        std::vector<DataFileAttrs> files;
        files.reserve(s.count);
        for (const Record& r : s.files()) {
            files.push_back(data_file_attrs(file, r));
        }
        return files;
    });
    return out ? std::move(*out) : std::vector<DataFileAttrs>{};
}

CredCheck AttrCache::check_credentials(const DataFileKey& key, const FencingCreds& expected) const {
    CredCheck c = CredCheck::Unknown;
    {
        ReadSection rs;
        c = read_file(table_, key.file, [&](const Snapshot& s) {
                const Record* r = s.find(key.slot);
                return r ? compare_credentials(r->attrs, expected) : CredCheck::Unknown;
            }).value_or(CredCheck::Unknown);
    }
    counters_->add(kCredChecks);
    if (c == CredCheck::Mismatch) {
        counters_->add(kCredMismatches);
    }
    return c;
}

CredCheck AttrCache::check_reported_credentials(const DsAttrs& reported,
                                                const FencingCreds& expected) const {
    const CredCheck c = compare_credentials(reported, expected);
    counters_->add(kCredChecks);
    if (c == CredCheck::Mismatch) {
        counters_->add(kCredMismatches);
    }
    return c;
}

void AttrCache::forget(FileId file) {
    for (;;) {
        ReadSection rs;
        Snapshot* s = snapshot_table::find(table_, file);
        if (s == nullptr) {
            return;
        }
        if (!snapshot_table::lock_for_write(s)) {
            continue; // replaced meanwhile: forget its successor
        }
        if (snapshot_table::remove(table_, s)) {
            counters_->files.fetch_sub(1, std::memory_order_relaxed);
            follow(s->pub.anchor, nullptr, next_generation());
            rs.unlock();
            retire(s);
            return;
        }
        snapshot_table::unlock_after_write(s, false);
    }
}

std::size_t AttrCache::files() const {
    return static_cast<std::size_t>(
        std::max<std::int64_t>(counters_->files.load(std::memory_order_relaxed), 0));
}

CacheStats AttrCache::stats() const {
    const Counters& c = *counters_;
    CacheStats s;
    s.ops = c.sum(kOps);
    s.entries_applied = c.sum(kApplied);
    s.entries_ignored_unmatched = c.sum(kUnmatched);
    s.entries_ignored_stale = c.sum(kStale);
    s.entries_ignored_unauthorised = c.sum(kUnauthorised);
    s.entries_ignored_invalid = c.sum(kInvalid);
    s.entries_ignored_future = c.sum(kFuture);
    s.attrs_unauthorised = c.sum(kAttrsUnauthorised);
    s.credential_checks = c.sum(kCredChecks);
    s.credential_mismatches = c.sum(kCredMismatches);
    s.hits = c.sum(kHits);
    s.misses = c.sum(kMisses);
    s.ds_getattr_applied = c.sum(kGetattrApplied);
    s.ds_getattr_stale = c.sum(kGetattrStale);
    s.layoutcommits = c.sum(kLayoutcommits);
    s.mds_setattrs = c.sum(kMdsSetattrs);
    s.publish_retries = c.sum(kRetries);
    s.updates_in_place = c.sum(kInPlace);
    s.updates_through_anchor = c.sum(kThroughAnchor);
    s.alloc_failures = c.sum(kAllocFailures);
    s.files = files();
    s.snapshots_retired = snapshots_retired();
    s.snapshots_freed = snapshots_freed();
    return s;
}

} // namespace flexfiles::wcc
