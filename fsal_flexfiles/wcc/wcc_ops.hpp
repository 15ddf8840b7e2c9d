// SPDX-License-Identifier: LGPL-3.0-or-later
//
// LAYOUT_WCC (RFC 9766) for FLEXFILES: the object method that decodes an ff_layout_wcc4
// body and applies it to the attribute cache, installed into the objects' operation table.
#pragma once

#include "ganesha/ganesha.hpp"

namespace flexfiles {
struct Export;
}

namespace flexfiles::wcc {

// Whether this export implements LAYOUT_WCC (fs_supports(fso_layout_wcc)).
bool export_supports_layout_wcc(const Export* exp) noexcept;

void init_wcc_obj_ops(fsal_obj_ops& ops) noexcept;

} // namespace flexfiles::wcc
