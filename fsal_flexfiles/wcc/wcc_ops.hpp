// SPDX-License-Identifier: LGPL-3.0-or-later
//
// LAYOUT_WCC (RFC 9766) for FLEXFILES and the data attributes of GETATTR: the Ganesha side
// of wcc/. The object method layout_wcc decodes an ff_layout_wcc4 body and applies it to
// the export's attribute cache (wcc/apply.hpp has the rules); overlay_data_attrs puts the
// data files' size, space_used and times into a regular file's GETATTR answer, asking the
// data servers (fallback/ds_getattr.hpp) when the cache is not fresh enough
// (wcc/overlay.hpp has the rules). See wcc/LAYOUT_WCC.md.
#pragma once

#include "ganesha/ganesha.hpp"
#include "mds/data_files.hpp"
#include "wcc/counters.hpp"

namespace flexfiles {
struct Export;
struct Handle;
} // namespace flexfiles

namespace flexfiles::wcc {

// Whether this export implements LAYOUT_WCC (fs_supports(fso_layout_wcc)): a FLEXFILES
// export with data servers, i.e. one that grants flex-files layouts.
bool export_supports_layout_wcc(const Export* exp) noexcept;

// Installs layout_wcc into the objects' operation table.
void init_wcc_obj_ops(fsal_obj_ops& ops) noexcept;

// GETATTR of a regular file: handle.cpp's getattrs fills the namespace attributes from the
// sub-FSAL, then this overlays what lives on the data servers (size, space_used, atime,
// mtime, ctime, and the change attribute) from the attribute cache, asking the data
// servers when the cache is too old, and sets attrs->expire_time_attr so that MDCACHE asks
// again when freshness matters. Never fails the GETATTR and never waits longer than the
// export's DS_Getattr_Deadline: without an answer the last known attributes are served.
fsal_status_t overlay_data_attrs(Export& exp, Handle& handle, const mds::DataFileMap& map,
                                 fsal_attrlist* attrs) noexcept;

// Makes MDCACHE drop its cached attributes of the object (up-call invalidate), so that the
// next GETATTR reaches overlay_data_attrs. For layout/: call it when an RW layout is
// granted (from then on the data servers can change behind the MDS's back). Returns false
// if the up-call failed (logged).
bool invalidate_cached_attrs(Export& exp, fsal_obj_handle* obj) noexcept;

// The module's LAYOUT_WCC / overlay / fallback counters (for logs and dbus).
inline WccStats stats() noexcept {
    return counters().snapshot();
}

} // namespace flexfiles::wcc
