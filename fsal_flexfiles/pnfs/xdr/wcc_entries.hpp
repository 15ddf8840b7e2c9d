// SPDX-License-Identifier: LGPL-3.0-or-later
//
// An ff_layout_wcc4 body (RFC 9766 section 3.7) from its bytes to the entries the attribute
// cache's rules take (cache/wcc_body.hpp): decoded by protocols/'s ff_layout_wcc4_decode
// (Ganesha's XDR routines), then flattened into one BodyEntry per ff_data_server_wcc4
// pointing into the decoded body. The reference that the FSAL's in-place reader
// (wcc_body_reader.hpp) is checked against, in its unit test and the fuzz target of the body.
#pragma once

extern "C" {
#include "config.h"
#include "nfs4_layout_wcc_xdr.h"
}

#include "cache/wcc_body.hpp"

#include <cstddef>
#include <memory_resource>
#include <vector>

namespace flexfiles::wcc {

/// A decoded body, freed with it (ff_layout_wcc4_free); entries point into it.
struct DecodedBody {
    ff_layout_wcc4 body{};
    DecodedBody() = default;
    DecodedBody(const DecodedBody&) = delete;
    DecodedBody& operator=(const DecodedBody&) = delete;
    ~DecodedBody() { ff_layout_wcc4_free(&body); }

    /// False for bad XDR, a bound exceeded or trailing bytes (nothing stays allocated).
    bool decode(const char* bytes, std::size_t len);
};

/// One entry per ff_data_server_wcc4, mirror by mirror, in body order; the vectors take
/// their memory from `mr`.
std::pmr::vector<BodyEntry>
entries_of(const ff_layout_wcc4& body,
           std::pmr::memory_resource* mr = std::pmr::get_default_resource());

} // namespace flexfiles::wcc
