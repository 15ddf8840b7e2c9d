// SPDX-License-Identifier: LGPL-3.0-or-later
//
// Extended attributes, both Ganesha's older by-id/by-name interface and the
// NFSv4.2 xattr operations (RFC 8276): metadata, so the sub-FSAL's. Except the names
// under "flexfiles." (model/map_text.hpp): the MDS keeps a file's data-file map there
// (Map_In_Namespace), so to clients they do not exist and cannot be made or removed.
// (The older interface is 9P's; FSAL_CEPH, the sub-FSAL with xattrs, does not implement it.)
#include "methods.hpp"
#include "model/map_text.hpp"

#include <string_view>

namespace flexfiles {
namespace {

fsal_status_t list_ext_attrs(fsal_obj_handle* obj_hdl, unsigned int cookie,
                             fsal_xattrent* xattrs_tab, unsigned int xattrs_tabsize,
                             unsigned int* nb_returned, int* end_of_list) noexcept {
    fsal_obj_handle* obj = sub_of(obj_hdl);
    return sub_call(current_export(), [&] {
        return obj->obj_ops->list_ext_attrs(obj, cookie, xattrs_tab, xattrs_tabsize, nb_returned,
                                            end_of_list);
    });
}

fsal_status_t getextattr_id_by_name(fsal_obj_handle* obj_hdl, const char* xattr_name,
                                    unsigned int* xattr_id) noexcept {
    fsal_obj_handle* obj = sub_of(obj_hdl);
    return sub_call(current_export(),
                    [&] { return obj->obj_ops->getextattr_id_by_name(obj, xattr_name, xattr_id); });
}

fsal_status_t getextattr_value_by_name(fsal_obj_handle* obj_hdl, const char* xattr_name,
                                       void* buffer_addr, size_t buffer_size,
                                       size_t* output_size) noexcept {
    fsal_obj_handle* obj = sub_of(obj_hdl);
    return sub_call(current_export(), [&] {
        return obj->obj_ops->getextattr_value_by_name(obj, xattr_name, buffer_addr, buffer_size,
                                                      output_size);
    });
}

fsal_status_t getextattr_value_by_id(fsal_obj_handle* obj_hdl, unsigned int xattr_id,
                                     void* buffer_addr, size_t buffer_size,
                                     size_t* output_size) noexcept {
    fsal_obj_handle* obj = sub_of(obj_hdl);
    return sub_call(current_export(), [&] {
        return obj->obj_ops->getextattr_value_by_id(obj, xattr_id, buffer_addr, buffer_size,
                                                    output_size);
    });
}

fsal_status_t setextattr_value(fsal_obj_handle* obj_hdl, const char* xattr_name, void* buffer_addr,
                               size_t buffer_size, int create) noexcept {
    fsal_obj_handle* obj = sub_of(obj_hdl);
    return sub_call(current_export(), [&] {
        return obj->obj_ops->setextattr_value(obj, xattr_name, buffer_addr, buffer_size, create);
    });
}

fsal_status_t setextattr_value_by_id(fsal_obj_handle* obj_hdl, unsigned int xattr_id,
                                     void* buffer_addr, size_t buffer_size) noexcept {
    fsal_obj_handle* obj = sub_of(obj_hdl);
    return sub_call(current_export(), [&] {
        return obj->obj_ops->setextattr_value_by_id(obj, xattr_id, buffer_addr, buffer_size);
    });
}

fsal_status_t remove_extattr_by_id(fsal_obj_handle* obj_hdl, unsigned int xattr_id) noexcept {
    fsal_obj_handle* obj = sub_of(obj_hdl);
    return sub_call(current_export(),
                    [&] { return obj->obj_ops->remove_extattr_by_id(obj, xattr_id); });
}

fsal_status_t remove_extattr_by_name(fsal_obj_handle* obj_hdl, const char* xattr_name) noexcept {
    fsal_obj_handle* obj = sub_of(obj_hdl);
    return sub_call(current_export(),
                    [&] { return obj->obj_ops->remove_extattr_by_name(obj, xattr_name); });
}

bool reserved(const xattrkey4* name) noexcept {
    return name != nullptr && name->utf8string_val != nullptr &&
           mds::is_reserved_xattr_name(
               std::string_view(name->utf8string_val, name->utf8string_len));
}

fsal_status_t getxattrs(fsal_obj_handle* obj_hdl, xattrkey4* xa_name,
                        xattrvalue4* xa_value) noexcept {
    if (reserved(xa_name))
        return fsalstat(ERR_FSAL_NOXATTR, 0);
    fsal_obj_handle* obj = sub_of(obj_hdl);
    return sub_call(current_export(),
                    [&] { return obj->obj_ops->getxattrs(obj, xa_name, xa_value); });
}

fsal_status_t setxattrs(fsal_obj_handle* obj_hdl, setxattr_option4 option, xattrkey4* xa_name,
                        xattrvalue4* xa_value) noexcept {
    if (reserved(xa_name))
        return fsalstat(ERR_FSAL_PERM, 0);
    fsal_obj_handle* obj = sub_of(obj_hdl);
    return sub_call(current_export(),
                    [&] { return obj->obj_ops->setxattrs(obj, option, xa_name, xa_value); });
}

fsal_status_t removexattrs(fsal_obj_handle* obj_hdl, xattrkey4* xa_name) noexcept {
    if (reserved(xa_name))
        return fsalstat(ERR_FSAL_PERM, 0);
    fsal_obj_handle* obj = sub_of(obj_hdl);
    return sub_call(current_export(), [&] { return obj->obj_ops->removexattrs(obj, xa_name); });
}

fsal_status_t listxattrs(fsal_obj_handle* obj_hdl, count4 la_maxcount, nfs_cookie4* la_cookie,
                         bool_t* lr_eof, xattrlist4* lr_names) noexcept {
    fsal_obj_handle* obj = sub_of(obj_hdl);
    const fsal_status_t st = sub_call(current_export(), [&] {
        return obj->obj_ops->listxattrs(obj, la_maxcount, la_cookie, lr_eof, lr_names);
    });
    if (FSAL_IS_ERROR(st) || lr_names == nullptr || lr_names->xl4_entries == nullptr)
        return st;
    // Drop the reserved names (each entry's string is the caller's to free: free ours).
    count4 kept = 0;
    for (count4 i = 0; i < lr_names->xl4_count; i++) {
        if (reserved(&lr_names->xl4_entries[i]))
            gsh_free(lr_names->xl4_entries[i].utf8string_val);
        else
            lr_names->xl4_entries[kept++] = lr_names->xl4_entries[i];
    }
    lr_names->xl4_count = kept;
    return st;
}

} // namespace

void init_xattr_ops(fsal_obj_ops& ops) noexcept {
    ops.list_ext_attrs = list_ext_attrs;
    ops.getextattr_id_by_name = getextattr_id_by_name;
    ops.getextattr_value_by_name = getextattr_value_by_name;
    ops.getextattr_value_by_id = getextattr_value_by_id;
    ops.setextattr_value = setextattr_value;
    ops.setextattr_value_by_id = setextattr_value_by_id;
    ops.remove_extattr_by_id = remove_extattr_by_id;
    ops.remove_extattr_by_name = remove_extattr_by_name;
    ops.getxattrs = getxattrs;
    ops.setxattrs = setxattrs;
    ops.removexattrs = removexattrs;
    ops.listxattrs = listxattrs;
}

} // namespace flexfiles
