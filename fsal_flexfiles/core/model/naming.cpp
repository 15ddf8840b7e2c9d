// SPDX-License-Identifier: LGPL-3.0-or-later
#include "model/naming.hpp"

#include <cstdio>

namespace flexfiles::fleet {

std::string data_file_name(std::uint64_t fileid, std::uint32_t mirror) {
    char buf[48];
    int n = std::snprintf(buf, sizeof(buf), "ff-%016llx-m%u",
                          static_cast<unsigned long long>(fileid), static_cast<unsigned>(mirror));
    return std::string(buf, static_cast<std::size_t>(n));
}

std::optional<DataFileName> parse_data_file_name(std::string_view name) noexcept {
    // "ff-" + 16 hex + "-m" + 1..10 digits
    if (name.size() < 3 + 16 + 2 + 1 || name.size() > 3 + 16 + 2 + 10)
        return std::nullopt;
    if (name.substr(0, 3) != "ff-" || name.substr(19, 2) != "-m")
        return std::nullopt;
    DataFileName out;
    for (char c : name.substr(3, 16)) {
        unsigned v;
        if (c >= '0' && c <= '9')
            v = static_cast<unsigned>(c - '0');
        else if (c >= 'a' && c <= 'f')
            v = static_cast<unsigned>(c - 'a' + 10);
        else
            return std::nullopt;
        out.fileid = (out.fileid << 4) | v;
    }
    auto digits = name.substr(21);
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
    out.mirror = static_cast<std::uint32_t>(m);
    return out;
}

} // namespace flexfiles::fleet
