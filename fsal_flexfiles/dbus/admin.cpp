// SPDX-License-Identifier: LGPL-3.0-or-later
#include "dbus/admin.hpp"

#include "data_path/data_path.hpp"
#include "export.hpp"
#include "ganesha/sal_shim.h"
#include "methods.hpp"
#include "model/ds_block.hpp"
#include "pnfs/device_notify.hpp"
#include "pnfs/layout_ops.hpp"

#include <cctype>
#include <chrono>
#include <thread>

namespace flexfiles::mgmt {
namespace {

using namespace std::chrono_literals;

// How long AddDataServer waits for the new data server's first probe, so that its answer
// can say whether it is Up (placement uses it from then on either way).
constexpr auto kAddWait = 3s;

std::string ds_name(std::uint64_t id) {
    return "data server " + std::to_string(id);
}

// "up", "suspect", "down": the interface's spelling, whatever the logs use.
std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

std::int64_t wall_ms(std::chrono::system_clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

// Another FLEXFILES export of this server that uses `ds.id` for another data server:
// GETDEVICEINFO resolves Ids across exports (pnfs/device_info.cpp), so one Id must mean
// one data server everywhere.
struct IdClash {
    const Export* self = nullptr;
    config::DataServer ds;
    std::string other; // the clashing export's label
};

bool find_id_clash(fsal_export* exp_hdl, void* arg) {
    auto* clash = static_cast<IdClash*>(arg);
    const Export* exp = Export::of(exp_hdl);
    if (exp == clash->self)
        return false;
    const auto existing = exp->runtime().data_servers.find(clash->ds.id);
    if (!existing ||
        (existing->address == clash->ds.address && existing->nfs_port == clash->ds.nfs_port &&
         existing->export_path == clash->ds.export_path))
        return false;
    clash->other = exp->label();
    return true;
}

} // namespace

Result list_data_servers(Export& exp, std::vector<DataServerRow>& rows) {
    const auto usage = exp.store().usage_by_data_server();
    if (!usage.ok())
        return Result::refused(usage.status.error);
    for (const auto& ds : exp.fleet().servers()) {
        DataServerRow r;
        r.id = ds->id();
        if (const auto block = exp.runtime().data_servers.find(ds->id())) {
            r.address = block->address;
            r.nfs_port = block->nfs_port;
            r.mnt_port = block->mnt_port;
            r.export_path = block->export_path;
            r.rsize = block->rsize;
            r.wsize = block->wsize;
        } else {
            r.address = ds->config().host;
            r.nfs_port = ds->config().nfs_port;
            r.mnt_port = ds->config().mount_port;
            r.export_path = ds->config().export_path;
        }
        r.state = lower(fleet::to_string(ds->health()));
        r.drained = ds->drained();
        r.connection = lower(fleet::to_string(ds->conn_state()));
        r.deviceid = fleet::deviceid_hex(ds->deviceid());
        if (auto it = usage.value.find(ds->id()); it != usage.value.end()) {
            r.data_files = it->second.data_files;
            r.stale_data_files = it->second.stale_data_files;
            r.creates_pending = it->second.creates_pending;
            r.removals_pending = it->second.removals_pending;
        }
        const fleet::DsCounters c = ds->counters();
        r.requests = c.requests;
        r.errors = c.errors;
        r.timeouts = c.timeouts;
        r.reported_errors = c.reported_errors;
        r.probes = c.probes;
        r.probe_failures = c.probe_failures;
        r.connects = c.connects;
        r.connect_failures = c.connect_failures;
        r.in_flight = c.in_flight;
        r.direct_writes = c.direct_writes;
        r.direct_spun = c.direct_spun;
        r.direct_reads = c.direct_reads;
        r.direct_connections = c.direct_connections;
        if (c.last_probe)
            r.last_probe_ms = wall_ms(*c.last_probe);
        r.last_probe_ok = c.last_probe_ok;
        r.last_probe_rtt_us = static_cast<std::uint64_t>(c.last_probe_rtt.count());
        rows.push_back(std::move(r));
    }
    return Result::ok(std::to_string(rows.size()) + " data server(s)");
}

Counters stats(Export& exp) {
    Counters out;
    auto add = [&out](std::string name, std::uint64_t v) { out.emplace_back(std::move(name), v); };

    // This export's LAYOUT_WCC / GETATTR overlay / fallback counters (cache/wcc_counters.hpp).
    const wcc::WccStats w = exp.wcc_counters().snapshot();
    add("wcc.layout_wcc_ops", w.ops);
    add("wcc.ops_badxdr", w.ops_badxdr);
    add("wcc.ops_inval", w.ops_inval);
    add("wcc.ops_untrusted", w.ops_untrusted);
    add("wcc.ops_no_authority", w.ops_no_authority);
    add("wcc.ops_no_data_files", w.ops_no_data_files);
    add("wcc.ops_fenced", w.ops_fenced);
    add("wcc.entries_applied", w.entries_applied);
    add("wcc.entries_empty", w.entries_empty);
    add("wcc.entries_ignored_unmatched", w.entries_ignored_unmatched);
    add("wcc.entries_ignored_stale", w.entries_ignored_stale);
    add("wcc.entries_ignored_unauthorised", w.entries_ignored_unauthorised);
    add("wcc.entries_ignored_invalid", w.entries_ignored_invalid);
    add("wcc.entries_ignored_future_ctime", w.entries_ignored_future_ctime);
    add("wcc.entries_ignored_stale_mirror", w.entries_ignored_stale_mirror);
    add("wcc.entries_untrusted", w.entries_untrusted);
    add("wcc.attrs_unauthorised", w.attrs_unauthorised);
    add("wcc.credential_mismatches", w.credential_mismatches);
    add("wcc.credential_repairs_sent", w.credential_repairs_sent);
    add("wcc.credential_repairs_coalesced", w.credential_repairs_coalesced);
    add("wcc.credential_repairs_done", w.credential_repairs_done);
    add("wcc.credential_repairs_failed", w.credential_repairs_failed);
    add("wcc.owners_unknown", w.owners_unknown);
    add("wcc.owner_lookups", w.owner_lookups);
    add("wcc.getattr_overlays", w.overlay_calls);
    add("wcc.getattr_from_cache", w.overlay_cached);
    add("wcc.getattr_fetched", w.overlay_fetched);
    add("wcc.getattr_no_data", w.overlay_no_data);
    add("wcc.fallback_getattrs_sent", w.fallback_sent);
    add("wcc.fallback_getattrs_coalesced", w.fallback_coalesced);
    add("wcc.fallback_getattrs_timed_out", w.fallback_timed_out);
    add("wcc.fallback_getattrs_failed", w.fallback_failed);
    add("wcc.fallback_getattrs_applied", w.fallback_applied);

    // This export's attribute cache (core/cache/attr_cache.hpp).
    const wcc::CacheStats c = exp.cache().stats();
    add("cache.hits", c.hits);
    add("cache.misses", c.misses);
    add("cache.files", c.files);
    add("cache.wcc_ops", c.ops);
    add("cache.entries_applied", c.entries_applied);
    add("cache.entries_ignored_unmatched", c.entries_ignored_unmatched);
    add("cache.entries_ignored_stale", c.entries_ignored_stale);
    add("cache.entries_ignored_unauthorised", c.entries_ignored_unauthorised);
    add("cache.entries_ignored_invalid", c.entries_ignored_invalid);
    add("cache.entries_ignored_future", c.entries_ignored_future);
    add("cache.credential_checks", c.credential_checks);
    add("cache.credential_mismatches", c.credential_mismatches);
    add("cache.ds_getattr_applied", c.ds_getattr_applied);
    add("cache.ds_getattr_stale", c.ds_getattr_stale);
    add("cache.layoutcommits", c.layoutcommits);
    add("cache.mds_setattrs", c.mds_setattrs);
    add("cache.updates_in_place", c.updates_in_place);
    add("cache.updates_through_anchor", c.updates_through_anchor);

    // The data path (core/mds/counters.hpp).
    const mds::DataPathCounters& d = exp.counters();
    using D = mds::DataPathCounters;
    add("data_path.files_placed", D::get(d.files_placed));
    add("data_path.placement_failures", D::get(d.placement_failures));
    add("data_path.data_files_created", D::get(d.data_files_created));
    add("data_path.files_removed", D::get(d.files_removed));
    add("data_path.removals_queued", D::get(d.removals_queued));
    add("data_path.store_errors", D::get(d.store_errors));
    add("data_path.name_collisions", D::get(d.name_collisions));
    add("data_path.proxy_reads", D::get(d.proxy_reads));
    add("data_path.proxy_read_fallbacks", D::get(d.proxy_read_fallbacks));
    add("data_path.proxy_read_errors", D::get(d.proxy_read_errors));
    add("data_path.proxy_writes", D::get(d.proxy_writes));
    add("data_path.proxy_write_errors", D::get(d.proxy_write_errors));
    add("data_path.proxy_writes_direct", D::get(d.proxy_writes_direct));
    add("data_path.proxy_writes_timed", D::get(d.proxy_writes_timed));
    add("data_path.proxy_write_queue_ns", D::get(d.proxy_write_queue_ns));
    add("data_path.proxy_write_data_server_ns", D::get(d.proxy_write_data_server_ns));
    add("data_path.proxy_write_wake_ns", D::get(d.proxy_write_wake_ns));
    add("data_path.proxy_write_total_ns", D::get(d.proxy_write_total_ns));
    add("data_path.proxy_bytes_read", D::get(d.proxy_bytes_read));
    add("data_path.proxy_bytes_written", D::get(d.proxy_bytes_written));
    add("data_path.proxy_commits", D::get(d.proxy_commits));
    add("data_path.proxy_commit_errors", D::get(d.proxy_commit_errors));
    add("data_path.truncates", D::get(d.truncates));
    add("data_path.truncate_errors", D::get(d.truncate_errors));
    add("data_path.degraded_writes", D::get(d.degraded_writes));
    add("data_path.mirrors_marked_stale", D::get(d.mirrors_marked_stale));
    add("data_path.stale_mirror_errors", D::get(d.stale_mirror_errors));

    const mds::ReaperCounters r = exp.reaper().counters();
    add("reaper.attempts", r.attempts);
    add("reaper.removed", r.removed);
    add("reaper.already_gone", r.already_gone);
    add("reaper.superseded", r.superseded);
    add("reaper.failures", r.failures);
    add("reaper.retried_ok", r.retried_ok);
    add("reaper.store_errors", r.store_errors);
    add("reaper.not_ours", r.not_ours);

    const mds::ResilverCounters rs = exp.resilverer().counters();
    add("resilver.stale_mirrors", exp.stale_mirrors().count());
    add("resilver.attempts", rs.attempts);
    add("resilver.resilvered", rs.resilvered);
    add("resilver.restarts", rs.restarts);
    add("resilver.failures", rs.failures);
    add("resilver.bytes_copied", rs.bytes_copied);
    add("resilver.recalls", rs.recalls);

    if (exp.fence_retry_) {
        const mds::FenceRetryCounters f = exp.fence_retrier().counters();
        add("fence_retry.pending", exp.fence_retrier().pending());
        add("fence_retry.queued", f.queued);
        add("fence_retry.attempts", f.attempts);
        add("fence_retry.failures", f.failures);
        add("fence_retry.completed", f.completed);
        add("fence_retry.superseded", f.superseded);
    }

    for (const auto& [name, value] : layout::layout_counters(exp))
        add(std::string("layout.") + name, value);

    if (const auto files = exp.store().file_count(); files.ok())
        add("store.files", files.value);
    if (const auto pending = exp.store().pending_removal_count(); pending.ok())
        add("store.removals_pending", pending.value);
    return out;
}

PolicyValues policy(const Export& exp) {
    const Policy& p = exp.runtime().policy;
    return PolicyValues{p.trust_wcc(), static_cast<std::uint32_t>(p.wcc_max_age().count()),
                        static_cast<std::uint32_t>(p.ds_getattr_deadline().count())};
}

Result set_policy(Export& exp, const PolicyValues& v) {
    // The configuration file's ranges (config::validate), checked the same way.
    config::ExportConfig candidate = exp.settings;
    candidate.trust_wcc = v.trust_wcc;
    candidate.wcc_max_age = std::chrono::milliseconds(v.wcc_max_age_ms);
    candidate.ds_getattr_deadline = std::chrono::milliseconds(v.ds_getattr_deadline_ms);
    std::string problems;
    for (const std::string& p : config::validate(candidate))
        if (p.starts_with("WCC_Max_Age") || p.starts_with("DS_Getattr_Deadline"))
            problems += (problems.empty() ? "" : "; ") + p;
    if (!problems.empty())
        return Result::invalid(problems);
    exp.runtime().policy.set(v.trust_wcc, candidate.wcc_max_age, candidate.ds_getattr_deadline);
    std::string msg = "Trust_WCC = " + std::string(v.trust_wcc ? "true" : "false") +
                      ", WCC_Max_Age = " + std::to_string(v.wcc_max_age_ms) +
                      " ms, DS_Getattr_Deadline = " + std::to_string(v.ds_getattr_deadline_ms) +
                      " ms";
    LogEvent(COMPONENT_FSAL, "%s: policy set over dbus: %s", exp.label().c_str(), msg.c_str());
    return Result::ok(msg);
}

Result set_drained(Export& exp, std::uint64_t ds_id, bool drained) {
    std::lock_guard lk(exp.runtime().changes);
    auto ds = exp.fleet().find(ds_id);
    if (!ds)
        return Result::invalid("no " + ds_name(ds_id) + " in " + exp.label());
    const bool was = ds->drained();
    ds->set_drained(drained);
    std::string msg = ds_name(ds_id) + (drained ? " drained" : " undrained");
    if (was == drained)
        msg += " (it already was)";
    else
        msg += drained ? ": no new files are placed on it, existing ones stay"
                       : ": new files may be placed on it again";
    LogEvent(COMPONENT_FSAL, "%s: %s (dbus)", exp.label().c_str(), msg.c_str());
    if (was != drained)
        layout::notify_device_drain_changed(exp, ds_id);
    return Result::ok(msg);
}

Result add_data_server(Export& exp, std::string_view block) {
    auto parsed = parse_data_server_block(block);
    if (auto* err = std::get_if<std::string>(&parsed))
        return Result::invalid("Data_Server block: " + *err);
    const config::DataServer& ds = std::get<config::DataServer>(parsed);

    std::lock_guard lk(exp.runtime().changes);
    // The export's rules with the new block last, so its problems name it.
    config::ExportConfig candidate = exp.settings;
    candidate.data_servers = exp.runtime().data_servers.list();
    candidate.data_servers.push_back(ds);
    const std::string where = "Data_Server block " + std::to_string(candidate.data_servers.size());
    std::string problems;
    for (const std::string& p : config::validate(candidate))
        if (p.starts_with(where))
            problems += (problems.empty() ? "" : "; ") + p.substr(p.find(':') + 2);
    if (!problems.empty())
        return Result::invalid("Data_Server block (Id = " + std::to_string(ds.id) +
                               "): " + problems);
    IdClash clash;
    clash.self = &exp;
    clash.ds = ds;
    if (ff_layout_find_export(&the_module, find_id_clash, &clash))
        return Result::invalid("Id = " + std::to_string(ds.id) + " names another data server in " +
                               clash.other + " (device ids are shared by every FLEXFILES export)");

    // GETDEVICEINFO must know it before a layout can name it: the block first, then the
    // client (placement waits for its first good probe anyway).
    exp.runtime().data_servers.add(ds);
    if (const fleet::DsStatus st = mds::start_data_server(exp, ds); !st.ok()) {
        exp.runtime().data_servers.remove(ds.id);
        return Result::invalid("Data_Server block (Id = " + std::to_string(ds.id) +
                               "): " + st.message);
    }
    auto server = exp.fleet().find(ds.id);
    const auto until = std::chrono::steady_clock::now() + kAddWait;
    while (server && server->health() != fleet::Health::up &&
           std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(20ms);
    const std::string health = server ? lower(fleet::to_string(server->health())) : "gone";
    std::string msg = ds_name(ds.id) + " (" + ds.endpoint() + ds.export_path + ") added, " + health;
    if (health != "up")
        msg += ": no new files are placed on it until it is up";
    msg += "; not persisted: add the block to ganesha.conf to keep it";
    LogEvent(COMPONENT_FSAL, "%s: %s (dbus)", exp.label().c_str(), msg.c_str());
    return Result::ok(msg);
}

Result remove_data_server(Export& exp, std::uint64_t ds_id) {
    std::lock_guard lk(exp.runtime().changes);
    auto ds = exp.fleet().find(ds_id);
    if (!ds)
        return Result::invalid("no " + ds_name(ds_id) + " in " + exp.label());
    const std::size_t left = exp.fleet().size() - 1;
    if (left < exp.settings.mirrors)
        return Result::refused(
            "removing " + ds_name(ds_id) + " would leave " + std::to_string(left) +
            " data server(s) for Mirrors = " + std::to_string(exp.settings.mirrors));

    // Drained first, so no create can choose it between the count and the removal (a
    // create records its data files in the store before making them; one that chose this
    // server before the drain shows up in the count as a create in progress).
    const bool was_drained = ds->drained();
    ds->set_drained(true);
    const auto usage = exp.store().usage_by_data_server();
    if (!usage.ok()) {
        ds->set_drained(was_drained);
        return Result::refused(usage.status.error);
    }
    if (auto it = usage.value.find(ds_id); it != usage.value.end() && it->second.total() > 0) {
        ds->set_drained(was_drained);
        const mds::DataServerUsage& u = it->second;
        return Result::refused(
            ds_name(ds_id) + " still holds " + std::to_string(u.data_files) + " data file(s) (" +
            std::to_string(u.creates_pending) + " create(s) in progress, " +
            std::to_string(u.removals_pending) +
            " removal(s) pending): drain it and remove those files first; it stays in the "
            "export");
    }
    if (auto st = exp.fleet().remove(ds_id); !st.ok()) {
        ds->set_drained(was_drained);
        return Result::refused(st.message);
    }
    exp.runtime().data_servers.remove(ds_id);
    exp.proxy().set_io_sizes(ds_id, std::nullopt);
    std::string msg =
        ds_name(ds_id) + " removed; not persisted: remove its block from ganesha.conf too";
    LogEvent(COMPONENT_FSAL, "%s: %s (dbus)", exp.label().c_str(), msg.c_str());
    layout::notify_device_removed(exp, ds_id);
    return Result::ok(msg);
}

Result flush_cache_all(Export& exp) {
    const auto ids = exp.store().file_ids();
    if (!ids.ok())
        return Result::refused(ids.status.error);
    std::uint64_t flushed = 0;
    for (std::uint64_t id : ids.value) {
        if (!exp.cache().data_files(id).empty())
            ++flushed;
        exp.cache().forget(id);
    }
    std::string msg = "flushed the cached data-server attributes of " + std::to_string(flushed) +
                      " file(s) (" + std::to_string(ids.value.size()) + " file(s) in the export)";
    LogEvent(COMPONENT_FSAL, "%s: %s (dbus)", exp.label().c_str(), msg.c_str());
    return Result::ok(msg);
}

Result flush_cache_file(Export& exp, std::uint64_t file_id, const std::string& path) {
    const std::size_t data_files = exp.cache().data_files(file_id).size();
    exp.cache().forget(file_id);
    std::string msg =
        path + " (fileid " + std::to_string(file_id) + "): " +
        (data_files == 0 ? std::string("nothing was cached")
                         : "flushed " + std::to_string(data_files) + " cached data file(s)");
    LogEvent(COMPONENT_FSAL, "%s: %s (dbus)", exp.label().c_str(), msg.c_str());
    return Result::ok(msg);
}

} // namespace flexfiles::mgmt
