// SPDX-License-Identifier: LGPL-3.0-or-later
//
// The C enums of the protocol headers (Ganesha's nfsstat4, nfs_opnum4, libnfs's nfsstat3,
// ftype3, stable_how...) hold whatever 32-bit value a C decoder stored from the wire.
// Loading or casting an out-of-range value as the enum type is undefined behaviour in C++
// (UBSan reports it), so C++ code reads and writes such fields as their bits.
#pragma once

#include <cstdint>
#include <cstring>

namespace flexfiles {

template <typename Enum> std::uint32_t enum_bits(const Enum& e) {
    static_assert(sizeof(Enum) == sizeof(std::uint32_t));
    std::uint32_t v = 0;
    std::memcpy(&v, &e, sizeof(v));
    return v;
}

template <typename Enum> void set_enum_bits(Enum& e, std::uint32_t v) {
    static_assert(sizeof(Enum) == sizeof(std::uint32_t));
    std::memcpy(&e, &v, sizeof(v));
}

} // namespace flexfiles
