// SPDX-License-Identifier: LGPL-3.0-or-later
//
// A FLEXFILES object handle wraps the sub-FSAL's handle of the same object.
// handle.cpp has the namespace operations, file.cpp the open/read/write/lock
// operations, xattrs.cpp the extended attributes: FSAL_NULL's split.
#pragma once

#include "export.hpp"
#include "ganesha/ganesha.hpp"

namespace flexfiles {

struct Handle : fsal_obj_handle {
    // The sub-FSAL's handle; released with this one.
    fsal_obj_handle* sub = nullptr;

    // Next to come here: the file's data files, one per mirror (placement at
    // create), and its layout state (layout/).

    static Handle* of(fsal_obj_handle* obj) noexcept { return static_cast<Handle*>(obj); }
    static const Handle* of(const fsal_obj_handle* obj) noexcept {
        return static_cast<const Handle*>(obj);
    }
};

// The sub-FSAL handle inside a FLEXFILES handle; nullptr for nullptr.
inline fsal_obj_handle* sub_of(fsal_obj_handle* obj) noexcept {
    return obj != nullptr ? Handle::of(obj)->sub : nullptr;
}

// Wraps a handle the sub-FSAL returned. On success *out is a new FLEXFILES
// handle owning `sub`; on error *out is nullptr and a handle the sub-FSAL
// returned anyway is released. Returns `status` unless wrapping failed.
fsal_status_t adopt(Export* exp, fsal_status_t status, fsal_obj_handle* sub,
                    fsal_obj_handle** out) noexcept;

// Fill an object-operation table: everything (handle.cpp), which calls the
// two others for their part.
void init_handle_ops(fsal_obj_ops& ops) noexcept;
void init_file_ops(fsal_obj_ops& ops) noexcept;
void init_xattr_ops(fsal_obj_ops& ops) noexcept;

} // namespace flexfiles
