// SPDX-License-Identifier: LGPL-3.0-or-later
#include "pnfs/device_notify.hpp"

#include "export.hpp"
#include "ganesha/sal_shim.h"
#include "methods.hpp"
#include "model/deviceid.hpp"

namespace flexfiles::layout {

namespace {

struct OtherExportListing {
    const Export* self = nullptr;
    std::uint64_t ds_id = 0;
};

bool lists_ds_id(fsal_export* exp_hdl, void* arg) {
    const auto* want = static_cast<OtherExportListing*>(arg);
    const Export* exp = Export::of(exp_hdl);
    return exp != want->self && exp->runtime().data_servers.find(want->ds_id).has_value();
}

void notify(Export& exp, std::uint64_t ds_id, bool deleted) noexcept {
#ifdef FSAL_HAS_PNFS_DEVICE_NOTIFY
    const fleet::DeviceId dev = fleet::make_deviceid(ds_id, FSAL_ID_EXPERIMENTAL);
    const char* what = deleted ? "DELETE" : "CHANGE";
    const int rc = ff_notify_device(exp.up_ops, dev.data(), dev.size(), deleted, false);
    if (rc != 0) {
        LogWarn(COMPONENT_PNFS,
                "%s: CB_NOTIFY_DEVICEID %s of device %s (data server %" PRIu64
                ") not sent: error %d; clients keep it cached until they ask again",
                exp.label().c_str(), what, fleet::deviceid_hex(dev).c_str(), ds_id, rc);
        return;
    }
    LogEvent(COMPONENT_PNFS,
             "%s: CB_NOTIFY_DEVICEID %s of device %s (data server %" PRIu64
             ") queued for the clients granted it",
             exp.label().c_str(), what, fleet::deviceid_hex(dev).c_str(), ds_id);
#else
    (void)exp;
    (void)ds_id;
    (void)deleted;
#endif
}

} // namespace

void notify_device_removed(Export& exp, std::uint64_t ds_id) noexcept {
    OtherExportListing other{&exp, ds_id};
    if (ff_layout_find_export(&the_module, lists_ds_id, &other)) {
        LogDebug(COMPONENT_PNFS,
                 "%s: data server %" PRIu64
                 " removed; another export still lists its device: not deleted",
                 exp.label().c_str(), ds_id);
        return;
    }
    notify(exp, ds_id, true);
}

void notify_device_drain_changed(Export& exp, std::uint64_t ds_id) noexcept {
    notify(exp, ds_id, false);
}

} // namespace flexfiles::layout
