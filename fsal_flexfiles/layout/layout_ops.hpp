// SPDX-License-Identifier: LGPL-3.0-or-later
//
// The pNFS metadata-server side of FLEXFILES (RFC 8435): the operations Ganesha calls for
// LAYOUTGET, LAYOUTRETURN, LAYOUTCOMMIT, GETDEVICEINFO and GETDEVICELIST, installed into
// the module's, the export's and the objects' operation tables.
#pragma once

#include "ganesha/ganesha.hpp"

namespace flexfiles {
struct Export;
struct Handle;
} // namespace flexfiles

namespace flexfiles::layout {

// Whether this export hands out flex-files layouts (fs_supports(fso_pnfs_mds_supported)).
bool export_grants_layouts(const Export* exp) noexcept;

void init_layout_module_ops(fsal_ops& ops) noexcept;
void init_layout_export_ops(export_ops& ops) noexcept;
void init_layout_obj_ops(fsal_obj_ops& ops) noexcept;

// file.cpp's open2 calls this after a successful open of a regular file: an open that
// conflicts with another client's layout recalls that layout and fences its data files.
void on_open(Export& exp, Handle& handle, struct state_t* open_state,
             fsal_openflags_t openflags) noexcept;

} // namespace flexfiles::layout
