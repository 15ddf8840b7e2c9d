// SPDX-License-Identifier: LGPL-3.0-or-later
//
// Bytes as lower-case hex, two digits a byte: how filehandles, deviceids and the layout
// map's text form (map_text.hpp) spell opaque bytes in logs, messages and files.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace flexfiles {

inline std::string to_hex(std::span<const std::uint8_t> bytes) {
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string out;
    out.reserve(2 * bytes.size());
    for (const std::uint8_t b : bytes) {
        out.push_back(kDigits[b >> 4]);
        out.push_back(kDigits[b & 0xf]);
    }
    return out;
}

} // namespace flexfiles
