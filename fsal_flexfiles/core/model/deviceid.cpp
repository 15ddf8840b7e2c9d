// SPDX-License-Identifier: LGPL-3.0-or-later
#include "model/deviceid.hpp"

#include "model/hex.hpp"

#include <cstring>

namespace flexfiles::fleet {

namespace {
constexpr std::uint8_t kMagic0 = 0x46; // 'F'
constexpr std::uint8_t kMagic1 = 0x46; // 'F'
} // namespace

DeviceId make_deviceid(std::uint64_t ds_id, std::uint8_t fsal_id) noexcept {
    DeviceId dev{};
    dev[0] = fsal_id;
    dev[1] = kDeviceIdVersion;
    dev[2] = kMagic0;
    dev[3] = kMagic1;
    for (int i = 0; i < 8; ++i)
        dev[8 + i] = static_cast<std::uint8_t>(ds_id >> (56 - 8 * i));
    return dev;
}

std::optional<std::uint64_t> deviceid_ds_id(const DeviceId& dev) noexcept {
    if (dev[1] != kDeviceIdVersion || dev[2] != kMagic0 || dev[3] != kMagic1)
        return std::nullopt;
    if (dev[4] != 0 || dev[5] != 0 || dev[6] != 0 || dev[7] != 0)
        return std::nullopt;
    std::uint64_t id = 0;
    for (int i = 0; i < 8; ++i)
        id = (id << 8) | dev[8 + i];
    return id;
}

std::optional<DeviceId> deviceid_from_bytes(const void* bytes, std::size_t size) noexcept {
    DeviceId dev{};
    if (bytes == nullptr || size != dev.size())
        return std::nullopt;
    std::memcpy(dev.data(), bytes, dev.size());
    return dev;
}

std::string deviceid_hex(const DeviceId& dev) {
    return to_hex(dev);
}

} // namespace flexfiles::fleet
