// SPDX-License-Identifier: LGPL-3.0-or-later
//
// The pNFS metadata-server side of FLEXFILES (RFC 8435): the operations Ganesha calls for
// LAYOUTGET, LAYOUTRETURN, LAYOUTCOMMIT, GETDEVICEINFO and GETDEVICELIST, installed into
// the module's, the export's and the objects' operation tables.
#pragma once

#include "ganesha/ganesha.hpp"

namespace flexfiles {
struct Export;
}

namespace flexfiles::layout {

// Whether this export hands out flex-files layouts (fs_supports(fso_pnfs_mds_supported)).
bool export_grants_layouts(const Export* exp) noexcept;

void init_layout_module_ops(fsal_ops& ops) noexcept;
void init_layout_export_ops(export_ops& ops) noexcept;
void init_layout_obj_ops(fsal_obj_ops& ops) noexcept;

} // namespace flexfiles::layout
