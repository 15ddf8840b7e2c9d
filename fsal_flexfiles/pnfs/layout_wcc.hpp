// SPDX-License-Identifier: LGPL-3.0-or-later
//
// LAYOUT_WCC (RFC 9766) for FLEXFILES: the layout_wcc object method (pnfs/layout_wcc.cpp)
// decodes an ff_layout_wcc4 body and applies it to the export's attribute cache
// (core/cache/wcc_apply.hpp has the rules). See LAYOUT_WCC.md.
#pragma once

#include "ganesha/ganesha.hpp"

namespace flexfiles {
struct Export;
} // namespace flexfiles

namespace flexfiles::wcc {

// Whether this export implements LAYOUT_WCC (fs_supports(fso_layout_wcc)): a FLEXFILES
// export with data servers, i.e. one that grants flex-files layouts.
bool export_supports_layout_wcc(const Export* exp) noexcept;

// Installs layout_wcc into the objects' operation table.
void init_wcc_obj_ops(fsal_obj_ops& ops) noexcept;

} // namespace flexfiles::wcc
