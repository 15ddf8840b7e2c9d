// SPDX-License-Identifier: LGPL-3.0-or-later
//
// A FLEXFILES export, the export operations, and the helpers every operation
// uses to call into the sub-FSAL.
#pragma once

#include "cache/attr_cache.hpp"
#include "cache/wcc_apply.hpp"
#include "cache/wcc_counters.hpp"
#include "fleet/fleet.hpp"
#include "ganesha/ganesha.hpp"
#include "layout/layout_state.hpp"
#include "layout/previous_instance.hpp"
#include "mds/counters.hpp"
#include "mds/ds_getattr.hpp"
#include "mds/fence_retry.hpp"
#include "mds/proxy_io.hpp"
#include "mds/reaper.hpp"
#include "mds/resilver.hpp"
#include "model/config.hpp"
#include "model/runtime.hpp"
#include "store/layout_store.hpp"
#include "store/stale_mirrors.hpp"

#include <memory>
#include <string>
#include <utility>

namespace flexfiles {

struct Export : fsal_export {
    explicit Export(config::ExportConfig cfg) : fsal_export{}, settings(std::move(cfg)) {}

    // Fixed for the export's lifetime, so any thread may read it without a
    // lock (update_export refuses to change it).
    const config::ExportConfig settings;
    const config::ExportConfig& config() const noexcept { return settings; }
    // What an administrator changes at run time (model/runtime.hpp): the WCC policy and
    // the data servers' blocks, starting as the configuration said.
    mgmt::Runtime& runtime() noexcept { return runtime_; }
    const mgmt::Runtime& runtime() const noexcept { return runtime_; }

    // The data path (data_path/data_path.hpp): built by create_export before the
    // export serves anything, torn down by release(); in between every
    // accessor is valid and thread-safe.
    fleet::Fleet& fleet() noexcept { return *fleet_; }
    mds::LayoutStore& store() noexcept { return *store_; }
    // One attribute cache per export (cache/attr_cache.hpp).
    wcc::AttrCache& cache() noexcept { return *cache_; }
    mds::Reaper& reaper() noexcept { return *reaper_; }
    mds::ProxyIo& proxy() noexcept { return *proxy_; }
    // What NFSv4 clients get as the write verifier (get_write_verifier): UNSTABLE writes
    // through the MDS stay UNSTABLE on the data servers (mds/write_verifier.hpp).
    mds::ExportWriteVerifier& write_verifier() noexcept { return write_verifier_; }
    // Mirrors that missed a write, and what copies them back (store/stale_mirrors.hpp).
    mds::StaleMirrors& stale_mirrors() noexcept { return *stale_; }
    mds::Resilverer& resilverer() noexcept { return *resilver_; }
    // Fences that failed on a data server, tried again (mds/fence_retry.hpp).
    mds::FenceRetrier& fence_retrier() noexcept { return *fence_retry_; }
    mds::DataPathCounters& counters() noexcept { return counters_; }
    // While layouts of the MDS's previous instance may still write (a restart): GETATTR
    // asks the data servers as under an RW layout (layout/previous_instance.hpp).
    layout::PreviousInstanceWindow& previous_layouts() noexcept { return previous_layouts_; }
    // The layouts this export granted (core/layout/layout_state.hpp).
    layout::ExportLayouts& layouts() noexcept { return layouts_; }
    const layout::ExportLayouts& layouts() const noexcept { return layouts_; }
    // LAYOUT_WCC, GETATTR overlay and fallback counters (core/cache/wcc_counters.hpp).
    wcc::WccCounters& wcc_counters() noexcept { return wcc_counters_; }
    // Credential repairs in flight (one per data file) and the GETATTRs to the data
    // servers in flight (single-flight per data file).
    wcc::RepairTracker& repairs() noexcept { return repairs_; }
    fallback::DsGetattrFlights& getattr_flights() noexcept { return getattr_flights_; }
    // "FLEXFILES export 1 (/export1)", for log lines.
    const std::string& label() const noexcept { return label_; }

    static Export* of(fsal_export* exp) noexcept { return static_cast<Export*>(exp); }

    // Owned here, set up and torn down by data_path/export_data_path.cpp (in this
    // order: store, stale marks, cache, fleet, proxy, reaper, resilverer, fence retries;
    // torn down in
    // reverse).
    // Per-export tables the data path's completions (on the fleet's event threads) reach:
    // declared first so they outlive it even if it were not torn down before the export.
    layout::ExportLayouts layouts_;
    wcc::WccCounters wcc_counters_;
    wcc::RepairTracker repairs_;
    fallback::DsGetattrFlights getattr_flights_;
    std::unique_ptr<mds::LayoutStore> store_;
    std::unique_ptr<mds::StaleMirrors> stale_;
    std::unique_ptr<wcc::AttrCache> cache_;
    std::unique_ptr<fleet::Fleet> fleet_;
    mds::ExportWriteVerifier write_verifier_;
    layout::PreviousInstanceWindow previous_layouts_;
    std::unique_ptr<mds::ProxyIo> proxy_;
    std::unique_ptr<mds::Reaper> reaper_;
    std::unique_ptr<mds::Resilverer> resilver_;
    std::unique_ptr<mds::FenceRetrier> fence_retry_;
    mds::DataPathCounters counters_;
    std::string label_;
    mgmt::Runtime runtime_{settings}; // after settings, which it copies
};

// The FLEXFILES export op_ctx names, or nullptr when op_ctx names none (a
// handle released during shutdown). Every export and object operation is
// entered with op_ctx->fsal_export set to the FLEXFILES export: that is how a
// stacked FSAL finds its export, since object handles do not point to one.
Export* current_export() noexcept;

// Points op_ctx->fsal_export at `target` for the scope of the object and
// restores what it was. Does nothing when op_ctx or target is null.
class ExportSwitch {
public:
    explicit ExportSwitch(fsal_export* target) noexcept;
    ~ExportSwitch();
    ExportSwitch(const ExportSwitch&) = delete;
    ExportSwitch& operator=(const ExportSwitch&) = delete;

private:
    fsal_export* saved_ = nullptr;
    bool switched_ = false;
};

// Runs `call` the way a sub-FSAL expects to be called: with op_ctx naming its
// own export (exp->sub_export). Returns what `call` returns.
template <class Call> decltype(auto) sub_call(Export* exp, Call&& call) {
    ExportSwitch in_sub(exp != nullptr ? exp->sub_export : nullptr);
    return call();
}

} // namespace flexfiles
