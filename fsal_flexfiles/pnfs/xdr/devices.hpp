// SPDX-License-Identifier: LGPL-3.0-or-later
//
// From a deviceid to what GETDEVICEINFO answers: which configured data server it names, and
// that server's ff_device_addr4. Pure C++ over the export configuration (config.hpp) and
// the deviceid format (model/deviceid.hpp); device_info.cpp runs it over the module's exports.
#pragma once

#include "model/config.hpp"
#include "model/deviceid.hpp"
#include "pnfs/xdr/ff_xdr.hpp"

#include <optional>

namespace flexfiles::layout {

// The data server of `cfg` that `dev` names (by the Id in bytes 8-15; bytes 1-7 must be
// the FLEXFILES format, byte 0, the FSAL id Ganesha dispatched on, is not looked at), or
// nullptr.
const config::DataServer* find_data_server(const config::ExportConfig& cfg,
                                           const fleet::DeviceId& dev) noexcept;

// ff_device_addr4 of a data server: one netaddr4 (its address and NFS port, "tcp" or
// "tcp6"), one version entry {NFSv3, minor 0, its Rsize and Wsize, loosely coupled}.
// std::nullopt when its address is not a numeric IPv4/IPv6 address.
std::optional<DeviceAddr> device_addr_of(const config::DataServer& ds);

} // namespace flexfiles::layout
