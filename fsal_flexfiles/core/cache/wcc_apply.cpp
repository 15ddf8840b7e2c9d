// SPDX-License-Identifier: LGPL-3.0-or-later
#include "cache/wcc_apply.hpp"

#include <algorithm>
#include <array>
#include <memory_resource>
#include <string>

namespace flexfiles::wcc {

bool RepairTracker::try_begin(const DataFileKey& key) {
    std::lock_guard lock(mu_);
    return in_flight_.insert(key).second;
}

void RepairTracker::end(const DataFileKey& key) {
    std::lock_guard lock(mu_);
    in_flight_.erase(key);
}

std::size_t RepairTracker::in_flight() const {
    std::lock_guard lock(mu_);
    return in_flight_.size();
}

namespace {

bool may_repair(Outcome o) {
    // A stale report describes the data file as it was; invalid ones cannot be ordered.
    return o == Outcome::Applied || o == Outcome::AppliedPartly ||
           o == Outcome::IgnoredUnauthorised;
}

} // namespace

ApplyOutcome apply_layout_wcc(AttrCache& cache, const mds::DataFileMap& map,
                              const mds::DataFileMap* layout, std::span<const BodyEntry> entries,
                              const AttrDecoder& decode, LayoutAuthority authority,
                              const ApplyPolicy& policy, RepairTracker& repairs,
                              WccCounters& counters, std::int64_t now_ns) {
    return apply_layout_wcc(cache, map, layout, entries, validate_entries(entries, decode),
                            authority, policy, repairs, counters, now_ns);
}

ApplyOutcome apply_layout_wcc(AttrCache& cache, const mds::DataFileMap& map,
                              const mds::DataFileMap* layout, std::span<const BodyEntry> entries,
                              const Validation& v, LayoutAuthority authority,
                              const ApplyPolicy& policy, RepairTracker& repairs,
                              WccCounters& counters, std::int64_t now_ns) {
    ApplyOutcome out;
    counters.add(WccCounters::kOps);

    if (v.status != BodyStatus::Ok) {
        out.status = v.status;
        out.bad_entry = v.bad_entry;
        const BodyEntry& e = entries[v.bad_entry];
        out.why = "entry " + std::to_string(v.bad_entry) + " (mirror " +
                  std::to_string(e.mirror_pos) + ", data server " + std::to_string(e.ds_pos) +
                  ", device " + fleet::deviceid_hex(e.deviceid) + "): " + v.why;
        counters.add(v.status == BodyStatus::BadXdr ? WccCounters::kOpsBadXdr
                                                    : WccCounters::kOpsInval);
        return out;
    }

    if (!policy.trust_wcc) {
        out.untrusted = true;
        counters.add(WccCounters::kOpsUntrusted);
        counters.add(WccCounters::kEntriesUntrusted, entries.size());
        return out;
    }

    // The per-entry bookkeeping below lives on this frame for bodies of a few mirrors (what
    // clients send); larger ones spill to the heap.
    std::array<std::byte, 2048> scratch_bytes;
    std::pmr::monotonic_buffer_resource scratch(scratch_bytes.data(), scratch_bytes.size());
    Resolution r = resolve_entries(map, entries, v.attrs, layout, &scratch);
    out.empty = r.empty;
    out.unmatched = r.unmatched;
    counters.add(WccCounters::kEntriesEmpty, r.empty);

    if (authority == LayoutAuthority::None) {
        counters.add(WccCounters::kOpsNoAuthority);
        counters.add(WccCounters::kEntriesUnmatched, r.unmatched);
        counters.add(WccCounters::kEntriesUnauthorised, r.reports.size() - r.unmatched);
        return out;
    }

    // Entries naming a mirror that is stale now never reach the cache.
    std::pmr::vector<Outcome> outcome(r.reports.size(), Outcome::IgnoredUnmatched, &scratch);
    std::pmr::vector<WccReport> to_apply(&scratch);
    std::pmr::vector<std::size_t> report_of(&scratch); // to_apply[j] is r.reports[report_of[j]]
    to_apply.reserve(r.reports.size());
    report_of.reserve(r.reports.size());
    for (std::size_t i = 0; i < r.reports.size(); ++i) {
        const std::optional<std::size_t> df = r.data_file_of_report[i];
        if (df && std::find(policy.stale_mirrors.begin(), policy.stale_mirrors.end(),
                            map.files[*df].mirror) != policy.stale_mirrors.end()) {
            out.stale_mirror++;
            continue;
        }
        to_apply.push_back(r.reports[i]);
        report_of.push_back(i);
    }
    counters.add(WccCounters::kEntriesStaleMirror, out.stale_mirror);
    if (!to_apply.empty()) {
        const Iomode io =
            authority == LayoutAuthority::ReadWrite ? Iomode::ReadWrite : Iomode::Read;
        std::pmr::vector<Outcome> applied(to_apply.size(), Outcome::IgnoredUnmatched, &scratch);
        out.cache =
            policy.anchor != nullptr
                ? cache.apply_wcc(*policy.anchor, map.file_id, io, to_apply, applied, now_ns,
                                  policy.limits)
                : cache.apply_wcc(map.file_id, io, to_apply, applied, now_ns, policy.limits);
        for (std::size_t j = 0; j < applied.size(); ++j) {
            outcome[report_of[j]] = applied[j];
        }
    }
    counters.add(WccCounters::kEntriesApplied, out.cache.applied);
    counters.add(WccCounters::kEntriesUnmatched, out.cache.ignored_unmatched);
    counters.add(WccCounters::kEntriesStale, out.cache.ignored_stale);
    counters.add(WccCounters::kEntriesUnauthorised, out.cache.ignored_unauthorised);
    counters.add(WccCounters::kEntriesInvalid, out.cache.ignored_invalid);
    counters.add(WccCounters::kEntriesFutureCtime, out.cache.ignored_future);
    counters.add(WccCounters::kAttrsUnauthorised, out.cache.attrs_unauthorised);
    if (out.cache.out_of_memory) {
        return out; // nothing was stored; credentials are not judged on it either
    }

    for (std::size_t i = 0; i < r.reports.size(); ++i) {
        const WccReport& rep = r.reports[i];
        if (!rep.slot || !r.data_file_of_report[i] || !may_repair(outcome[i]) ||
            !rep.attrs.has(kAttrOwner | kAttrGroup)) {
            continue;
        }
        const std::size_t df_index = *r.data_file_of_report[i];
        const mds::DataFile& df = map.files[df_index];
        const FencingCreds expected{df.fencing_uid, df.fencing_gid, std::nullopt};
        if (cache.check_reported_credentials(rep.attrs, expected) != CredCheck::Mismatch) {
            continue;
        }
        out.credential_mismatches++;
        counters.add(WccCounters::kCredMismatches);
        const DataFileKey key{map.file_id, *rep.slot};
        if (!repairs.try_begin(key)) {
            out.repairs_coalesced++;
            counters.add(WccCounters::kCredRepairsCoalesced);
            continue;
        }
        out.repairs.push_back(CredentialRepair{df_index, key, rep.attrs.uid, rep.attrs.gid,
                                               df.fencing_uid, df.fencing_gid});
    }
    return out;
}

} // namespace flexfiles::wcc
