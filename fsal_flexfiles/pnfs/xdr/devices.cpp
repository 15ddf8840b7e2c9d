// SPDX-License-Identifier: LGPL-3.0-or-later
#include "pnfs/xdr/devices.hpp"

namespace flexfiles::layout {

const config::DataServer* find_data_server(const config::ExportConfig& cfg,
                                           const fleet::DeviceId& dev) noexcept {
    const auto id = fleet::deviceid_ds_id(dev);
    if (!id)
        return nullptr;
    for (const config::DataServer& ds : cfg.data_servers)
        if (ds.id == *id)
            return &ds;
    return nullptr;
}

std::optional<DeviceAddr> device_addr_of(const config::DataServer& ds) {
    auto addr = universal_address(ds.address, ds.nfs_port);
    if (!addr)
        return std::nullopt;
    DeviceAddr out;
    out.addrs.push_back(std::move(*addr));
    out.versions.push_back(DeviceVersion{3, 0, ds.rsize, ds.wsize, false});
    return out;
}

} // namespace flexfiles::layout
