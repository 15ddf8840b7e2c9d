// SPDX-License-Identifier: LGPL-3.0-or-later
//
// GETDEVICEINFO (RFC 8881 section 18.40, RFC 8435 section 4.1) and GETDEVICELIST.
//
// A deviceid names one data server by its configured Id (model/deviceid.hpp): byte 0 is
// FSAL_ID_EXPERIMENTAL, which is how Ganesha finds this module; the module then looks for
// a data server with that Id in each of its exports. Data-server Ids are therefore one
// namespace across all FLEXFILES exports of a server: two exports that list the same Id
// must mean the same data server (the first export found answers).
#include "export.hpp"
#include "fleet/fleet.hpp"
#include "pnfs/context.hpp"
#include "pnfs/layout_ops.hpp"
#include "pnfs/mds_access.hpp"
#include "pnfs/xdr/devices.hpp"
#include "pnfs/xdr/ff_xdr.hpp"

#include <cstring>

namespace flexfiles::layout {

namespace {

struct DeviceLookup {
    fleet::DeviceId dev{};
    std::optional<config::DataServer> ds; // a copy: the export may go once the lock is gone
    int export_id = 0;
};

bool match_device(fsal_export* exp_hdl, void* arg) {
    auto* lookup = static_cast<DeviceLookup*>(arg);
    Export* exp = Export::of(exp_hdl);
    // The data servers the export has now: an administrator may have added some (dbus/).
    config::ExportConfig live;
    live.data_servers = exp->runtime().data_servers.list();
    const config::DataServer* ds = find_data_server(live, lookup->dev);
    if (ds == nullptr)
        return false;
    lookup->ds = *ds;
    lookup->export_id = exp_hdl->export_id;
    bump(exp->layouts().counters.getdeviceinfos);
    return true;
}

} // namespace

nfsstat4 getdeviceinfo(fsal_module* fsal_hdl, XDR* da_addr_body, const layouttype4 type,
                       const pnfs_deviceid* deviceid) noexcept {
    if (type != LAYOUT4_FLEX_FILES) {
        LogDebug(COMPONENT_PNFS, "FLEXFILES GETDEVICEINFO: layout type %d is not flex files",
                 static_cast<int>(type));
        return NFS4ERR_UNKNOWN_LAYOUTTYPE;
    }
    static_assert(sizeof(pnfs_deviceid) == NFS4_DEVICEID4_SIZE);
    const auto dev = fleet::deviceid_from_bytes(deviceid, sizeof(*deviceid));
    if (!dev || !fleet::deviceid_ds_id(*dev)) {
        LogInfo(COMPONENT_PNFS, "FLEXFILES GETDEVICEINFO: %s is not a FLEXFILES device id",
                dev ? fleet::deviceid_hex(*dev).c_str() : "(none)");
        return NFS4ERR_NOENT;
    }

    try {
        DeviceLookup lookup;
        lookup.dev = *dev;
        ff_layout_find_export(fsal_hdl, match_device, &lookup);
        if (!lookup.ds) {
            LogInfo(COMPONENT_PNFS,
                    "FLEXFILES GETDEVICEINFO: device %s: no export has a data server with Id "
                    "%" PRIu64,
                    fleet::deviceid_hex(*dev).c_str(), *fleet::deviceid_ds_id(*dev));
            return NFS4ERR_NOENT;
        }
        const auto body = device_addr_of(*lookup.ds);
        if (!body) {
            // The configuration check accepts numeric addresses only: a bug if seen.
            LogCrit(COMPONENT_PNFS,
                    "FLEXFILES GETDEVICEINFO: export %d, data server Id %u: Address \"%s\" is "
                    "not a numeric IPv4 or IPv6 address",
                    lookup.export_id, lookup.ds->id, lookup.ds->address.c_str());
            return NFS4ERR_SERVERFAULT;
        }
        if (!encode_device_addr(da_addr_body, *body)) {
            LogInfo(COMPONENT_PNFS,
                    "FLEXFILES GETDEVICEINFO: device %s does not fit the client's gdia_maxcount",
                    fleet::deviceid_hex(*dev).c_str());
            return NFS4ERR_TOOSMALL;
        }
        LogDebug(COMPONENT_PNFS, "FLEXFILES GETDEVICEINFO: device %s = %s %s (export %d)",
                 fleet::deviceid_hex(*dev).c_str(), body->addrs[0].netid.c_str(),
                 body->addrs[0].uaddr.c_str(), lookup.export_id);
        return NFS4_OK;
    } catch (const std::bad_alloc&) {
        return NFS4ERR_DELAY;
    } catch (...) {
        return NFS4ERR_SERVERFAULT;
    }
}

// netaddr4 ("tcp6", a 39-character IPv6 address and 8 port characters, with lengths and
// padding: 64 bytes) plus one ff_device_versions4 (20) and two counts (8), rounded up.
size_t fs_da_addr_size(fsal_module*) noexcept {
    return 256;
}

#ifdef FSAL_GETDEVICELIST_HAS_DEVICEID_HEAD // Ganesha with the series' GETDEVICELIST patch

// GETDEVICELIST (RFC 8881 section 18.41): the deviceids of the export's fleet, by data-server
// Id. Ganesha builds each deviceid4 from res->deviceid_head (bytes 0..7, ours: fsal_id,
// version, magic, zeros) and the value given to cb (bytes 8..15, big-endian: the Id), so
// the listed ids are exactly the ones layouts carry and GETDEVICEINFO resolves.
//
// Paging: the cookie is the smallest Id the next page starts at (0: from the start), so a
// data server added or removed between pages neither repeats nor hides the others. The
// verifier names the export instance: a cookie from before an MDS restart gets
// NFS4ERR_NOT_SAME.
nfsstat4 getdevicelist(fsal_export* exp_hdl, layouttype4 type, void* opaque,
                       bool (*cb)(void* opaque, const uint64_t id),
                       fsal_getdevicelist_res* res) noexcept {
    if (type != LAYOUT4_FLEX_FILES)
        return NFS4ERR_UNKNOWN_LAYOUTTYPE;
    Export* exp = Export::of(exp_hdl);
    try {
        const ExportLayouts& state = exp->layouts();
        if (res->cookie != 0 && res->cookieverf != state.devicelist_verifier) {
            LogInfo(COMPONENT_PNFS,
                    "%s GETDEVICELIST: cookie %" PRIu64 " with a verifier of another instance",
                    exp->label().c_str(), res->cookie);
            return NFS4ERR_NOT_SAME;
        }
        res->cookieverf = state.devicelist_verifier;
        res->eof = true;
        fleet::Fleet* fleet = mds_access::fleet(*exp);
        if (fleet == nullptr)
            return NFS4_OK;

        const fleet::DeviceId head = fleet::make_deviceid(0, FSAL_ID_EXPERIMENTAL);
        static_assert(sizeof(res->deviceid_head) == 8);
        std::memcpy(res->deviceid_head, head.data(), sizeof(res->deviceid_head));
        unsigned listed = 0;
        for (const auto& ds : fleet->servers()) { // ordered by Id
            if (ds->id() < res->cookie)
                continue;
            if (std::memcmp(ds->deviceid().data(), head.data(), sizeof(res->deviceid_head)) != 0) {
                LogCrit(COMPONENT_PNFS, "%s GETDEVICELIST: %s has deviceid %s: not listed",
                        exp->label().c_str(), ds->label().c_str(),
                        fleet::deviceid_hex(ds->deviceid()).c_str());
                continue;
            }
            if (!cb(opaque, ds->id())) {
                res->cookie = ds->id(); // the next page starts with it
                res->eof = false;
                break;
            }
            listed++;
        }
        LogDebug(COMPONENT_PNFS, "%s GETDEVICELIST: %u device(s)%s", exp->label().c_str(), listed,
                 res->eof ? ", end of list" : "");
        return NFS4_OK;
    } catch (const std::bad_alloc&) {
        return NFS4ERR_DELAY;
    } catch (...) {
        return NFS4ERR_SERVERFAULT;
    }
}

#else

// Ganesha 4.3's GETDEVICELIST builds each deviceid4 itself from the export id (high 8
// bytes) and a 64-bit value from the FSAL (low 8 bytes). GETDEVICEINFO, on the other hand,
// dispatches on byte 0 (the FSAL id), which that construction sets to 0: a listed id
// could never be resolved, by any FSAL. Without the series' patch that lets the FSAL set
// the high 8 bytes, GETDEVICELIST is not supported (clients learn devices from layouts).
nfsstat4 getdevicelist(fsal_export* exp_hdl, layouttype4 type, void*,
                       bool (*)(void*, const uint64_t), fsal_getdevicelist_res*) noexcept {
    LogDebug(COMPONENT_PNFS,
             "FLEXFILES GETDEVICELIST (export %d, layout type %d): not supported, device ids "
             "come with layouts",
             exp_hdl != nullptr ? exp_hdl->export_id : 0, static_cast<int>(type));
    return NFS4ERR_NOTSUPP;
}

#endif

} // namespace flexfiles::layout
