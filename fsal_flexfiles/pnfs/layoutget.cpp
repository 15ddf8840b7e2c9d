// SPDX-License-Identifier: LGPL-3.0-or-later
//
// LAYOUTGET (RFC 8881 section 18.43; the ff_layout4 body, RFC 8435 section 5.1).
//
// Ganesha's handler keeps the layout state (stateid, segments, recalls); this method fills
// one segment: always the whole file, with the iomode asked for, as an ff_layout4 that
// names one mirror per data file of the file (model/data_files.hpp), in mirror order:
//
//   ffl_stripe_unit         the export's Stripe_Unit
//   ffl_mirrors[i]          one ff_data_server4 per mirror (stripe width 1):
//     ffds_deviceid           the data server's device id (model/deviceid.hpp)
//     ffds_efficiency         the MDS's view of the data server now: Up 2, Suspect 1,
//                             Down 0 (clients prefer higher values for reads)
//     ffds_stateid            the anonymous stateid: NFSv3 data servers, loosely coupled
//     ffds_fh_vers            [the data file's NFSv3 filehandle]
//     ffds_user/ffds_group    the AUTH_SYS credentials the client must use on the data
//                             server, numeric strings (layout/authority.hpp):
//                               RW    the data file's synthetic owner and group, which
//                                     the MDS changes to fence (fencing.cpp)
//                               READ  the export's READ uid (config::read_layout_uid,
//                                     outside the owners' range) and the data file's
//                                     group: data files are mode 0640
//                                     (model/data_files.hpp), so these read and cannot
//                                     write, whatever the client does with them
//   ffl_flags               0: LAYOUTCOMMIT is wanted (size and mtime come from it), I/O
//                           through the MDS is allowed, reads may use RW layouts, writes
//                           go to every mirror
//   ffl_stats_collect_hint  0: no LAYOUTSTATS wanted (LAYOUTRETURN's stats are counted)
//
// An RW layout is authority to write the data files and to report size and mtime
// (LAYOUTCOMMIT, LAYOUT_WCC): it is granted only to a client holding an open or delegation
// with write access to the file, on an export writable for it, that passes the same
// permission check as a WRITE (pnfs/authority.cpp; refusals are counted by reason).
//
// Mirror order never changes for a file. A stale mirror (one that missed a write through
// the MDS, store/stale_mirrors.hpp) is left out until it is resilvered; LAYOUT_WCC reports
// and LAYOUTRETURN errors are matched by (deviceid, stateid, filehandle), not position.
// Layouts are return-on-close, so a client that closes the file stops counting as a holder
// (fencing.cpp). The segment's fsal_seg_data is a Grant (grants.hpp) recorded in the
// export's registry until LAYOUTRETURN disposes of it.
#include "export.hpp"
#include "fleet/fleet.hpp"
#include "handle.hpp"
#include "model/nfs4_names.hpp"
#include "pnfs/context.hpp"
#include "pnfs/layout_ops.hpp"
#include "pnfs/mds_access.hpp"
#include "pnfs/xdr/ff_xdr.hpp"

#include <algorithm>
#include <memory>

namespace flexfiles::layout {

namespace {

static_assert(LAYOUTIOMODE4_READ == nfs4::kIomodeRead && LAYOUTIOMODE4_RW == nfs4::kIomodeRw &&
              LAYOUTIOMODE4_ANY == nfs4::kIomodeAny);

std::uint32_t efficiency_of(fleet::Fleet* fleet, const mds::DataFile& f) {
    if (fleet == nullptr)
        return 0;
    auto ds = fleet->find(f.ds_id);
    if (!ds)
        return 0;
    switch (ds->health()) {
    case fleet::Health::up:
        return 2;
    case fleet::Health::suspect:
        return 1;
    case fleet::Health::down:
        return 0;
    }
    return 0;
}

} // namespace

// The loc_body buffer Ganesha gives LAYOUTGET: the fixed part (stripe unit, mirror count,
// flags, hint: 20 bytes) and per mirror one ff_data_server4 with a 64-byte NFSv3
// filehandle and two 10-digit owners (4 + 16 + 4 + 16 + 4 + 4 + 64 + 2 * (4 + 12) = 144),
// rounded up generously. Ganesha caps it at the client's loga_maxcount.
size_t fs_loc_body_size(fsal_export* exp_hdl) noexcept {
    const Export* exp = Export::of(exp_hdl);
    const std::size_t mirrors = exp != nullptr ? exp->settings.mirrors : 1;
    return 64 + 192 * std::max<std::size_t>(mirrors, 1);
}

nfsstat4 layoutget(fsal_obj_handle* obj_hdl, XDR* loc_body, const fsal_layoutget_arg* arg,
                   fsal_layoutget_res* res) noexcept {
    Export* exp = current_export();
    Handle* handle = Handle::of(obj_hdl);
    const std::uint64_t file = file_id_of(*obj_hdl);

    if (exp == nullptr || !export_grants_layouts(exp))
        return NFS4ERR_LAYOUTUNAVAILABLE;
    ExportLayouts& state = exp->layouts();

    if (arg->type != LAYOUT4_FLEX_FILES) {
        bump(state.counters.layoutgets_refused);
        LogDebug(COMPONENT_PNFS, "FLEXFILES LAYOUTGET file %" PRIu64 ": layout type %d refused",
                 file, static_cast<int>(arg->type));
        return NFS4ERR_UNKNOWN_LAYOUTTYPE;
    }
    const layoutiomode4 iomode = res->segment.io_mode;
    if (iomode != LAYOUTIOMODE4_READ && iomode != LAYOUTIOMODE4_RW) {
        bump(state.counters.layoutgets_refused);
        return NFS4ERR_BADIOMODE;
    }
    if (obj_hdl->type != REGULAR_FILE)
        return NFS4ERR_WRONG_TYPE; // Ganesha's handler checks this first; belt and braces
    if (iomode == LAYOUTIOMODE4_RW) {
        const nfsstat4 authority = check_rw_authority(*exp, obj_hdl, state);
        if (authority != NFS4_OK)
            return authority; // logged and counted there
    }
    const Iomode granted = iomode == LAYOUTIOMODE4_RW ? Iomode::ReadWrite : Iomode::Read;
    const std::uint32_t read_uid = config::read_layout_uid(exp->settings);
    if (granted == Iomode::Read && read_uid == 0) {
        // config::validate refuses such a configuration; never hand out root.
        bump(state.counters.layoutgets_refused);
        LogCrit(COMPONENT_PNFS, "%s LAYOUTGET(READ) file %" PRIu64 ": no uid for READ layouts",
                exp->label().c_str(), file);
        return NFS4ERR_LAYOUTUNAVAILABLE;
    }

    std::optional<mds::DataFileMap> map;
    try {
        map = mds_access::current_data_files(*exp, *handle);
    } catch (...) {
        map.reset();
    }
    if (!map || map->files.empty()) {
        bump(state.counters.layoutgets_refused);
        LogInfo(COMPONENT_PNFS,
                "FLEXFILES LAYOUTGET file %" PRIu64 " (export %d): the file has no data files, "
                "no layout (I/O goes through the MDS)",
                file, exp->export_id);
        return NFS4ERR_LAYOUTUNAVAILABLE;
    }

    // Stale mirrors (missed a write; store/stale_mirrors.hpp) stay out until resilvered. At
    // least one mirror is always in sync.
    const std::vector<std::uint32_t> stale =
        mds_access::mirrors_to_leave_out(*exp, file, iomode == LAYOUTIOMODE4_RW);
    if (!stale.empty()) {
        std::erase_if(map->files, [&](const mds::DataFile& f) {
            return std::find(stale.begin(), stale.end(), f.mirror) != stale.end();
        });
        LogDebug(COMPONENT_PNFS,
                 "FLEXFILES LAYOUTGET file %" PRIu64 ": %zu stale mirror(s) left out", file,
                 stale.size());
        if (map->files.empty())
            return NFS4ERR_LAYOUTUNAVAILABLE;
    }

    std::unique_ptr<Grant> grant;
    try {
        fleet::Fleet* fleet = mds_access::fleet(*exp);
        std::vector<std::uint32_t> efficiency;
        efficiency.reserve(map->files.size());
        for (const mds::DataFile& f : map->files)
            efficiency.push_back(efficiency_of(fleet, f));
        Layout body = layout_of(*map, efficiency);
        for (std::size_t i = 0; i < map->files.size(); i++) {
            const DsCredentials creds = layout_credentials(map->files[i], granted, read_uid);
            LayoutDataServer& ds = body.mirrors[i].data_servers.front();
            ds.user = std::to_string(creds.uid);
            ds.group = std::to_string(creds.gid);
        }

        if (!encode_layout(loc_body, body)) {
            bump(state.counters.layoutgets_refused);
            LogInfo(COMPONENT_PNFS,
                    "FLEXFILES LAYOUTGET file %" PRIu64 ": %zu mirrors do not fit loga_maxcount %u",
                    file, map->files.size(), arg->maxcount);
            return NFS4ERR_TOOSMALL;
        }

        grant = std::make_unique<Grant>();
        grant->file = file;
        grant->client = caller_clientid();
        grant->iomode = granted;
        grant->files = std::move(*map);
    } catch (const std::bad_alloc&) {
        return NFS4ERR_DELAY;
    } catch (...) {
        return NFS4ERR_SERVERFAULT;
    }

    res->segment.io_mode = iomode;
    res->segment.offset = 0;
    res->segment.length = NFS4_UINT64_MAX;
    res->return_on_close = true;
    res->last_segment = true;
    res->signal_available = false;

    // The next instance of the MDS must be able to fence what this one hands out.
    if (granted == Iomode::ReadWrite && state.rw_marks) {
        std::string error;
        if (!state.rw_marks->granted(handle->key, file, error,
                                     mds_access::mark_handle(*exp, *handle))) {
            bump(state.counters.layoutgets_refused);
            LogWarn(COMPONENT_PNFS,
                    "%s LAYOUTGET(RW) file %" PRIu64 ": the layout store could not record "
                    "it (%s): NFS4ERR_LAYOUTTRYLATER",
                    exp->label().c_str(), file, error.c_str());
            return NFS4ERR_LAYOUTTRYLATER;
        }
    }
    // Other MDSs of a shared namespace must find this one's writers to fence them.
    if (granted == Iomode::ReadWrite && mds_access::shared_namespace(*exp)) {
        std::string error;
        if (!mds_access::mark_namespace_writer(*exp, *handle, error)) {
            bump(state.counters.layoutgets_refused);
            LogWarn(COMPONENT_PNFS, "%s LAYOUTGET(RW) file %" PRIu64 ": %s: NFS4ERR_LAYOUTTRYLATER",
                    exp->label().c_str(), file, error.c_str());
            return NFS4ERR_LAYOUTTRYLATER;
        }
    }
    state.grants.add(*grant, &handle->writes_unseen);
    bump(iomode == LAYOUTIOMODE4_RW ? state.counters.layoutgets_rw
                                    : state.counters.layoutgets_read);
    LogDebug(COMPONENT_PNFS,
             "FLEXFILES LAYOUTGET file %" PRIu64 " client %" PRIx64
             ": %s, %zu mirror(s), grant %" PRIu64,
             file, grant->client, nfs4::iomode_name(iomode).c_str(), grant->files.files.size(),
             grant->id);
    res->fsal_seg_data = grant.release();
    return NFS4_OK;
}

} // namespace flexfiles::layout
