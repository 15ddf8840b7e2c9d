// SPDX-License-Identifier: LGPL-3.0-or-later
//
// LAYOUTERROR (RFC 7862 section 15.6; RFC 8435 section 10.1).
//
// A client tells the MDS, without returning its layout, that I/O to a data server failed.
// Ganesha has checked the filehandle and that the stateid is the caller's layout stateid
// of this file, and calls this once per device_error4 with the object's state lock held.
// Each error is handled as LAYOUTRETURN handles an ff_ioerr4 (layoutreturn.cpp's
// apply_ds_error), against the data files the client's layout named:
//   * NFS4ERR_ACCESS / NFS4ERR_PERM: a layout older than the last fencing is expected to
//     get them (counted); a current one means the data file's owner on the data server is
//     wrong, and it is set back to the fencing ids (NFSv3 SETATTR, asynchronous).
//   * anything else (NXIO, IO, DELAY for a timeout, ...): the MDS probes the data server
//     now, within the client's report budget, and the probe decides its health; for an
//     RW layout's WRITE or COMMIT the mirror there is marked stale unless it is the last
//     one in sync (store/stale_mirrors.hpp); a READ layout's are counted and ignored.
// A device that is none of this export's data servers is counted and ignored: the answer
// stays NFS4_OK (the client cannot do better with it, and RFC 7862 gives no error for it).
// Nothing here waits for a data server, so the reply never waits for one either.
#include "export.hpp"
#include "fleet/fleet.hpp"
#include "handle.hpp"
#include "model/enum_bits.hpp"
#include "pnfs/context.hpp"
#include "pnfs/layout_ops.hpp"
#include "pnfs/mds_access.hpp"
#include "pnfs/xdr/ff_xdr.hpp"

#ifdef FSAL_OBJ_OPS_HAS_LAYOUTERROR

namespace flexfiles::layout {

nfsstat4 layouterror(fsal_obj_handle* obj_hdl, state_t* layout_state,
                     const fsal_layouterror_arg* arg) noexcept {
    Handle* handle = Handle::of(obj_hdl);
    Export* exp = current_export();
    if (exp == nullptr)
        exp = handle->exp;
    if (exp == nullptr || arg->type != LAYOUT4_FLEX_FILES)
        return NFS4_OK; // nothing of ours to act on; the core has logged the error

    try {
        ExportLayouts& state = exp->layouts();
        bump(state.counters.layouterrors);
        IoError err;
        err.offset = arg->offset;
        err.length = arg->length;
        err.status = enum_bits(arg->error.de_status);
        err.opnum = enum_bits(arg->error.de_opnum);
        const auto dev =
            fleet::deviceid_from_bytes(arg->error.de_deviceid, sizeof(arg->error.de_deviceid));
        fleet::Fleet* fleet = mds_access::fleet(*exp);
        if (!dev || fleet == nullptr || !fleet->find(*dev)) {
            const auto unknown = state.counters.layouterror_unknown_devices.fetch_add(1) + 1;
            LogEvent(COMPONENT_PNFS,
                     "%s LAYOUTERROR file %" PRIu64 ": device %s is none of this export's data "
                     "servers: ignored (%" PRIu64 " so far)",
                     exp->label().c_str(), obj_hdl->fileid,
                     dev ? fleet::deviceid_hex(*dev).c_str() : "(none)", unknown);
            return NFS4_OK;
        }
        err.deviceid = *dev;

        std::optional<HeldLayout> held;
        if (auto granted = granted_layout(layout_state))
            held = HeldLayout{granted->client, *granted->files, granted->read_write};
        apply_ds_error(*exp, *handle, state, held ? &*held : nullptr, err, "LAYOUTERROR");
        return NFS4_OK;
    } catch (const std::bad_alloc&) {
        return NFS4ERR_DELAY;
    } catch (...) {
        return NFS4ERR_SERVERFAULT;
    }
}

} // namespace flexfiles::layout

#endif // FSAL_OBJ_OPS_HAS_LAYOUTERROR
