// SPDX-License-Identifier: LGPL-3.0-or-later
//
// What the FSAL's own files share (module.cpp, export.cpp, handle.cpp, file.cpp,
// xattrs.cpp; FSAL_NULL's nullfs_methods.h): the module, the methods one file installs
// for another, and the helpers that wrap the sub-FSAL's handles. FLEXFILES is a stacking
// FSAL: each export sits on a sub-FSAL (VFS, say) that holds the metadata namespace, and
// hands clients flexible-file layouts naming NFSv3 data servers for the file data.
// The types the rest of the FSAL layer sees are in export.hpp and handle.hpp.
#pragma once

#include "export.hpp"
#include "ganesha/ganesha.hpp"
#include "handle.hpp"

namespace flexfiles {

// Ganesha's fsal_module plus the object-operation table that every handle of
// every FLEXFILES export points at.
struct Module : fsal_module {
    fsal_obj_ops handle_ops;
};

// Zero-initialised when the library is mapped (no C++ constructor runs for it)
// and filled in by the module constructor, which may run before this
// library's C++ static initialisation (module.cpp says why).
extern Module the_module;

// The module's export methods (export.cpp).
fsal_status_t create_export(fsal_module* fsal_hdl, void* parse_node, config_error_type* err_type,
                            const fsal_up_vector* up_ops) noexcept;
fsal_status_t update_export(fsal_module* fsal_hdl, void* parse_node, config_error_type* err_type,
                            fsal_export* original, fsal_module* updated_super) noexcept;

// Wraps a handle the sub-FSAL returned. On success *out is a new FLEXFILES
// handle owning `sub`; on error *out is nullptr and a handle the sub-FSAL
// returned anyway is released. Returns `status` unless wrapping failed.
// `attrs`, when given, are the attributes the sub-FSAL returned with it: for a
// regular file they get the data files' on top (overlay_file_attrs).
fsal_status_t adopt(Export* exp, fsal_status_t status, fsal_obj_handle* sub, fsal_obj_handle** out,
                    fsal_attrlist* attrs = nullptr) noexcept;

// Attributes the sub-FSAL returned for a regular file describe its empty
// namespace object: puts size, space_used and times of its data files on top
// (wcc::overlay_data_attrs, as getattrs does), so that what MDCACHE caches
// from a lookup, readdir or open is right and expires with WCC_Max_Age. Does
// nothing for other objects, files without data files, or attributes with
// ATTR_RDATTR_ERR.
void overlay_file_attrs(Export* exp, Handle& handle, fsal_attrlist* attrs) noexcept;

// Fill an object-operation table: everything (handle.cpp), which calls the
// two others for their part.
void init_handle_ops(fsal_obj_ops& ops) noexcept;
void init_file_ops(fsal_obj_ops& ops) noexcept;
void init_xattr_ops(fsal_obj_ops& ops) noexcept;

} // namespace flexfiles
