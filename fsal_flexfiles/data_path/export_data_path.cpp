// SPDX-License-Identifier: LGPL-3.0-or-later
//
// Building and tearing down an export's data path: layout store, attribute cache, the
// data-server fleet, proxy I/O and the reaper (see fsal_data_path.hpp).
#include "data_path/data_path.hpp"
#include "data_path/namespace_object.hpp"
#include "export.hpp"
#include "ganesha/sal_shim.h"
#include "methods.hpp"
#include "model/naming.hpp"
#include "pnfs/layout_ops.hpp"

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <string>
#include <thread>

namespace flexfiles::mds {
namespace {

using namespace std::chrono_literals;

// How long export creation waits for the data servers' first probes. An unreachable one
// is Down (refused connection) or still connecting after this; either way the export is
// created and placement avoids it until it comes Up.
constexpr auto kStartWait = 3500ms;

// The fleet's and the reaper's log lines, in Ganesha's log under COMPONENT_FSAL. Called
// from the data servers' event threads and the reaper's thread too.
fleet::LogSink ganesha_log_sink(std::string prefix) {
    return [prefix = std::move(prefix)](fleet::LogLevel level, std::string_view msg) {
        const int len = static_cast<int>(std::min<std::size_t>(msg.size(), 4000));
        switch (level) {
        case fleet::LogLevel::debug:
            LogDebug(COMPONENT_FSAL, "%s: %.*s", prefix.c_str(), len, msg.data());
            break;
        case fleet::LogLevel::info:
            LogEvent(COMPONENT_FSAL, "%s: %.*s", prefix.c_str(), len, msg.data());
            break;
        case fleet::LogLevel::warn:
            LogWarn(COMPONENT_FSAL, "%s: %.*s", prefix.c_str(), len, msg.data());
            break;
        case fleet::LogLevel::error:
            LogCrit(COMPONENT_FSAL, "%s: %.*s", prefix.c_str(), len, msg.data());
            break;
        }
    };
}

fleet::DataServerConfig fleet_config(const config::DataServer& ds, const config::ExportConfig& cfg,
                                     const fleet::LogSink& log) {
    fleet::DataServerConfig c;
    c.id = ds.id;
    c.host = ds.address;
    c.export_path = ds.export_path;
    c.nfs_port = ds.nfs_port;
    c.mount_port = ds.mnt_port;
    // The MDS creates, truncates and removes data files as root (data-server exports are
    // No_Root_Squash); clients with layouts use the synthetic fencing credentials.
    c.uid = 0;
    c.gid = 0;
    // Byte 0 of the deviceid: Ganesha routes GETDEVICEINFO to the FSAL registered with
    // this id, which is how the module registered (module.cpp).
    c.fsal_id = FSAL_ID_EXPERIMENTAL;
    c.request_timeout = cfg.ds_io_timeout;
    c.max_io_size = std::max(ds.rsize, ds.wsize);
    c.direct_connections = cfg.ds_direct_connections;
    c.direct_spin = cfg.ds_direct_spin;
    c.log = log;
    return c;
}

void wait_for_fleet(Export& exp) {
    const auto deadline = std::chrono::steady_clock::now() + kStartWait;
    for (;;) {
        const auto servers = exp.fleet().servers();
        const bool all_up = std::all_of(servers.begin(), servers.end(), [](const auto& ds) {
            return ds->health() == fleet::Health::up;
        });
        if (all_up || std::chrono::steady_clock::now() >= deadline)
            break;
        std::this_thread::sleep_for(20ms);
    }
    unsigned up = 0;
    for (const auto& ds : exp.fleet().servers()) {
        const fleet::Health h = ds->health();
        if (h == fleet::Health::up) {
            ++up;
            continue;
        }
        LogWarn(COMPONENT_FSAL,
                "%s: %s is %s (%s) after %lld ms: no new files are placed on it until it is Up",
                exp.label().c_str(), ds->label().c_str(), std::string(fleet::to_string(h)).c_str(),
                std::string(fleet::to_string(ds->conn_state())).c_str(),
                static_cast<long long>(kStartWait.count()));
    }
    LogEvent(COMPONENT_FSAL, "%s: %u of %zu data server(s) Up, Mirrors = %u", exp.label().c_str(),
             up, exp.fleet().size(), exp.config().mirrors);
}

// Data files the store maps to data servers the configuration does not name (one added at
// run time with AddDataServer and not written into ganesha.conf, or a block removed or
// renumbered): their files cannot be read or written. The export still serves the rest;
// each such data server gets one line an administrator cannot miss.
void report_unconfigured_data_servers(Export& exp, const config::ExportConfig& cfg) {
    const auto usage = exp.store().usage_by_data_server();
    if (!usage.ok()) {
        LogCrit(COMPONENT_FSAL, "%s: layout store: %s", exp.label().c_str(),
                usage.status.error.c_str());
        return;
    }
    for (const auto& [ds_id, u] : usage.value) {
        const bool configured =
            std::any_of(cfg.data_servers.begin(), cfg.data_servers.end(),
                        [id = ds_id](const config::DataServer& ds) { return ds.id == id; });
        if (configured || u.total() == 0)
            continue;
        LogCrit(COMPONENT_FSAL,
                "%s: the layout store holds %llu data file(s) (and %llu removal(s) pending) on "
                "data server %llu, which is not configured: files with data there cannot be "
                "read or written until a Data_Server block with Id = %llu is back in the "
                "export (data servers added over dbus last only until a restart)",
                exp.label().c_str(), static_cast<unsigned long long>(u.data_files),
                static_cast<unsigned long long>(u.removals_pending),
                static_cast<unsigned long long>(ds_id), static_cast<unsigned long long>(ds_id));
    }
}

// Two FLEXFILES exports naming the same data-server export (address and export path): safe,
// since their data-file names carry different identities (model/naming.hpp), but the
// administrator should know that they share its space and its failures. Two exports with
// the same identity (a layout store copied from one to the other) are not safe at all.
struct SharedExports {
    Export* self = nullptr;
    int self_id = 0;
};

bool report_shared(fsal_export* exp_hdl, void* arg) {
    auto* shared = static_cast<SharedExports*>(arg);
    Export* other = Export::of(exp_hdl);
    if (other == shared->self || !other->store_)
        return false; // itself, or an export still being created
    Export& self = *shared->self;
    const std::string self_identity = fleet::identity_hex(self.store().identity());
    const std::string other_identity = fleet::identity_hex(other->store().identity());
    for (const config::DataServer& mine : self.config().data_servers)
        for (const config::DataServer& theirs : other->config().data_servers) {
            if (mine.address != theirs.address || mine.export_path != theirs.export_path)
                continue;
            if (self_identity == other_identity)
                LogCrit(COMPONENT_FSAL,
                        "FLEXFILES exports %d and %d both use data-server export %s:%s and their "
                        "layout stores have the same identity %s (one copied from the other?): "
                        "their data files can collide; give one of them a fresh Layout_Store",
                        static_cast<int>(exp_hdl->export_id), shared->self_id, mine.address.c_str(),
                        mine.export_path.c_str(), self_identity.c_str());
            else
                LogWarn(COMPONENT_FSAL,
                        "FLEXFILES exports %d and %d both use data-server export %s:%s "
                        "(Data_Server Id %u in %s, Id %u in %s): their data files are kept apart "
                        "by their identities (%s, %s), but they share its space and its failures",
                        static_cast<int>(exp_hdl->export_id), shared->self_id, mine.address.c_str(),
                        mine.export_path.c_str(), theirs.id, other->label().c_str(), mine.id,
                        self.label().c_str(), other_identity.c_str(), self_identity.c_str());
        }
    return false; // every other export
}

// The resilverer's view of the other MDSs of a shared namespace (resilver.hpp), through
// the file's host handle on the resilverer's thread. RW layouts of theirs are fenced here
// (the copy waits for the next pass); live write leases are waited out.
OtherWriters other_mds_writers(Export& exp, const StaleMirror& mark) {
    OtherWriters out;
    const auto host = exp.store().host_handle(mark.key);
    if (!host.ok() || host.value.empty()) {
        out.why = host.ok() ? "waiting: this MDS does not know the file's namespace object"
                            : host.status.error;
        return out;
    }
    const bool ran = in_export_context(exp, [&] {
        NamespaceWriters w = namespace_writers_by_handle(exp, host.value);
        if (!w.reached) {
            out.why = "cannot read the other MDSs' marks (" + w.error + ")";
            return;
        }
        if (!w.rw_marks.empty()) {
            layout::fence_other_mds_layouts(exp, mark.key, host.value, w.rw_marks);
            out.why = "fenced the RW layouts other MDSs had out; copying at the next pass";
            return;
        }
        if (w.live_leases > 0) {
            out.why = "waiting for writes through other MDSs (" + std::to_string(w.live_leases) +
                      " live write lease(s))";
            return;
        }
        out.quiet = true;
        out.state = std::move(w.state);
    });
    if (!ran)
        out.why = "the export is going away";
    return out;
}

// A mirror in sync again: its mark leaves the namespace object.
void clear_namespace_stale_mark(Export& exp, const StaleMirror& mark) {
    const auto host = exp.store().host_handle(mark.key);
    std::string error = host.ok() ? "no host handle recorded" : host.status.error;
    bool cleared = false;
    if (host.ok() && !host.value.empty())
        in_export_context(exp, [&] {
            cleared = clear_stale_mark_by_handle(exp, host.value, mark.mirror, error);
        });
    if (!cleared)
        LogWarn(COMPONENT_FSAL,
                "%s: fileid %" PRIu64 ": mirror %u is in sync, but its stale mark stays on the "
                "namespace object (%s): other MDSs leave it out of their layouts until this "
                "MDS marks and resilvers it again",
                exp.label().c_str(), mark.file_id, mark.mirror, error.c_str());
}

} // namespace

fsal_status_t open_data_path(Export& exp, int export_id) noexcept {
    try {
        exp.label_ =
            "FLEXFILES export " + std::to_string(export_id) + " (" + ff_gsh_ctx_export_path() + ")";
        const config::ExportConfig& cfg = exp.config();

        const std::string path = config::layout_store_path(cfg, export_id, ff_gsh_recovery_root());
        auto opened = LayoutStore::open(path);
        if (!opened.ok()) {
            LogCrit(COMPONENT_FSAL, "%s: %s; export refused (Layout_Store)", exp.label().c_str(),
                    opened.status.error.c_str());
            return fsalstat(ERR_FSAL_SERVERFAULT, 0);
        }
        exp.store_ = std::move(opened.value);
        if (auto r = exp.store().recover_interrupted_creates(); !r.ok()) {
            LogCrit(COMPONENT_FSAL, "%s: %s; export refused", exp.label().c_str(),
                    r.status.error.c_str());
            close_data_path(exp);
            return fsalstat(ERR_FSAL_SERVERFAULT, 0);
        } else if (r.value > 0) {
            LogEvent(COMPONENT_FSAL,
                     "%s: %llu data file(s) of creates interrupted by a restart queued for "
                     "removal",
                     exp.label().c_str(), static_cast<unsigned long long>(r.value));
        }
        const auto files = exp.store().file_count();
        const auto pending = exp.store().pending_removal_count();
        LogEvent(COMPONENT_FSAL,
                 "%s: layout store %s: identity %s, %llu file(s), %llu data-file removal(s) "
                 "pending",
                 exp.label().c_str(), path.c_str(),
                 fleet::identity_hex(exp.store().identity()).c_str(),
                 static_cast<unsigned long long>(files.value),
                 static_cast<unsigned long long>(pending.value));
        const unsigned lease_s = ff_gsh_lease_lifetime();
        exp.previous_layouts_.start(files.value > 0, wcc::monotonic_now_ns(),
                                    static_cast<std::int64_t>(lease_s) * 1'000'000'000);
        if (files.value > 0)
            LogEvent(COMPONENT_FSAL,
                     "%s: clients of the previous instance may still write through its "
                     "layouts: GETATTR asks the data servers as under an RW layout until the "
                     "grace period is over and %u s (one lease) have passed",
                     exp.label().c_str(), lease_s);
        report_unconfigured_data_servers(exp, cfg);
        SharedExports shared{&exp, export_id};
        ff_layout_find_export(&the_module, report_shared, &shared);

        exp.stale_ = std::make_unique<StaleMirrors>(
            exp.store(),
            [&exp](const ObjectKey& key, std::uint64_t file_id, std::uint64_t reporter) {
                layout::recall_layouts(exp, key, file_id, reporter);
            });
        if (auto st = exp.stale_->load(); !st.ok()) {
            LogCrit(COMPONENT_FSAL, "%s: %s; export refused", exp.label().c_str(),
                    st.error.c_str());
            close_data_path(exp);
            return fsalstat(ERR_FSAL_SERVERFAULT, 0);
        }
        if (const std::size_t n = exp.stale_->count(); n > 0)
            LogWarn(COMPONENT_FSAL,
                    "%s: %zu mirror(s) missed writes before the restart and are stale: they "
                    "are not read from until resilvered",
                    exp.label().c_str(), n);

        exp.cache_ = std::make_unique<wcc::AttrCache>();

        exp.fleet_ = std::make_unique<fleet::Fleet>();
        const fleet::LogSink log = ganesha_log_sink(exp.label());
        std::map<std::uint64_t, IoSizes> sizes;
        for (const config::DataServer& ds : cfg.data_servers) {
            if (auto st = exp.fleet().add(fleet_config(ds, cfg, log)); !st.ok()) {
                LogCrit(COMPONENT_FSAL, "%s: Data_Server Id = %u (%s): %s; export refused",
                        exp.label().c_str(), ds.id, ds.endpoint().c_str(), st.message.c_str());
                close_data_path(exp);
                return fsalstat(ERR_FSAL_INVAL, EINVAL);
            }
            sizes[ds.id] = IoSizes{ds.rsize, ds.wsize};
        }
        wait_for_fleet(exp);

        exp.proxy_ = std::make_unique<ProxyIo>(exp.fleet(), exp.cache_.get(), exp.counters(),
                                               std::move(sizes), cfg.ds_io_timeout,
                                               exp.stale_.get(), log, &exp.write_verifier_);

        ReaperSettings reaper;
        reaper.request_timeout = cfg.ds_io_timeout;
        reaper.shared_namespace = cfg.map_in_namespace;
        exp.reaper_ = std::make_unique<Reaper>(exp.store(), exp.fleet(), reaper, log);
        exp.reaper().start();

        ResilverHooks hooks;
        hooks.rw_layout_outstanding = [&exp](std::uint64_t file_id) {
            return layout::rw_layout_outstanding(exp, file_id);
        };
        // On the resilverer's thread: the recall needs the export as op_ctx's.
        hooks.recall_rw_layouts = [&exp](const StaleMirror& mark) {
            in_export_context(
                exp, [&] { layout::recall_rw_layouts_for_resilver(exp, mark.key, mark.file_id); });
        };
        hooks.chunk_size = [&exp](std::uint64_t source, std::uint64_t target) {
            return std::min(exp.proxy().rsize(source), exp.proxy().wsize(target));
        };
        ResilverSettings resilver;
        resilver.request_timeout = cfg.ds_io_timeout;
        resilver.recall_after = cfg.resilver_recall_after;
        if (cfg.map_in_namespace) {
            resilver.close_stale_to_reads = true;
            hooks.other_writers = [&exp](const StaleMirror& mark) {
                return other_mds_writers(exp, mark);
            };
            hooks.cleared = [&exp](const StaleMirror& mark) {
                clear_namespace_stale_mark(exp, mark);
            };
        }
        exp.resilver_ = std::make_unique<Resilverer>(exp.store(), *exp.stale_, exp.fleet(),
                                                     std::move(hooks), resilver, log);
        exp.resilverer().start();

        FenceRetrySettings fence_retry;
        fence_retry.request_timeout = cfg.ds_io_timeout;
        exp.fence_retry_ = std::make_unique<FenceRetrier>(exp.fleet(), fence_retry, log);
        exp.fence_retrier().start();
        layout::fence_previous_rw_layouts(exp);
        exp.layouts().rw_marks = std::make_unique<layout::RwGrantMarks>(
            [&exp](const std::vector<layout::RwGrantMarks::Mark>& add,
                   const std::vector<ObjectKey>& drop, std::string& error) {
                std::vector<RwGrantMark> marks;
                marks.reserve(add.size());
                for (const auto& m : add)
                    marks.push_back(RwGrantMark{m.key, m.file_id, m.handle});
                const StoreStatus st = exp.store().update_rw_grants(marks, drop);
                error = st.error;
                return st.ok();
            });
        return fsalstat(ERR_FSAL_NO_ERROR, 0);
    } catch (const std::exception& e) {
        LogCrit(COMPONENT_FSAL, "%s: cannot start the data path: %s; export refused",
                exp.label().c_str(), e.what());
        close_data_path(exp);
        return fsalstat(ERR_FSAL_SERVERFAULT, 0);
    }
}

fleet::DsStatus start_data_server(Export& exp, const config::DataServer& ds) noexcept {
    try {
        // Sizes first: the fleet may place a file on it as soon as it is Up.
        exp.proxy().set_io_sizes(ds.id, IoSizes{ds.rsize, ds.wsize});
        fleet::DsStatus st =
            exp.fleet().add(fleet_config(ds, exp.config(), ganesha_log_sink(exp.label())));
        if (!st.ok())
            exp.proxy().set_io_sizes(ds.id, std::nullopt);
        return st;
    } catch (const std::exception& e) {
        return fleet::DsStatus::error(fleet::DsErrc::invalid_argument, e.what());
    }
}

void close_data_path(Export& exp) noexcept {
    // The reaper uses the store and the fleet; proxy I/O callbacks use the cache until the
    // fleet has completed every request (Fleet's destructor stops each data server).
    if (exp.fence_retry_)
        exp.fence_retry_->stop();
    exp.fence_retry_.reset();
    if (exp.resilver_)
        exp.resilver_->stop();
    exp.resilver_.reset();
    if (exp.reaper_)
        exp.reaper_->stop();
    exp.reaper_.reset();
    exp.proxy_.reset();
    exp.fleet_.reset();
    exp.cache_.reset();
    exp.stale_.reset();
    if (auto& marks = exp.layouts().rw_marks) {
        std::string error;
        if (!marks->flush(error))
            LogWarn(COMPONENT_FSAL, "%s: %s: the next start fences files it need not",
                    exp.label().c_str(), error.c_str());
        marks.reset();
    }
    exp.store_.reset();
}

} // namespace flexfiles::mds
