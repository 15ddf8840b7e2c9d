// SPDX-License-Identifier: LGPL-3.0-or-later
//
// LAYOUT_WCC (RFC 9766) for FLEXFILES: the object method that decodes an ff_layout_wcc4
// body and applies it to the attribute cache, installed into the objects' operation table.
#pragma once

#include "ganesha/ganesha.hpp"

#include "mds/data_files.hpp"

namespace flexfiles {
struct Export;
struct Handle;
} // namespace flexfiles

namespace flexfiles::wcc {

// Whether this export implements LAYOUT_WCC (fs_supports(fso_layout_wcc)).
bool export_supports_layout_wcc(const Export* exp) noexcept;

void init_wcc_obj_ops(fsal_obj_ops& ops) noexcept;

// GETATTR of a regular file: handle.cpp's getattrs fills the namespace attributes from the
// sub-FSAL, then this overlays what lives on the data servers (size, space_used, atime,
// mtime, ctime) from the attribute cache, asking the data servers when the cache is too old.
fsal_status_t overlay_data_attrs(Export& exp, Handle& handle, const mds::DataFileMap& map,
                                 fsal_attrlist* attrs) noexcept;

} // namespace flexfiles::wcc
