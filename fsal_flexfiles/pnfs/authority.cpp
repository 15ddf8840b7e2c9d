// SPDX-License-Identifier: LGPL-3.0-or-later
//
// Authority at grant time (core/layout/authority.hpp says what a layout authorises and
// why): the FSAL's record of the opens and delegations with write access per client and
// file, and the checks LAYOUTGET(RW) runs before granting.
//
// The record: Ganesha gives the FSAL's LAYOUTGET neither the stateid nor the open behind
// it (fsal_layoutget_arg carries type, minlength, export id and maxcount), and a LAYOUTGET
// on a layout stateid has no open at all. But every open and delegation passes through
// this FSAL (open2, reopen2 for upgrades and downgrades, lease_op2, close2; free_state
// when Ganesha frees the state, whatever the path), with the caller's clientid in op_ctx.
// So the export records, per state, its file, its client and whether it has write access
// (FSAL_O_WRITE, OPEN_DELEGATE_WRITE), and LAYOUTGET asks whether the caller's client
// holds such a state on the file. This needs no change to Ganesha.
//
// The checks, in this order (the first that fails answers, and is counted by reason):
//   1. the export is writable for this client: op_ctx's export permissions have
//      EXPORT_OPTION_WRITE_ACCESS (Access_Type = RW for the client's CLIENT block or the
//      export), as Ganesha checks for OPEN with write access and for WRITE. Otherwise
//      NFS4ERR_ACCESS. Linux knfsd answers LAYOUTGET(RW) on a read-only export with
//      NFS4ERR_ROFS (fh_verify with NFSD_MAY_WRITE, fs/nfsd/nfs4proc.c); here the file
//      system is not read-only, the export denies this client write access (Ganesha's
//      Access_Type is per client), and NFS4ERR_ACCESS ("the caller does not have the
//      correct permission", RFC 8881 section 15.1) is among LAYOUTGET's errors (section
//      15.2).
//   2. the client holds an open or a delegation with write access to the file. Otherwise
//      NFS4ERR_OPENMODE (RFC 8881 section 15.1: an operation the client's state does not
//      sanction, e.g. writing a file opened for reading), the status Ganesha's WRITE
//      answers for a stateid without OPEN4_SHARE_ACCESS_WRITE (nfs4_op_write.c). knfsd
//      does not check the open in LAYOUTGET.
//   3. the same permission check as a WRITE: the object's test_access(FSAL_WRITE_ACCESS,
//      owner_skip), as nfs4_op_write.c calls it with the caller's credentials (knfsd:
//      fh_verify(NFSD_MAY_WRITE), nfserr_acces). Otherwise NFS4ERR_ACCESS.
// An RW request is refused, not answered with a READ layout: the client asked for write
// authority and would take a READ layout for one it may write with.
#include "export.hpp"
#include "handle.hpp"
#include "pnfs/context.hpp"
#include "pnfs/layout_ops.hpp"

namespace flexfiles::layout {

namespace {

// What nfs4_op_write.c asks test_access for (FSAL_WRITE_ACCESS: mode W_OK, ACE write/append).
const auto kWriteAccess = static_cast<fsal_accessflags_t>(FSAL_WRITE_ACCESS);

// Records one state; a failure (memory) forgets it, so the client is refused RW layouts
// rather than granted them on a stale record.
void set_state(Export& exp, Handle& handle, state_t* state, bool write) noexcept {
    if (state == nullptr || handle.type != REGULAR_FILE || !export_grants_layouts(&exp))
        return;
    ExportLayouts& layouts = exp.layouts();
    try {
        layouts.opens.set(state, file_id_of(handle), caller_clientid(), write);
    } catch (const std::exception& e) {
        layouts.opens.forget(state);
        LogWarn(COMPONENT_PNFS,
                "%s file %" PRIu64 ": could not record an open (%s): no RW layouts for it",
                exp.label().c_str(), handle.fileid, e.what());
    }
}

} // namespace

void record_open(Export& exp, Handle& handle, state_t* state, fsal_openflags_t openflags) noexcept {
    set_state(exp, handle, state, (openflags & FSAL_O_WRITE) != 0);
}

void record_delegation(Export& exp, Handle& handle, state_t* state, fsal_deleg_t deleg) noexcept {
    if (deleg == FSAL_DELEG_NONE)
        forget_state(exp, state);
    else
        set_state(exp, handle, state, deleg == FSAL_DELEG_WR);
}

void forget_state(Export& exp, state_t* state) noexcept {
    if (state != nullptr)
        exp.layouts().opens.forget(state);
}

nfsstat4 check_rw_authority(Export& exp, fsal_obj_handle* obj_hdl, ExportLayouts& state) noexcept {
    const std::uint64_t file = file_id_of(*obj_hdl);
    const std::uint64_t client = caller_clientid();
    const bool export_writable = ff_gsh_ctx_export_writable();
    fsal_status_t permission = fsalstat(ERR_FSAL_NO_ERROR, 0);
    RwRefusal why = RwRefusal::none;
    try {
        why = rw_refusal(export_writable, state.opens.client_may_write(file, client), [&] {
            permission =
                obj_hdl->obj_ops->test_access(obj_hdl, kWriteAccess, nullptr, nullptr, true);
            return !FSAL_IS_ERROR(permission);
        });
    } catch (...) {
        return NFS4ERR_SERVERFAULT;
    }
    if (why == RwRefusal::none)
        return NFS4_OK;

    bump(state.counters.layoutgets_refused);
    switch (why) {
    case RwRefusal::export_read_only:
        bump(state.counters.layoutgets_rw_refused_export);
        LogInfo(COMPONENT_PNFS,
                "%s LAYOUTGET(RW) file %" PRIu64 " client %" PRIx64
                ": refused (NFS4ERR_ACCESS), the export is read-only for this client",
                exp.label().c_str(), file, client);
        return NFS4ERR_ACCESS;
    case RwRefusal::no_write_open:
        bump(state.counters.layoutgets_rw_refused_open);
        LogInfo(COMPONENT_PNFS,
                "%s LAYOUTGET(RW) file %" PRIu64 " client %" PRIx64
                ": refused (NFS4ERR_OPENMODE), the client holds no open or delegation for write",
                exp.label().c_str(), file, client);
        return NFS4ERR_OPENMODE;
    case RwRefusal::no_permission:
    case RwRefusal::none:
        break;
    }
    bump(state.counters.layoutgets_rw_refused_access);
    LogInfo(COMPONENT_PNFS,
            "%s LAYOUTGET(RW) file %" PRIu64 " client %" PRIx64 " uid %u: refused "
            "(NFS4ERR_ACCESS), the WRITE permission check failed (%s)",
            exp.label().c_str(), file, client, op_ctx != nullptr ? op_ctx->creds.caller_uid : 0u,
            msg_fsal_err(permission.major));
    return NFS4ERR_ACCESS;
}

} // namespace flexfiles::layout
