// SPDX-License-Identifier: LGPL-3.0-or-later
//
// What the attribute-cache tests report: all eight attributes of RFC 9766 Table 1, as an
// NFSv3 WRITE reply carries them.
#pragma once

#include "cache/attr_types.hpp"

#include <cstdint>

namespace flexfiles::wcc::test {

inline DsAttrs full(std::uint64_t size, std::int64_t ctime, std::int64_t mtime, std::int64_t atime,
                    std::uint64_t used = 4096, std::uint32_t uid = 7000, std::uint32_t gid = 7000,
                    std::uint32_t mode = 0100640) {
    DsAttrs a;
    a.size = size;
    a.space_used = used;
    a.ctime = NfsTime{ctime};
    a.mtime = NfsTime{mtime};
    a.atime = NfsTime{atime};
    a.uid = uid;
    a.gid = gid;
    a.mode = mode;
    a.valid = kAttrsAll;
    return a;
}

} // namespace flexfiles::wcc::test
