// SPDX-License-Identifier: LGPL-3.0-or-later
//
// A regular file's data files: placed when it is created (or first needed), removed when
// its last link goes (see fsal_data_path.hpp).
#include "cache/ds_attrs.hpp"
#include "data_path/data_path.hpp"
#include "export.hpp"
#include "handle.hpp"
#include "mds/placement_at_create.hpp"
#include "model/naming.hpp"

#include <cinttypes>
#include <string>

namespace flexfiles::mds {
namespace {

using Counters = DataPathCounters;

// "file \"name\" (fileid 1234)" or "file fileid 1234".
std::string file_label(const char* name, std::uint64_t file_id) {
    std::string out = "file ";
    if (name != nullptr)
        out += "\"" + std::string(name) + "\" (fileid " + std::to_string(file_id) + ")";
    else
        out += "fileid " + std::to_string(file_id);
    return out;
}

PlacementSettings placement_settings(const config::ExportConfig& cfg) {
    PlacementSettings s;
    s.mirrors = cfg.mirrors;
    s.stripe_unit = cfg.stripe_unit;
    s.fencing_uid_min = cfg.fencing_uids.min;
    s.fencing_uid_max = cfg.fencing_uids.max;
    s.fencing_gid_min = cfg.fencing_gids.min;
    s.fencing_gid_max = cfg.fencing_gids.max;
    s.timeout = cfg.ds_io_timeout;
    return s;
}

// Queues data files a failed create leaves behind, and drops its intents.
void abandon(Export& exp, Handle& handle, const std::vector<PendingRemoval>& leftovers,
             const std::string& who) {
    if (auto st = exp.store().abandon_create(handle.key, leftovers); !st.ok()) {
        Counters::add(exp.counters().store_errors);
        LogCrit(COMPONENT_FSAL, "%s: %s: %s", exp.label().c_str(), who.c_str(), st.error.c_str());
        return;
    }
    if (leftovers.empty())
        return;
    Counters::add(exp.counters().removals_queued, leftovers.size());
    for (const PendingRemoval& r : leftovers)
        LogWarn(COMPONENT_FSAL,
                "%s: %s: data file %s on data server %" PRIu64 " queued for removal (%s)",
                exp.label().c_str(), who.c_str(), r.name.c_str(), r.ds_id, r.last_error.c_str());
    exp.reaper().kick();
}

} // namespace

fsal_status_t place_data_files(Export& exp, Handle& handle, const char* name) noexcept {
    try {
        const config::ExportConfig& cfg = exp.config();
        const std::string who = file_label(name, handle.fileid);
        PlacementSettings settings = placement_settings(cfg);
        settings.identity = exp.store().identity();

        auto plan = plan_placement(exp.fleet(), settings, handle.fileid, FSAL_ID_EXPERIMENTAL);
        if (!plan.ok()) {
            Counters::add(exp.counters().placement_failures);
            LogWarn(COMPONENT_FSAL,
                    "%s: cannot create %s: %s (Mirrors = %u, %zu data server(s) configured)",
                    exp.label().c_str(), who.c_str(), plan.status.message.c_str(), cfg.mirrors,
                    cfg.data_servers.size());
            return to_fsal_status(plan.status);
        }

        // Names derive from the fileid, which the namespace reuses: take them from the
        // reaper first, so it cannot remove the data files about to be made.
        Reaper::Claim claim =
            exp.reaper().claim(plan.value.names(), fleet::deadline_in(3 * cfg.ds_io_timeout));
        if (!claim) {
            Counters::add(exp.counters().placement_failures);
            LogWarn(COMPONENT_FSAL,
                    "%s: cannot create %s: the reaper is still removing a former data file of "
                    "the same name",
                    exp.label().c_str(), who.c_str());
            return fsalstat(ERR_FSAL_DELAY, 0);
        }
        // A name that exists on a data server is replaced only if the store records it as
        // this export's leftover (placement_at_create.hpp); those queued removals go.
        auto ours = take_over_leftovers(exp.store(), plan.value.planned());
        if (!ours.ok()) {
            Counters::add(exp.counters().store_errors);
            LogCrit(COMPONENT_FSAL, "%s: cannot create %s: %s", exp.label().c_str(), who.c_str(),
                    ours.status.error.c_str());
            return fsalstat(ERR_FSAL_SERVERFAULT, 0);
        }
        plan.value.replaceable = ours.value;
        for (std::size_t m = 0; m < plan.value.files.size() && m < ours.value.size(); ++m)
            if (ours.value[m])
                LogEvent(COMPONENT_FSAL,
                         "%s: %s reuses the name %s on data server %" PRIu64
                         ": its queued removal is replaced by the new data file",
                         exp.label().c_str(), who.c_str(), plan.value.files[m].name.c_str(),
                         plan.value.files[m].ds_id);

        if (auto st =
                exp.store().record_create_intent(handle.key, handle.fileid, plan.value.planned());
            !st.ok()) {
            Counters::add(exp.counters().store_errors);
            LogCrit(COMPONENT_FSAL, "%s: cannot create %s: %s", exp.label().c_str(), who.c_str(),
                    st.error.c_str());
            return fsalstat(ERR_FSAL_SERVERFAULT, 0);
        }

        const std::int64_t issued = wcc::monotonic_now_ns();
        PlacementResult made = create_data_files(plan.value, settings);
        if (made.replaced_leftovers > 0)
            LogEvent(COMPONENT_FSAL, "%s: %s: replaced %u leftover data file(s) of the same name",
                     exp.label().c_str(), who.c_str(), made.replaced_leftovers);
        for (const auto& [ds_id, dname] : made.collisions) {
            Counters::add(exp.counters().name_collisions);
            LogCrit(COMPONENT_FSAL,
                    "%s: %s: data file %s already exists on data server %" PRIu64
                    " and this export's layout store (identity %s) has no record of making it: "
                    "left alone, create refused (another MDS or export with the same identity, "
                    "a layout store restored from an older copy, or a file put there by hand?)",
                    exp.label().c_str(), who.c_str(), dname.c_str(), ds_id,
                    fleet::identity_hex(exp.store().identity()).c_str());
        }
        if (!made.status.ok()) {
            Counters::add(exp.counters().placement_failures);
            LogWarn(COMPONENT_FSAL, "%s: cannot create %s: %s", exp.label().c_str(), who.c_str(),
                    made.status.message.c_str());
            abandon(exp, handle, made.leftovers, "failed create of " + who);
            return to_fsal_status(made.status);
        }

        auto map = std::make_shared<const DataFileMap>(std::move(made.map));
        // A new file's RW layout usually follows at once (Linux asks for it in the OPEN's
        // compound): its mark goes with the map, one transaction for both.
        layout::RwGrantMarks* marks = exp.layouts().rw_marks.get();
        StoreStatus st;
        const auto commit = [&](const std::vector<ObjectKey>& drops) {
            st = exp.store().put(handle.key, *map, marks != nullptr, drops,
                                 map_in_namespace(exp) ? host_handle_of(exp, handle.sub)
                                                       : std::vector<std::uint8_t>{});
            return st.ok();
        };
        if (marks != nullptr ? !marks->with_create(handle.key, commit) : !commit({})) {
            Counters::add(exp.counters().store_errors);
            Counters::add(exp.counters().placement_failures);
            LogCrit(COMPONENT_FSAL, "%s: cannot create %s: %s", exp.label().c_str(), who.c_str(),
                    st.error.c_str());
            std::vector<PendingRemoval> all;
            for (const DataFile& df : map->files)
                all.push_back(removal_of(df, map->file_id, "its map could not be stored"));
            abandon(exp, handle, all, "failed create of " + who);
            return fsalstat(ERR_FSAL_SERVERFAULT, 0);
        }
        if (map_in_namespace(exp)) {
            std::string error;
            const fsal_status_t published = publish_map(exp, handle.sub, *map, true, error);
            if (published.major == ERR_FSAL_EXIST) {
                // Another MDS of the namespace placed the file first: its map is the
                // file's, and load_map queues the data files just made for removal.
                auto theirs = load_map(exp, handle.sub, handle.key);
                if (!theirs.ok() || !theirs.value) {
                    LogCrit(COMPONENT_FSAL, "%s: cannot create %s: %s", exp.label().c_str(),
                            who.c_str(),
                            theirs.ok() ? "its map vanished from the namespace"
                                        : theirs.status.error.c_str());
                    return fsalstat(ERR_FSAL_DELAY, 0);
                }
                handle.set_data_files(std::make_shared<const DataFileMap>(*theirs.value));
                return fsalstat(ERR_FSAL_NO_ERROR, 0);
            }
            if (FSAL_IS_ERROR(published)) {
                // Not published, so not placed: no other MDS would find these data files.
                Counters::add(exp.counters().placement_failures);
                LogCrit(COMPONENT_FSAL, "%s: cannot create %s: %s", exp.label().c_str(),
                        who.c_str(), error.c_str());
                if (auto removed = exp.store().remove_file(handle.key); !removed.ok())
                    LogCrit(COMPONENT_FSAL, "%s: %s: %s", exp.label().c_str(), who.c_str(),
                            removed.status.error.c_str());
                exp.reaper().kick();
                return fsalstat(ERR_FSAL_SERVERFAULT, 0);
            }
        }
        for (std::size_t m = 0; m < map->files.size() && m < made.attrs.size(); ++m)
            if (made.attrs[m])
                exp.cache().apply_ds_getattr(cache_key(*map, map->files[m]),
                                             to_cache_attrs(*made.attrs[m]), issued);
        handle.set_data_files(map);
        Counters::add(exp.counters().files_placed);
        Counters::add(exp.counters().data_files_created, map->files.size());
        if (isDebug(COMPONENT_FSAL)) {
            std::string where;
            for (const DataFile& df : map->files)
                where += " " + df.name + "@ds" + std::to_string(df.ds_id);
            LogDebug(COMPONENT_FSAL, "%s: %s placed:%s", exp.label().c_str(), who.c_str(),
                     where.c_str());
        }
        return fsalstat(ERR_FSAL_NO_ERROR, 0);
    } catch (const std::exception& e) {
        LogCrit(COMPONENT_FSAL, "%s: placing the data files of fileid %" PRIu64 ": %s",
                exp.label().c_str(), handle.fileid, e.what());
        return fsalstat(ERR_FSAL_SERVERFAULT, 0);
    }
}

fsal_status_t ensure_data_files(Export& exp, Handle& handle,
                                std::shared_ptr<const DataFileMap>* out) noexcept {
    if ((*out = handle.data_files()) != nullptr)
        return fsalstat(ERR_FSAL_NO_ERROR, 0);
    std::lock_guard lk(handle.placement_mu);
    if ((*out = handle.data_files()) != nullptr) // placed while we waited
        return fsalstat(ERR_FSAL_NO_ERROR, 0);
    fsal_status_t st = place_data_files(exp, handle, nullptr);
    if (!FSAL_IS_ERROR(st))
        *out = handle.data_files();
    return st;
}

bool last_link_gone(Export& exp, fsal_obj_handle* sub) noexcept {
    fsal_attrlist attrs;
    fsal_prepare_attrs(&attrs, ATTR_NUMLINKS | ATTR_TYPE);
    const fsal_status_t st = sub_call(&exp, [&] { return sub->obj_ops->getattrs(sub, &attrs); });
    const std::uint32_t links = attrs.numlinks;
    fsal_release_attrs(&attrs);
    if (st.major == ERR_FSAL_STALE || st.major == ERR_FSAL_NOENT)
        return true;
    if (FSAL_IS_ERROR(st)) {
        LogWarn(COMPONENT_FSAL,
                "%s: fileid %" PRIu64 ": cannot tell whether its last link is gone (%s); its "
                "data files are kept",
                exp.label().c_str(), sub->fileid, msg_fsal_err(st.major));
        return false;
    }
    return links == 0;
}

void remove_data_files(Export& exp, const ObjectKey& key, std::uint64_t file_id, Handle* handle,
                       const char* name) noexcept {
    try {
        const std::string who = file_label(name, file_id);
        auto removed = exp.store().remove_file(key);
        if (!removed.ok()) {
            Counters::add(exp.counters().store_errors);
            LogCrit(COMPONENT_FSAL,
                    "%s: %s: its last link is gone but its data files could not be queued for "
                    "removal: %s",
                    exp.label().c_str(), who.c_str(), removed.status.error.c_str());
            return;
        }
        exp.cache().forget(file_id);
        exp.stale_mirrors().forget(file_id);
        exp.layouts().grants.forget_unseen(file_id,
                                           handle != nullptr ? &handle->writes_unseen : nullptr);
        if (handle != nullptr)
            handle->set_data_files(nullptr);
        if (!removed.value.map)
            return; // no data files (never written, or placed by nobody)
        Counters::add(exp.counters().files_removed);
        Counters::add(exp.counters().removals_queued, removed.value.queued.size());

        // Try now the ones whose data server is Up; the reaper takes the others (and any
        // that fail now) without making the client wait for a server that is away.
        std::vector<PendingRemoval> now;
        for (const PendingRemoval& r : removed.value.queued) {
            auto ds = exp.fleet().find(r.ds_id);
            if (ds && ds->health() == fleet::Health::up) {
                now.push_back(r);
            } else {
                LogWarn(COMPONENT_FSAL,
                        "%s: %s removed; data file %s on data server %" PRIu64
                        " is left to the reaper (the data server is %s)",
                        exp.label().c_str(), who.c_str(), r.name.c_str(), r.ds_id,
                        ds ? std::string(fleet::to_string(ds->health())).c_str()
                           : "not configured");
            }
        }
        for (const RemovalAttempt& a : exp.reaper().remove_now(now))
            if (a.outcome == RemovalOutcome::failed || a.outcome == RemovalOutcome::skipped)
                LogWarn(COMPONENT_FSAL,
                        "%s: %s removed; data file %s on data server %" PRIu64
                        " not removed yet (%s): queued for the reaper",
                        exp.label().c_str(), who.c_str(), a.removal.name.c_str(), a.removal.ds_id,
                        a.outcome == RemovalOutcome::skipped ? "a create holds its name"
                                                             : a.error.c_str());
        if (now.size() < removed.value.queued.size())
            exp.reaper().kick();
    } catch (const std::exception& e) {
        LogCrit(COMPONENT_FSAL, "%s: removing the data files of fileid %" PRIu64 ": %s",
                exp.label().c_str(), file_id, e.what());
    }
}

} // namespace flexfiles::mds
