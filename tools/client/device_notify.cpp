// SPDX-License-Identifier: LGPL-3.0-or-later
#include "device_notify.hpp"

#include "flex_layout.hpp"
#include "ganesha_xdr.h"
#include "xdr_stream.hpp"

#include <cstdio>
#include <cstring>
#include <span>

namespace flexfiles::client {

namespace {

constexpr uint32_t kKnownTypes = kNotifyDeviceChange | kNotifyDeviceDelete;

// The values of one notify4, one per bit of its mask, in bit order.
bool decode_change(const notify4& change, std::vector<DeviceNotification>& out) {
    if (change.notify_mask.bitmap4_len == 0) {
        return false;
    }
    const uint32_t bits = change.notify_mask.map[0];
    for (u_int i = 1; i < change.notify_mask.bitmap4_len; ++i) {
        if (change.notify_mask.map[i] != 0) {
            return false;
        }
    }
    if (bits == 0 || (bits & ~kKnownTypes) != 0) {
        return false;
    }
    XdrDecoder d(std::span<const char>(change.notify_vals.notifylist4_val,
                                       change.notify_vals.notifylist4_len));
    for (uint32_t type : {NOTIFY_DEVICEID4_CHANGE, NOTIFY_DEVICEID4_DELETE}) {
        if ((bits & (1u << type)) == 0) {
            continue;
        }
        notify_deviceid_change4 wire;
        if (!ff_xdr_decode_notify_deviceid(d.xdr(), type == NOTIFY_DEVICEID4_CHANGE, &wire)) {
            return false;
        }
        DeviceNotification n;
        n.type = type;
        n.layout_type = enum_bits(wire.ndc_layouttype);
        std::memcpy(n.deviceid.data(), wire.ndc_deviceid, NFS4_DEVICEID4_SIZE);
        n.immediate = wire.ndc_immediate != 0;
        out.push_back(n);
    }
    return d.remaining() == 0;
}

} // namespace

std::optional<std::vector<DeviceNotification>>
decode_device_notifications(const CB_NOTIFY_DEVICEID4args& args) {
    std::vector<DeviceNotification> out;
    for (u_int i = 0; i < args.cnda_changes.cnda_changes_len; ++i) {
        if (!decode_change(args.cnda_changes.cnda_changes_val[i], out)) {
            return std::nullopt;
        }
    }
    return out;
}

std::string notify_types_name(uint32_t bits) {
    std::string out;
    if (bits & kNotifyDeviceChange) {
        out += "CHANGE";
    }
    if (bits & kNotifyDeviceDelete) {
        out += out.empty() ? "DELETE" : "|DELETE";
    }
    if (const uint32_t other = bits & ~kKnownTypes) {
        out += (out.empty() ? "0x" : "|0x") + [other] {
            char hex[9];
            std::snprintf(hex, sizeof(hex), "%x", other);
            return std::string(hex);
        }();
    }
    return out.empty() ? "none" : out;
}

std::string DeviceNotification::describe() const {
    std::string out = type == NOTIFY_DEVICEID4_CHANGE ? "CHANGE" : "DELETE";
    out += " " + format_deviceid(deviceid) + " layout type " + std::to_string(layout_type);
    if (type == NOTIFY_DEVICEID4_CHANGE) {
        out += immediate ? " immediate" : " not immediate";
    }
    return out;
}

} // namespace flexfiles::client
