// SPDX-License-Identifier: LGPL-3.0-or-later
//
// The ff_layout_wcc4 body (RFC 9766 section 3.7) read in place: one pass over the bytes
// LAYOUT_WCC carries, straight into the entries the attribute cache's rules take
// (cache/wcc_body.hpp), each pointing into those bytes. No copy, no heap: the entries take
// their memory from the caller's resource (the operation's stack arena).
//
// It is the operation's hot path (issue #16: a LAYOUT_WCC at a few microseconds). The XDR
// routines of protocols/ (ff_layout_wcc4_decode, Ganesha's ntirpc decoders, which allocate
// every array and opaque) stay the reference: same bounds, same answers, and the fuzz
// target layout_wcc_body checks the two agree on every input (wcc_entries.hpp flattens the
// reference's result for that).
#pragma once

#include "cache/wcc_body.hpp"

#include <cstdint>
#include <memory_resource>
#include <optional>
#include <span>

namespace flexfiles::wcc {

/// The body's entries in body order, or nullopt when the bytes are not exactly one
/// ff_layout_wcc4 within the bounds of protocols/include/nfs4_layout_wcc_xdr.h (bad XDR, a
/// count or length over its bound, or trailing bytes): where ff_layout_wcc4_decode fails.
/// Like it, bitmap words past the third are read and dropped and pad bytes are not looked
/// at. The entries point into `body`, which must outlive them.
std::optional<std::pmr::vector<BodyEntry>>
read_wcc_body(std::span<const std::uint8_t> body,
              std::pmr::memory_resource* mr = std::pmr::get_default_resource());

} // namespace flexfiles::wcc
