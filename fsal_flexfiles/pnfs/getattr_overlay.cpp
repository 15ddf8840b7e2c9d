// SPDX-License-Identifier: LGPL-3.0-or-later
//
// The data attributes of a regular file's GETATTR (pnfs/getattr_overlay.hpp): the namespace
// attributes come from the sub-FSAL, the data files' size, space_used and times from the
// export's attribute cache (core/cache/overlay.hpp has the rules), asking the data servers
// (core/mds/ds_getattr.hpp) when the cache is not fresh enough.
//
// Threading
//   Both run on a worker inside MDCACHE's getattrs (its attr_lock held for write on a
//   refresh). overlay_from_cache is the path of nearly every GETATTR: one RCU read section
//   (the handle's map, the cache's merged view), one load of the handle's writes_unseen
//   flag, no lock, no allocation, striped counters. overlay_data_attrs is the rest. The fallback
//   submits every mirror's GETATTR, then waits at most DS_Getattr_Deadline. Its answers run
//   on the fleet's event threads and touch only the export's cache and counters; the
//   export tears the fleet down before them (export.hpp), so an answer never sees them gone.
#include "pnfs/getattr_overlay.hpp"

#include "cache/ds_attrs.hpp"
#include "cache/overlay.hpp"
#include "cache/rcu_published.hpp"
#include "export.hpp"
#include "fleet/fleet.hpp"
#include "ganesha/sal_shim.h"
#include "handle.hpp"
#include "mds/ds_getattr.hpp"
#include "pnfs/layout_ops.hpp"

#include <algorithm>
#include <cinttypes>
#include <string>
#include <vector>

namespace flexfiles::wcc {

namespace {

// Asks every data file of the map, single-flight per data file, until the deadline.
fallback::FetchSummary fetch_data_attrs(Export& exp, const mds::DataFileMap& map) {
    // Stale mirrors (store/stale_mirrors.hpp) may hold an older size: not asked.
    const std::vector<std::uint32_t> stale = exp.stale_mirrors().of(map.file_id);
    std::vector<fallback::GetattrTarget> targets;
    targets.reserve(map.files.size());
    for (std::size_t i = 0; i < map.files.size(); ++i)
        if (std::find(stale.begin(), stale.end(), map.files[i].mirror) == stale.end())
            targets.push_back(fallback::GetattrTarget{mds::cache_key(map, map.files[i]), i});

    fleet::Fleet& fleet = exp.fleet();
    AttrCache* cache = &exp.cache();
    WccCounters* counters = &exp.wcc_counters();
    const std::string& label = exp.label();
    const auto submit = [&](const fallback::GetattrTarget& t, fleet::Deadline deadline,
                            fleet::Callback<fleet::DsAttrs> done) {
        const mds::DataFile& df = map.files[t.data_file];
        std::shared_ptr<fleet::DataServer> ds = fleet.find(df.ds_id);
        if (!ds || df.fh.empty()) {
            done(fleet::DsResult<fleet::DsAttrs>::failure(fleet::DsStatus::error(
                ds ? fleet::DsErrc::invalid_argument : fleet::DsErrc::not_found,
                label + ": data file " + df.name + ": no data server " + std::to_string(df.ds_id) +
                    " or no filehandle")));
            return;
        }
        ds->getattr(df.fh, deadline,
                    [ds, done = std::move(done)](fleet::DsResult<fleet::DsAttrs> r) {
                        // A data server that did not answer in time is suspect (health.h).
                        if (r.status.code == fleet::DsErrc::timeout)
                            ds->report_error(fleet::ErrorKind::timeout);
                        done(std::move(r));
                    });
    };
    const std::uint64_t file = map.file_id;
    const auto on_answer = [cache, counters, file, label](const fallback::GetattrTarget& t,
                                                          const fleet::DsResult<fleet::DsAttrs>& r,
                                                          std::int64_t issued_ns) {
        if (!r.ok()) {
            counters->add(WccCounters::kFallbackFailed);
            LogInfo(COMPONENT_PNFS,
                    "%s: GETATTR of fileid %" PRIu64
                    " mirror %u on its data server failed (%s): last known attributes served",
                    label.c_str(), file, t.key.slot.mirror, r.status.message.c_str());
            return;
        }
        const Outcome o = cache->apply_ds_getattr(t.key, mds::to_cache_attrs(r.value), issued_ns);
        if (o == Outcome::Applied || o == Outcome::AppliedPartly)
            counters->add(WccCounters::kFallbackApplied);
    };
    const auto deadline = fleet::Clock::now() + exp.runtime().policy.ds_getattr_deadline();
    fallback::FetchSummary sum =
        exp.getattr_flights().fetch(cache, targets, deadline, submit, on_answer);
    counters->add(WccCounters::kFallbackSent, sum.sent);
    counters->add(WccCounters::kFallbackCoalesced, sum.coalesced);
    counters->add(WccCounters::kFallbackTimedOut, sum.timed_out);
    return sum;
}

FileAttrView view_of(const fsal_attrlist& a) {
    FileAttrView v;
    auto t = [](const timespec& ts) {
        return NfsTime::from_parts(ts.tv_sec, static_cast<std::uint32_t>(ts.tv_nsec))
            .value_or(NfsTime{});
    };
    if (a.valid_mask & ATTR_SIZE) {
        v.valid |= kAttrSize;
        v.size = a.filesize;
    }
    if (a.valid_mask & ATTR_SPACEUSED) {
        v.valid |= kAttrSpaceUsed;
        v.space_used = a.spaceused;
    }
    if (a.valid_mask & ATTR_ATIME) {
        v.valid |= kAttrAtime;
        v.atime = t(a.atime);
    }
    if (a.valid_mask & ATTR_MTIME) {
        v.valid |= kAttrMtime;
        v.mtime = t(a.mtime);
    }
    if (a.valid_mask & ATTR_CTIME) {
        v.valid |= kAttrCtime;
        v.ctime = t(a.ctime);
    }
    if (a.valid_mask & ATTR_CHANGE) {
        v.has_change = true;
        v.change = a.change;
    }
    return v;
}

timespec timespec_of(NfsTime t) {
    timespec ts{};
    ts.tv_sec = static_cast<time_t>(t.seconds());
    ts.tv_nsec = static_cast<long>(t.nseconds());
    return ts;
}

void write_back(const FileAttrView& v, std::uint16_t set, fsal_attrlist& a) {
    if (set & kAttrSize) {
        a.filesize = v.size;
        a.valid_mask |= ATTR_SIZE;
    }
    if (set & kAttrSpaceUsed) {
        a.spaceused = v.space_used;
        a.valid_mask |= ATTR_SPACEUSED;
    }
    if (set & kAttrAtime) {
        a.atime = timespec_of(v.atime);
        a.valid_mask |= ATTR_ATIME;
    }
    if (set & kAttrMtime) {
        a.mtime = timespec_of(v.mtime);
        a.valid_mask |= ATTR_MTIME;
    }
    if (set & kAttrCtime) {
        a.ctime = timespec_of(v.ctime);
        a.valid_mask |= ATTR_CTIME;
        if (v.has_change)
            a.change = v.change;
    }
}

// How long MDCACHE may serve this answer without asking again (see pnfs/LAYOUT_WCC.md, "MDCACHE").
// Attr_Expiration_Time = 0 on the export: MDCACHE always asks (our 0 keeps it so). Otherwise
// the shortest time MDCACHE can express that covers WCC_Max_Age (whole seconds, at least
// 1), never more than the export's: a file may get an RW layout at any moment, and MDCACHE
// must come back within about WCC_Max_Age to see what its writers did. Asking again costs a
// namespace getattr and a cache lookup, no data-server traffic unless a writer is at work.
void set_expiry(const Export& exp, fsal_attrlist& a) {
    if (op_ctx == nullptr)
        return;
    const std::int32_t configured = op_ctx->export_perms.expire_time_attr;
    if (configured <= 0)
        return; // 0: always ask (kept by MDCACHE); < 0: the admin chose to trust forever
    const auto ms = exp.runtime().policy.wcc_max_age().count();
    const std::int64_t want = std::max<std::int64_t>(1, (ms + 999) / 1000);
    a.expire_time_attr = static_cast<std::int32_t>(std::min<std::int64_t>(want, configured));
}

// The data attributes of the answer: the merged view overlaid on the namespace's (see
// cache/overlay.hpp), and how long MDCACHE may keep them. Returns the fields it set.
std::uint16_t answer_from(const Export& exp, const MergedAttrs& merged, fsal_attrlist& attrs) {
    set_expiry(exp, attrs);
    FileAttrView view = view_of(attrs);
    const std::uint16_t set = overlay(merged, view);
    write_back(view, set, attrs);
    return set;
}

// MDCACHE's key of the file (the sub-FSAL's handle key), as its up-calls look it up.
gsh_buffdesc mdcache_key(Handle& handle) {
    return gsh_buffdesc{handle.key.data(), handle.key.size()};
}

// Whether the cache's answer will do (cache/overlay.hpp): writes may be unseen under an RW
// layout, or its last one, or while the previous instance's layouts may still write.
FetchReason why_fetch(Export& exp, const Handle& handle, const std::optional<MergedAttrs>& merged) {
    const std::int64_t now = monotonic_now_ns();
    const layout::PreviousInstanceWindow::View previous =
        exp.previous_layouts().at(now, ff_gsh_in_grace);
    // On a namespace several MDSs serve (Map_In_Namespace), another MDS may have granted an
    // RW layout this one never hears of: every file is answered as if under one.
    const bool rw = merged && (previous.open || exp.settings.map_in_namespace ||
                               handle.writes_unseen.load(std::memory_order_acquire));
    const std::int64_t max_age_ns =
        std::chrono::duration_cast<std::chrono::nanoseconds>(exp.runtime().policy.wcc_max_age())
            .count();
    return fetch_reason(merged, rw, max_age_ns, now, previous.relearn_before_ns);
}

void remember_namespace_attrs(Handle& handle, const fsal_attrlist& a) {
    if ((a.valid_mask & (ATTR_CTIME | ATTR_CHANGE)) != (ATTR_CTIME | ATTR_CHANGE))
        return;
    handle.namespace_change.store(a.change, std::memory_order_relaxed);
    handle.namespace_ctime_ns.store(static_cast<std::int64_t>(a.ctime.tv_sec) * 1'000'000'000 +
                                        a.ctime.tv_nsec,
                                    std::memory_order_relaxed);
}

} // namespace

fsal_status_t overlay_data_attrs(Export& exp, Handle& handle, const mds::DataFileMap& map,
                                 fsal_attrlist* attrs) noexcept {
    if (attrs == nullptr || map.files.empty())
        return fsalstat(ERR_FSAL_NO_ERROR, 0);
    remember_namespace_attrs(handle, *attrs);
    try {
        AttrCache& cache = exp.cache();
        std::optional<MergedAttrs> merged = cache.merged(handle.cache_anchor, map.file_id);
        const FetchReason why = why_fetch(exp, handle, merged);
        if (why != FetchReason::None) {
            const auto asked = std::chrono::steady_clock::now();
            const fallback::FetchSummary sum = fetch_data_attrs(exp, map);
            exp.wcc_counters().add(WccCounters::kOverlayFetched);
            if (sum.answered == sum.targets && sum.targets != 0)
                exp.layouts().grants.data_servers_seen(map.file_id, asked, &handle.writes_unseen);
            if (sum.timed_out != 0 || sum.failed != 0)
                LogDebug(COMPONENT_PNFS,
                         "%s: GETATTR of fileid %" PRIu64 " (%s): %u of %u data files answered",
                         exp.label().c_str(), map.file_id, to_string(why), sum.answered,
                         sum.targets);
            merged = cache.merged(handle.cache_anchor, map.file_id);
        } else {
            exp.wcc_counters().add(WccCounters::kOverlayCached);
        }
        if (!merged || merged->data_files == 0) {
            set_expiry(exp, *attrs);
            exp.wcc_counters().add(WccCounters::kOverlayNoData);
            LogDebug(COMPONENT_PNFS,
                     "%s: GETATTR of fileid %" PRIu64
                     ": no data-file attributes known, the metadata file's served",
                     exp.label().c_str(), map.file_id);
            return fsalstat(ERR_FSAL_NO_ERROR, 0);
        }
        const std::uint16_t set = answer_from(exp, *merged, *attrs);
        LogFullDebug(COMPONENT_PNFS,
                     "%s: GETATTR of fileid %" PRIu64 " (%s): data size %" PRIu64
                     ", %u data file(s), fields 0x%x",
                     exp.label().c_str(), map.file_id, to_string(why), merged->attrs.size,
                     merged->data_files, set);
    } catch (const std::exception& e) {
        // Never fail a GETATTR for this: the namespace attributes stand.
        LogCrit(COMPONENT_PNFS, "%s: GETATTR of fileid %" PRIu64 ": %s", exp.label().c_str(),
                handle.fileid, e.what());
    }
    return fsalstat(ERR_FSAL_NO_ERROR, 0);
}

bool overlay_from_cache(Export& exp, Handle& handle, fsal_attrlist* attrs) noexcept {
    if (attrs == nullptr)
        return true; // nothing to fill
    remember_namespace_attrs(handle, *attrs);
    try {
        RcuReadLock section;
        const mds::DataFileMap* map = handle.data_files_in_read_section();
        if (map == nullptr || map->files.empty())
            return false;
        const std::optional<MergedAttrs> merged =
            exp.cache().merged(handle.cache_anchor, map->file_id);
        if (why_fetch(exp, handle, merged) != FetchReason::None || merged->data_files == 0)
            return false;
        exp.wcc_counters().add(WccCounters::kOverlayCached);
        const std::uint16_t set = answer_from(exp, *merged, *attrs);
        LogFullDebug(COMPONENT_PNFS,
                     "%s: GETATTR of fileid %" PRIu64 " (cached): data size %" PRIu64
                     ", %u data file(s), fields 0x%x",
                     exp.label().c_str(), map->file_id, merged->attrs.size, merged->data_files,
                     set);
        return true;
    } catch (const std::exception& e) {
        LogCrit(COMPONENT_PNFS, "%s: GETATTR of fileid %" PRIu64 ": %s", exp.label().c_str(),
                handle.fileid, e.what());
        return false;
    }
}

void push_data_attrs_to_mdcache(Export& exp, Handle& handle, fsal_attrlist* changed) noexcept {
    const fsal_up_vector* up = exp.up_ops;
    if (up == nullptr || handle.key.empty())
        return;
    try {
        const std::int64_t ns_ctime = handle.namespace_ctime_ns.load(std::memory_order_relaxed);
        std::optional<MergedAttrs> merged;
        if (ns_ctime != Handle::kNotSeen)
            merged = exp.cache().merged(handle.cache_anchor, handle.fileid);
        if (merged && merged->data_files != 0) {
            FileAttrView view;
            view.valid = kAttrCtime;
            view.ctime = NfsTime{ns_ctime};
            view.has_change = true;
            view.change = handle.namespace_change.load(std::memory_order_relaxed);
            const std::uint16_t set = overlay(*merged, view);
            fsal_attrlist local{};
            fsal_attrlist& attrs = changed != nullptr ? *changed : local;
            write_back(view, set, attrs);
            if (attrs.valid_mask != 0) {
                if (changed != nullptr)
                    return; // MDCACHE takes them into the entry it holds (patch 0022)
                // mdc_up_update moves the times forward only, sets size, space_used and
                // change (so does MDCACHE with `changed`: the same code).
                gsh_buffdesc key = mdcache_key(handle);
                if (!FSAL_IS_ERROR(up->update(up, &key, &attrs, 0)))
                    return;
            }
        }
    } catch (const std::exception& e) {
        LogCrit(COMPONENT_PNFS, "%s: LAYOUT_WCC fileid %" PRIu64 ": %s", exp.label().c_str(),
                handle.fileid, e.what());
    }
    drop_mdcache_attrs(exp, handle);
}

void drop_mdcache_attrs(Export& exp, Handle& handle) noexcept {
    const fsal_up_vector* up = exp.up_ops;
    if (up == nullptr || handle.key.empty())
        return;
    gsh_buffdesc key = mdcache_key(handle);
    up->invalidate(up, &key, FSAL_UP_INVALIDATE_ATTRS);
}

} // namespace flexfiles::wcc
