// SPDX-License-Identifier: LGPL-3.0-or-later
//
// LAYOUTRETURN (RFC 8881 section 18.44; the ff_layoutreturn4 body, RFC 8435 section 9).
//
// Ganesha calls this once per segment being returned (client returns, recalls answered,
// revocations, return-on-close, forgotten layouts, export cleanup), with the client's
// lrf_body for a LAYOUTRETURN4_FILE return. The body is read once per operation: on the
// first call, whose stream is still at its start (Ganesha rewinds it only after the loop).
//
// The body:
//   fflr_ioerr_report   each device_error4 names a data server and what failed there.
//     * NFS4ERR_ACCESS / NFS4ERR_PERM: a credentials problem, not the server's health.
//       If the returned layout's synthetic owner differs from the file's current one, the
//       client was fenced (fencing.cpp): expected, counted. If it is the current one, the
//       data file's owner on the data server is wrong: it is set back (NFSv3 SETATTR,
//       asynchronous) and counted.
//     * anything else is evidence, not a verdict: the MDS probes that data server now
//       (DataServer::probe_now), and only the probe's answer changes its health, so no
//       client's word takes a data server out of placement. Each client has a budget of
//       such reports (layout/report_limiter.hpp); beyond it a report is only counted. A
//       device the client's layout does not name is counted and ignored. For an RW
//       layout's WRITE or COMMIT the mirror on that data server may now differ from the
//       others: it is marked stale (store/stale_mirrors.hpp) unless it is the last one in
//       sync (whatever the budget: the mark is idempotent and the holder could have
//       written anything anyway). A READ layout's WRITE/COMMIT errors are counted and
//       ignored: its holder cannot have written.
//   fflr_iostats_report counted per export (ops and bytes read and written).
// A body that does not decode fails the operation with NFS4ERR_BADXDR before anything is
// disposed of.
//
// Disposal: the segment's Grant leaves the export's registry and is freed; that includes a
// segment whose LAYOUTGET failed after this FSAL granted it (circumstance_unsent, from the
// series' patch 0013: the grant and the layout state end together). An RW segment
// that ends without its holder returning it (circumstance_revoke: a recall not answered in
// time, lease expiry, a client forgotten by the server or an administrator, export
// cleanup) is fenced first (fencing.cpp, on_layout_ended): its holder may still reach the
// data servers.
#include "export.hpp"
#include "fleet/fleet.hpp"
#include "handle.hpp"
#include "pnfs/context.hpp"
#include "pnfs/getattr_overlay.hpp"
#include "pnfs/layout_ops.hpp"
#include "pnfs/mds_access.hpp"
#include "pnfs/xdr/ff_xdr.hpp"

#include <algorithm>

namespace flexfiles::layout {

namespace {

SegmentEnd segment_end(fsal_layoutreturn_circumstance c) {
    switch (c) {
    case circumstance_client:
        return SegmentEnd::returned;
    case circumstance_reclaim:
        return SegmentEnd::reclaimed;
    case circumstance_roc:
        return SegmentEnd::closed;
    case circumstance_forgotten:
        return SegmentEnd::forgotten;
    case circumstance_revoke:
        return SegmentEnd::revoked;
    case circumstance_shutdown:
        return SegmentEnd::server_shutdown;
#ifdef FSAL_LAYOUTRETURN_HAS_UNSENT // Ganesha with the series' unsent-segments patch
    case circumstance_unsent:
        return SegmentEnd::unsent;
#endif
    default:
        break;
    }
    return SegmentEnd::revoked; // unknown: do not assume the holder let go
}

const mds::DataFile* find_data_file(const mds::DataFileMap& map, const fleet::DeviceId& dev) {
    for (const mds::DataFile& f : map.files)
        if (f.deviceid == dev)
            return &f;
    return nullptr;
}

// An access error from the data server behind `err`; `layout` is what the client's layout
// named.
void handle_access_error(Export& exp, Handle& handle, ExportLayouts& state,
                         const HeldLayout& layout, const IoError& err) {
    bump(state.counters.ds_access_errors);
    // apply_ds_error has already ignored devices the layout does not name.
    const mds::DataFile* held = find_data_file(layout.files, err.deviceid);
    // Read again: on a shared namespace another MDS may have fenced the file, and
    // "repairing" the owner from a stale map would undo its fence.
    const auto current = mds_access::current_data_files(exp, handle);
    const mds::DataFile* now = current ? find_data_file(*current, err.deviceid) : nullptr;
    if (held == nullptr || now == nullptr)
        return;
    if (now->fencing_uid != held->fencing_uid || now->fencing_gid != held->fencing_gid) {
        bump(state.counters.ds_access_expected);
        LogDebug(COMPONENT_PNFS,
                 "FLEXFILES file %" PRIu64 ": client %" PRIx64 " was fenced on data server %" PRIu64
                 " (layout %u:%u, now %u:%u)",
                 handle.fileid, layout.client, now->ds_id, held->fencing_uid, held->fencing_gid,
                 now->fencing_uid, now->fencing_gid);
        return;
    }

    // A stale mirror's data file may be closed to READ layouts on purpose (the resilverer,
    // on a shared namespace: model/data_files.hpp); it opens again once in sync.
    const std::vector<std::uint32_t> stale = mds_access::stale_mirrors(exp, current->file_id);
    if (std::find(stale.begin(), stale.end(), now->mirror) != stale.end()) {
        bump(state.counters.ds_access_expected);
        return;
    }

    // The layout carried the current owner and the data server still refused it: the data
    // file's owner is not what the MDS expects. Set it back.
    fleet::Fleet* fleet = mds_access::fleet(exp);
    auto ds = fleet != nullptr ? fleet->find(now->ds_id) : nullptr;
    if (!ds || now->fh.empty()) {
        LogWarn(COMPONENT_PNFS,
                "FLEXFILES file %" PRIu64 ": access error on data server %" PRIu64
                " with the current owner %u:%u, and the data server is not in the fleet",
                handle.fileid, now->ds_id, now->fencing_uid, now->fencing_gid);
        return;
    }
    LogEvent(COMPONENT_PNFS,
             "FLEXFILES file %" PRIu64 ": data server %" PRIu64
             " refused the current owner %u:%u of %s: setting it again",
             handle.fileid, now->ds_id, now->fencing_uid, now->fencing_gid, now->name.c_str());
    fleet::SetAttrs attrs;
    attrs.uid = now->fencing_uid;
    attrs.gid = now->fencing_gid;
    attrs.mode = mds::kDataFileMode; // READ layouts read through the group bits
    const std::uint64_t file = handle.fileid;
    const std::string name = now->name;
    ds->setattr(now->fh, attrs, fleet::Deadline{},
                [counters = &state.counters, file, name](fleet::DsResult<fleet::SetattrResult> r) {
                    if (r.ok()) {
                        bump(counters->ds_owner_repairs);
                        return;
                    }
                    LogWarn(COMPONENT_PNFS,
                            "FLEXFILES file %" PRIu64 ": could not set the owner of %s: %s", file,
                            name.c_str(), r.status.message.c_str());
                });
}

void apply_report(Export& exp, Handle& handle, ExportLayouts& state, const Grant* grant,
                  const ReturnReport& report) {
    std::optional<HeldLayout> held;
    if (grant != nullptr)
        held = HeldLayout{grant->client, grant->files, grant->iomode == Iomode::ReadWrite};
    for (const IoError& err : report.errors)
        apply_ds_error(exp, handle, state, held ? &*held : nullptr, err, "LAYOUTRETURN");
    for (const IoStats& s : report.stats) {
        bump(state.counters.iostats_reports);
        bump(state.counters.read_ops, s.read_ops);
        bump(state.counters.read_bytes, s.read_bytes);
        bump(state.counters.write_ops, s.write_ops);
        bump(state.counters.write_bytes, s.write_bytes);
    }
}

// A write the client could not make on one mirror may have reached the others: the mirrors
// may differ now. That mirror is marked stale (store/stale_mirrors.hpp) unless it is the last
// in sync; the resilverer copies it back once the file's RW layouts are returned.
void mark_missed_write(Export& exp, Handle& handle, const HeldLayout& layout, const IoError& err,
                       const char* op) {
    for (const mds::DataFile& df : layout.files.files) {
        if (df.deviceid != err.deviceid)
            continue;
        const std::string reason = std::string(op) + ": the client's " +
                                   (err.opnum == NFS4_OP_WRITE ? "WRITE" : "COMMIT") +
                                   " failed with status " + std::to_string(err.status);
        std::string error;
        if (mds_access::mark_mirror_stale(exp, handle, df.mirror, layout.client, reason, error))
            LogWarn(COMPONENT_PNFS,
                    "%s: file %" PRIu64 ": mirror %u (data file %s) missed a client's write "
                    "(%s); marked stale until resilvered",
                    exp.label().c_str(), handle.fileid, df.mirror, df.name.c_str(), reason.c_str());
        else
            LogEvent(COMPONENT_PNFS, "%s: file %" PRIu64 ": mirror %u not marked stale: %s",
                     exp.label().c_str(), handle.fileid, df.mirror, error.c_str());
        return; // one data file per device in a layout (distinct data servers per mirror)
    }
}

} // namespace

void apply_ds_error(Export& exp, Handle& handle, ExportLayouts& state, const HeldLayout* layout,
                    const IoError& err, const char* op) {
    bump(state.counters.ds_errors_reported);
    const std::uint64_t client = layout != nullptr ? layout->client : caller_clientid();
    if (layout != nullptr && find_data_file(layout->files, err.deviceid) == nullptr) {
        bump(state.counters.ds_reports_unnamed);
        LogDebug(COMPONENT_PNFS,
                 "FLEXFILES %s file %" PRIu64 ": client %" PRIx64
                 " reports device %s, which its layout does not name: ignored",
                 op, handle.fileid, client, fleet::deviceid_hex(err.deviceid).c_str());
        return;
    }
    const bool write_error = err.opnum == NFS4_OP_WRITE || err.opnum == NFS4_OP_COMMIT;
    if (layout != nullptr && write_error && !layout->read_write) {
        // A READ layout's holder has no credentials to write with (and no authority to).
        bump(state.counters.ds_reports_read_layout_writes);
        LogDebug(COMPONENT_PNFS,
                 "FLEXFILES %s file %" PRIu64 ": client %" PRIx64
                 " reports a %s error through a READ layout: ignored",
                 op, handle.fileid, client, err.opnum == NFS4_OP_WRITE ? "WRITE" : "COMMIT");
        return;
    }
    if (err.status == NFS4ERR_ACCESS || err.status == NFS4ERR_PERM) {
        if (layout != nullptr)
            handle_access_error(exp, handle, state, *layout, err);
        return;
    }
    if (err.status == NFS4_OK)
        return;

    // Evidence, not a verdict: probe the data server now and let the probe decide.
    const auto ds_id = fleet::deviceid_ds_id(err.deviceid);
    fleet::Fleet* fleet = mds_access::fleet(exp);
    auto ds = ds_id && fleet != nullptr ? fleet->find(*ds_id) : nullptr;
    if (!state.reports.admit(client)) {
        bump(state.counters.ds_reports_rate_limited);
    } else if (ds) {
        bump(state.counters.ds_reports_probed);
        LogEvent(COMPONENT_PNFS,
                 "FLEXFILES %s file %" PRIu64 ": client %" PRIx64
                 " reports status %d for op %d on %s (offset %" PRIu64 ", length %" PRIu64
                 "): probing it now",
                 op, handle.fileid, client, static_cast<int>(err.status),
                 static_cast<int>(err.opnum), ds->label().c_str(), err.offset, err.length);
        ds->probe_now();
    }
    if (layout != nullptr && write_error)
        mark_missed_write(exp, handle, *layout, err, op);
}

nfsstat4 layoutreturn(fsal_obj_handle* obj_hdl, XDR* lrf_body,
                      const fsal_layoutreturn_arg* arg) noexcept {
    Handle* handle = Handle::of(obj_hdl);
    Export* exp = current_export();
    if (exp == nullptr)
        exp = handle->exp; // the export the handle was made for
    auto* grant = static_cast<Grant*>(arg->fsal_seg_data);
    if (exp == nullptr) {
        // No export to find the grant's registry in: leave the grant allocated rather than
        // free what the registry may still point to.
        LogCrit(COMPONENT_PNFS, "FLEXFILES LAYOUTRETURN file %" PRIu64 ": no export",
                obj_hdl->fileid);
        return NFS4_OK;
    }
    ExportLayouts& state = exp->layouts();

    try {
        if (lrf_body != nullptr && xdr_getpos(lrf_body) == 0 &&
            arg->circumstance != circumstance_reclaim) {
            bump(state.counters.returns_with_body);
            const auto report = decode_layoutreturn(lrf_body);
            if (!report) {
                bump(state.counters.bad_return_bodies);
                LogInfo(COMPONENT_PNFS,
                        "FLEXFILES LAYOUTRETURN file %" PRIu64
                        ": lrf_body is not an ff_layoutreturn4",
                        obj_hdl->fileid);
                return NFS4ERR_BADXDR;
            }
            apply_report(*exp, *handle, state, grant, *report);
        }
    } catch (const std::bad_alloc&) {
        return NFS4ERR_DELAY;
    } catch (...) {
        return NFS4ERR_SERVERFAULT;
    }

    if (arg->dispose && grant != nullptr) {
        const SegmentEnd end = segment_end(arg->circumstance);
        // A layout its holder did not give back may still be used: fence it first.
        on_layout_ended(*exp, *handle, *grant, end);
        if (!state.grants.remove(*grant, &handle->writes_unseen))
            LogWarn(COMPONENT_PNFS,
                    "FLEXFILES LAYOUTRETURN file %" PRIu64 ": grant %" PRIu64 " was not recorded",
                    grant->file, grant->id);
        if (grant->iomode == Iomode::ReadWrite && state.rw_marks)
            state.rw_marks->ended(handle->key);
        // Its holder may have written without telling: MDCACHE must not answer from what it
        // holds, so that the next GETATTR reaches the FSAL, which asks the data servers.
        if (grant->iomode == Iomode::ReadWrite &&
            handle->writes_unseen.load(std::memory_order_acquire))
            wcc::drop_mdcache_attrs(*exp, *handle);
        bump(end == SegmentEnd::unsent ? state.counters.segments_unsent
                                       : state.counters.segments_returned);
        LogDebug(COMPONENT_PNFS,
                 "FLEXFILES LAYOUTRETURN file %" PRIu64 " client %" PRIx64 ": grant %" PRIu64
                 " returned (circumstance %d)",
                 grant->file, grant->client, grant->id, static_cast<int>(arg->circumstance));
        delete grant;
    }
    return NFS4_OK;
}

} // namespace flexfiles::layout
