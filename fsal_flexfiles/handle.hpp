// SPDX-License-Identifier: LGPL-3.0-or-later
//
// A FLEXFILES object handle wraps the sub-FSAL's handle of the same object.
// handle.cpp has the namespace operations, file.cpp the open/read/write/lock
// operations, xattrs.cpp the extended attributes: FSAL_NULL's split.
#pragma once

#include "export.hpp"
#include "ganesha/ganesha.hpp"
#include "mds/data_files.hpp"
#include "mds/layout_store.hpp"

#include <memory>
#include <mutex>

namespace flexfiles {

struct Handle : fsal_obj_handle {
    // The sub-FSAL's handle; released with this one.
    fsal_obj_handle* sub = nullptr;
    // The export the handle was made for (it outlives its handles: MDCACHE
    // releases them before the export).
    Export* exp = nullptr;
    // The sub-FSAL's handle key (handle_to_key bytes): the layout store's key.
    mds::ObjectKey key;

    // A regular file's data files, one per mirror: loaded from the layout
    // store on first use and cached. nullptr for anything but a regular file,
    // and for a regular file without data files yet (see ensure in
    // mds/fsal_data_path.hpp). Thread-safe; the map itself is immutable.
    std::shared_ptr<const mds::DataFileMap> data_files();
    // After the map changed in the store (placement, fencing): what later
    // data_files() calls return. nullptr: forget (the file was removed).
    void set_data_files(std::shared_ptr<const mds::DataFileMap> map);

    // Serialises placement for this object (two writers of a file without
    // data files must not both place them).
    std::mutex placement_mu;

    static Handle* of(fsal_obj_handle* obj) noexcept { return static_cast<Handle*>(obj); }
    static const Handle* of(const fsal_obj_handle* obj) noexcept {
        return static_cast<const Handle*>(obj);
    }

private:
    std::mutex map_mu_;
    bool map_loaded_ = false; // guarded by map_mu_
    std::shared_ptr<const mds::DataFileMap> map_;
};

// The sub-FSAL handle inside a FLEXFILES handle; nullptr for nullptr.
inline fsal_obj_handle* sub_of(fsal_obj_handle* obj) noexcept {
    return obj != nullptr ? Handle::of(obj)->sub : nullptr;
}

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
