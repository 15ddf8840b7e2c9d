// SPDX-License-Identifier: LGPL-3.0-or-later
#include "model/naming.hpp"

#include <cstdio>

namespace flexfiles::fleet {
namespace {

constexpr std::size_t kHex = 16;

// "m" + 1..10 decimal digits, no leading zero, at most UINT32_MAX.
std::optional<std::uint32_t> parse_mirror(std::string_view s) noexcept {
    if (s.size() < 2 || s.size() > 11 || s[0] != 'm')
        return std::nullopt;
    const auto digits = s.substr(1);
    if (digits.size() > 1 && digits[0] == '0')
        return std::nullopt;
    std::uint64_t m = 0;
    for (char c : digits) {
        if (c < '0' || c > '9')
            return std::nullopt;
        m = m * 10 + static_cast<unsigned>(c - '0');
    }
    if (m > UINT32_MAX)
        return std::nullopt;
    return static_cast<std::uint32_t>(m);
}

} // namespace

std::string identity_hex(std::uint64_t identity) {
    char buf[kHex + 1];
    std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(identity));
    return std::string(buf, kHex);
}

std::optional<std::uint64_t> parse_identity_hex(std::string_view text) noexcept {
    if (text.size() != kHex)
        return std::nullopt;
    std::uint64_t out = 0;
    for (char c : text) {
        unsigned v;
        if (c >= '0' && c <= '9')
            v = static_cast<unsigned>(c - '0');
        else if (c >= 'a' && c <= 'f')
            v = static_cast<unsigned>(c - 'a' + 10);
        else
            return std::nullopt;
        out = (out << 4) | v;
    }
    return out;
}

std::string data_file_name(std::uint64_t identity, std::uint64_t fileid, std::uint32_t mirror) {
    return "ff-" + identity_hex(identity) + "-" + identity_hex(fileid) + "-m" +
           std::to_string(mirror);
}

std::string legacy_data_file_name(std::uint64_t fileid, std::uint32_t mirror) {
    return "ff-" + identity_hex(fileid) + "-m" + std::to_string(mirror);
}

std::optional<DataFileName> parse_data_file_name(std::string_view name) noexcept {
    // "ff-" HEX16 "-m" MIRROR (old), or "ff-" HEX16 "-" HEX16 "-m" MIRROR. The two differ at
    // the character after the first "HEX16-": 'm' is not a hex digit.
    if (name.size() < 3 + kHex + 1 || name.substr(0, 3) != "ff-" || name[3 + kHex] != '-')
        return std::nullopt;
    const auto first = parse_identity_hex(name.substr(3, kHex));
    if (!first)
        return std::nullopt;
    const auto rest = name.substr(3 + kHex + 1);
    DataFileName out;
    if (!rest.empty() && rest[0] == 'm') {
        out.fileid = *first;
    } else {
        if (rest.size() < kHex + 1 || rest[kHex] != '-')
            return std::nullopt;
        const auto fileid = parse_identity_hex(rest.substr(0, kHex));
        if (!fileid)
            return std::nullopt;
        out.identity = *first;
        out.fileid = *fileid;
    }
    const auto mirror = parse_mirror(out.identity ? rest.substr(kHex + 1) : rest);
    if (!mirror)
        return std::nullopt;
    out.mirror = *mirror;
    return out;
}

} // namespace flexfiles::fleet
