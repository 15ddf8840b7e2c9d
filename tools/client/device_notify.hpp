// SPDX-License-Identifier: LGPL-3.0-or-later
//
// CB_NOTIFY_DEVICEID as the client receives it (RFC 8881 section 20.12): each notify4 of
// cnda_changes has a bitmap of notify_deviceid_type4 bits and, as notify_vals, the XDR of
// one notify_deviceid_change4 (bit 1) or notify_deviceid_delete4 (bit 2) per bit, in bit
// order. GETDEVICEINFO asks for them (gdia_notify_types) and says which the server will
// send (gdir_notification; FlexDeviceAddr::notifications).
#pragma once

#include "compound.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace flexfiles::client {

constexpr uint32_t kNotifyDeviceChange = 1u << NOTIFY_DEVICEID4_CHANGE;
constexpr uint32_t kNotifyDeviceDelete = 1u << NOTIFY_DEVICEID4_DELETE;

struct DeviceNotification {
    uint32_t type = 0; // NOTIFY_DEVICEID4_CHANGE or NOTIFY_DEVICEID4_DELETE
    uint32_t layout_type = 0;
    DeviceId4 deviceid{};
    bool immediate = false; // ndc_immediate (CHANGE only)

    std::string describe() const;
};

// The notifications of one CB_NOTIFY_DEVICEID, in order; std::nullopt when a change does
// not decode: a bit other than CHANGE and DELETE, no bit, a value cut short or trailing
// bytes after the values.
std::optional<std::vector<DeviceNotification>>
decode_device_notifications(const CB_NOTIFY_DEVICEID4args& args);

// "CHANGE|DELETE", "none": a gdia_notify_types / gdir_notification word.
std::string notify_types_name(uint32_t bits);

} // namespace flexfiles::client
