// SPDX-License-Identifier: LGPL-3.0-or-later
//
// Installs the pNFS MDS methods into the module's, the export's and the objects' operation
// tables. The methods themselves are one file each:
// device_info.cpp (GETDEVICEINFO, GETDEVICELIST), layoutget.cpp, layoutreturn.cpp,
// layoutcommit.cpp, layouterror.cpp, fencing.cpp (conflicting opens).
#include "pnfs/layout_ops.hpp"

#include "export.hpp"
#include "nfs4_retry_storm.h" // protocols/include: the core's retry-storm count
#include "pnfs/context.hpp"

#include <algorithm>
#include <limits>

namespace flexfiles::layout {

namespace {

const layouttype4 kFlexFiles = LAYOUT4_FLEX_FILES;

void fs_layouttypes(fsal_export* exp_hdl, int32_t* count, const layouttype4** types) noexcept {
    if (export_grants_layouts(Export::of(exp_hdl))) {
        *count = 1;
        *types = &kFlexFiles;
    } else {
        *count = 0;
        *types = nullptr;
    }
}

// layout_blksize (RFC 8881 section 5.12.1): the stripe unit, the granularity clients
// should align their I/O through layouts to.
uint32_t fs_layout_blocksize(fsal_export* exp_hdl) noexcept {
    const Export* exp = Export::of(exp_hdl);
    if (!export_grants_layouts(exp))
        return 0;
    return static_cast<uint32_t>(
        std::min<uint64_t>(exp->settings.stripe_unit, std::numeric_limits<uint32_t>::max()));
}

// One segment per LAYOUTGET, always the whole file. 0 makes Ganesha answer LAYOUTGET with
// NFS4ERR_LAYOUTUNAVAILABLE (an export without data servers).
uint32_t fs_maximum_segments(fsal_export* exp_hdl) noexcept {
    return export_grants_layouts(Export::of(exp_hdl)) ? 1 : 0;
}

} // namespace

std::uint64_t caller_clientid() noexcept {
    if (op_ctx == nullptr || op_ctx->clientid == nullptr)
        return 0;
    return *op_ctx->clientid;
}

bool rw_layout_outstanding(const Export& exp, std::uint64_t file_id) noexcept {
    try {
        return !exp.layouts().grants.holders(file_id, 0, Iomode::ReadWrite).empty();
    } catch (...) {
        return true; // the careful answer: ask the data servers
    }
}

std::vector<std::pair<const char*, std::uint64_t>> layout_counters(const Export& exp) {
    const ExportLayouts& state = exp.layouts();
    const Counters& c = state.counters;
    auto v = [](const std::atomic<std::uint64_t>& a) { return a.load(std::memory_order_relaxed); };
    return {
        {"layoutgets_read", v(c.layoutgets_read)},
        {"layoutgets_rw", v(c.layoutgets_rw)},
        {"layoutgets_refused", v(c.layoutgets_refused)},
        {"layoutgets_rw_refused_export", v(c.layoutgets_rw_refused_export)},
        {"layoutgets_rw_refused_open", v(c.layoutgets_rw_refused_open)},
        {"layoutgets_rw_refused_access", v(c.layoutgets_rw_refused_access)},
        {"segments_granted_now", state.grants.size()},
        {"files_with_unseen_writes", state.grants.files_unseen()},
        {"segments_returned", v(c.segments_returned)},
        {"segments_unsent", v(c.segments_unsent)},
        {"returns_with_body", v(c.returns_with_body)},
        {"bad_return_bodies", v(c.bad_return_bodies)},
        {"ds_errors_reported", v(c.ds_errors_reported)},
        {"ds_access_errors", v(c.ds_access_errors)},
        {"ds_access_expected", v(c.ds_access_expected)},
        {"ds_owner_repairs", v(c.ds_owner_repairs)},
        {"ds_reports_probed", v(c.ds_reports_probed)},
        {"ds_reports_rate_limited", v(c.ds_reports_rate_limited)},
        {"ds_reports_read_layout_writes", v(c.ds_reports_read_layout_writes)},
        {"ds_reports_unnamed", v(c.ds_reports_unnamed)},
        {"layouterrors", v(c.layouterrors)},
        {"layouterror_unknown_devices", v(c.layouterror_unknown_devices)},
        {"iostats_reports", v(c.iostats_reports)},
        {"read_ops", v(c.read_ops)},
        {"read_bytes", v(c.read_bytes)},
        {"write_ops", v(c.write_ops)},
        {"write_bytes", v(c.write_bytes)},
        {"layoutcommits", v(c.layoutcommits)},
        {"layoutcommit_sizes", v(c.layoutcommit_sizes)},
        {"getdeviceinfos", v(c.getdeviceinfos)},
        {"fencings", v(c.fencings)},
        {"fenced_data_files", v(c.fenced_data_files)},
        {"fence_failures", v(c.fence_failures)},
        {"revoke_fencings", v(c.revoke_fencings)},
        {"fence_stale_marks", v(c.fence_stale_marks)},
        {"fence_failures_in_sync", v(c.fence_failures_in_sync)},
        {"recalls_sent", v(c.recalls_sent)},
        {"recalls_not_found", v(c.recalls_not_found)},
        {"recalls_failed", v(c.recalls_failed)},
        // Server-wide, not per export: seconds in which one client failed one operation
        // the same way 500 times (protocols/nfs4_retry_storm.c).
        {"client_retry_storms", nfs4_retry_storms()},
    };
}

bool export_grants_layouts(const Export* exp) noexcept {
    return exp != nullptr && !exp->settings.data_servers.empty();
}

void init_layout_module_ops(fsal_ops& ops) noexcept {
    ops.getdeviceinfo = getdeviceinfo;
    ops.fs_da_addr_size = fs_da_addr_size;
}

void init_layout_export_ops(export_ops& ops) noexcept {
    ops.getdevicelist = getdevicelist;
    ops.fs_layouttypes = fs_layouttypes;
    ops.fs_layout_blocksize = fs_layout_blocksize;
    ops.fs_maximum_segments = fs_maximum_segments;
    ops.fs_loc_body_size = fs_loc_body_size;
}

void init_layout_obj_ops(fsal_obj_ops& ops) noexcept {
    ops.layoutget = layoutget;
    ops.layoutreturn = layoutreturn;
    ops.layoutcommit = layoutcommit;
#ifdef FSAL_OBJ_OPS_HAS_LAYOUTERROR
    ops.layouterror = layouterror;
#endif
}

} // namespace flexfiles::layout
