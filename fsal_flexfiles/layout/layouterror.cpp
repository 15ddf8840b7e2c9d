// SPDX-License-Identifier: LGPL-3.0-or-later
//
// LAYOUTERROR (RFC 7862 section 15.6; RFC 8435 section 9.1.1 for what flex-files clients
// report). Ganesha 4.3 decodes the operation wrongly and never tells the FSAL; with the
// core patch that fixes both (FSAL_OBJ_OPS_HAS_LAYOUTERROR), each device_error4 is handled
// like an ff_ioerr4 entry of LAYOUTRETURN (layoutreturn.cpp, apply_ds_error), matched
// against the data files the client's layout stateid was granted. Without the patch this
// file compiles to nothing and LAYOUTERROR is only logged by Ganesha.
#include "export.hpp"
#include "handle.hpp"
#include "layout/context.hpp"
#include "layout/ff_xdr.hpp"
#include "layout/layout_ops.hpp"

#ifdef FSAL_OBJ_OPS_HAS_LAYOUTERROR

#include <cstring>

namespace flexfiles::layout {

nfsstat4 layouterror(fsal_obj_handle* obj_hdl, state_t* layout_state,
                     const fsal_layouterror_arg* arg) noexcept {
    Export* exp = current_export();
    if (exp == nullptr)
        return NFS4_OK;
    if (arg->type != LAYOUT4_FLEX_FILES)
        return NFS4ERR_UNKNOWN_LAYOUTTYPE;
    try {
        auto state = layouts_of(*exp);
        std::optional<HeldLayout> held;
        if (auto granted = granted_layout(layout_state))
            held = HeldLayout{granted->client, std::move(granted->files)};
        IoError err;
        err.offset = arg->offset;
        err.length = arg->length;
        std::memcpy(err.deviceid.data(), arg->error.de_deviceid, NFS4_DEVICEID4_SIZE);
        err.status = arg->error.de_status;
        err.opnum = arg->error.de_opnum;
        apply_ds_error(*exp, *Handle::of(obj_hdl), state, held ? &*held : nullptr, err,
                       "LAYOUTERROR");
    } catch (const std::bad_alloc&) {
        return NFS4ERR_DELAY;
    } catch (...) {
        return NFS4ERR_SERVERFAULT;
    }
    return NFS4_OK;
}

} // namespace flexfiles::layout

#endif // FSAL_OBJ_OPS_HAS_LAYOUTERROR
