// SPDX-License-Identifier: LGPL-3.0-or-later
//
// Attributes that encode one version number in every field, for the cache's concurrency
// tests: a reader that saw fields of two different updates (a torn read) is caught at once.
#pragma once

#include "cache/attr_cache.hpp"

#include <cstdint>

namespace versioned {

using flexfiles::wcc::DsAttrs;

// Update n: size n, space_used 3n, mtime n * 1000 + 7, ctime and atime n.
inline DsAttrs encode(std::uint64_t n) {
    DsAttrs a;
    a.size = n;
    a.space_used = 3 * n;
    a.mtime = flexfiles::wcc::NfsTime{static_cast<std::int64_t>(n * 1000 + 7)};
    a.ctime = flexfiles::wcc::NfsTime{static_cast<std::int64_t>(n)};
    a.atime = flexfiles::wcc::NfsTime{static_cast<std::int64_t>(n)};
    a.valid = flexfiles::wcc::kAttrsAll;
    return a;
}

// Size, mtime and ctime come from one update (a merged view's too: they are one record's).
inline bool consistent(const DsAttrs& a) {
    return a.mtime.ns == static_cast<std::int64_t>(a.size * 1000 + 7) &&
           a.ctime.ns == static_cast<std::int64_t>(a.size);
}

} // namespace versioned
