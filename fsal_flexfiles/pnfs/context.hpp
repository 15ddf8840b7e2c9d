// SPDX-License-Identifier: LGPL-3.0-or-later
//
// The small helpers the pNFS operation files share (the per-export layout state itself is
// the export's: Export::layouts(), core/layout/layout_state.hpp). Internal to pnfs/.
#pragma once

#include "ganesha/ganesha.hpp"
#include "ganesha/sal_shim.h"
#include "layout/layout_state.hpp"
#include "model/data_files.hpp"

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>

namespace flexfiles {
struct Export;
struct Handle;
} // namespace flexfiles

namespace flexfiles::layout {

// The MDS fileid of a handle (the key of grants and of the attribute cache).
inline std::uint64_t file_id_of(const fsal_obj_handle& obj) noexcept {
    return obj.fileid;
}

// clientid4 of the caller, 0 when op_ctx carries none.
std::uint64_t caller_clientid() noexcept;

// Relaxed increment.
inline void bump(std::atomic<std::uint64_t>& c, std::uint64_t n = 1) noexcept {
    c.fetch_add(n, std::memory_order_relaxed);
}

// What a client's layout named (the data files with the fencing ids of its grant).
struct HeldLayout {
    std::uint64_t client = 0;
    mds::DataFileMap files;
    bool read_write = false; // an RW layout: its holder may have written the mirrors
};

struct IoError;

// One device_error4 a client reported (LAYOUTRETURN's ff_ioerr4, LAYOUTERROR): an access
// error is checked against the fencing ids (expected after a fencing, else the data
// file's owner is set back); any other error makes the MDS probe the data server (within
// the client's report budget), and an RW layout's WRITE/COMMIT error marks that mirror
// stale. `layout` may be null when unknown. `op` names the operation in log lines.
void apply_ds_error(Export& exp, Handle& handle, ExportLayouts& state, const HeldLayout* layout,
                    const IoError& err, const char* op);

// LAYOUTGET(RW)'s authority checks (authority.cpp): NFS4_OK, or the status to answer
// (counted and logged by reason).
nfsstat4 check_rw_authority(Export& exp, fsal_obj_handle* obj_hdl, ExportLayouts& state) noexcept;

// Object methods (layoutget.cpp, layoutreturn.cpp, layoutcommit.cpp, layouterror.cpp) and
// the module and export methods (device_info.cpp), installed by layout_ops.cpp.
nfsstat4 layoutget(fsal_obj_handle* obj_hdl, XDR* loc_body, const fsal_layoutget_arg* arg,
                   fsal_layoutget_res* res) noexcept;
nfsstat4 layoutreturn(fsal_obj_handle* obj_hdl, XDR* lrf_body,
                      const fsal_layoutreturn_arg* arg) noexcept;
nfsstat4 layoutcommit(fsal_obj_handle* obj_hdl, XDR* lou_body, const fsal_layoutcommit_arg* arg,
                      fsal_layoutcommit_res* res) noexcept;
#ifdef FSAL_OBJ_OPS_HAS_LAYOUTERROR // Ganesha with the series' LAYOUTERROR patch
nfsstat4 layouterror(fsal_obj_handle* obj_hdl, state_t* layout_state,
                     const fsal_layouterror_arg* arg) noexcept;
#endif

nfsstat4 getdeviceinfo(fsal_module* fsal_hdl, XDR* da_addr_body, const layouttype4 type,
                       const pnfs_deviceid* deviceid) noexcept;
size_t fs_da_addr_size(fsal_module* fsal_hdl) noexcept;
nfsstat4 getdevicelist(fsal_export* exp_hdl, layouttype4 type, void* opaque,
                       bool (*cb)(void* opaque, const uint64_t id),
                       fsal_getdevicelist_res* res) noexcept;
size_t fs_loc_body_size(fsal_export* exp_hdl) noexcept;

} // namespace flexfiles::layout
