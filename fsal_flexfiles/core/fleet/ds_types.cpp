// SPDX-License-Identifier: LGPL-3.0-or-later
#include "fleet/ds_types.hpp"

#include <cstring>

namespace flexfiles::fleet {

std::optional<DsFh> DsFh::from_bytes(const void* bytes, std::size_t size) {
    if (bytes == nullptr || size == 0 || size > kMaxSize)
        return std::nullopt;
    DsFh fh;
    fh.len = static_cast<std::uint8_t>(size);
    std::memcpy(fh.data.data(), bytes, size);
    return fh;
}

std::string DsFh::hex() const {
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string s;
    s.reserve(2 * len);
    for (std::size_t i = 0; i < len; ++i) {
        s.push_back(kDigits[data[i] >> 4]);
        s.push_back(kDigits[data[i] & 0xf]);
    }
    return s;
}

std::string_view to_string(DsErrc code) {
    switch (code) {
    case DsErrc::ok:
        return "ok";
    case DsErrc::nfs:
        return "nfs";
    case DsErrc::timeout:
        return "timeout";
    case DsErrc::unavailable:
        return "unavailable";
    case DsErrc::disconnected:
        return "disconnected";
    case DsErrc::rpc:
        return "rpc";
    case DsErrc::invalid_argument:
        return "invalid_argument";
    case DsErrc::shutdown:
        return "shutdown";
    case DsErrc::not_found:
        return "not_found";
    case DsErrc::exists:
        return "exists";
    case DsErrc::too_few_servers:
        return "too_few_servers";
    case DsErrc::servers_unavailable:
        return "servers_unavailable";
    }
    return "?";
}

} // namespace flexfiles::fleet
