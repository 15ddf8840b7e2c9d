// SPDX-License-Identifier: LGPL-3.0-or-later
#include "data_path/namespace_object.hpp"

#include "export.hpp"

namespace flexfiles::mds {
namespace {

// An xattr name as the FSAL's xattr calls take it (they do not write to it).
xattrkey4 xattr_key(std::string_view name) {
    xattrkey4 key{};
    key.utf8string_len = static_cast<u_int>(name.size());
    key.utf8string_val = const_cast<char*>(name.data());
    return key;
}

} // namespace

AsMds::AsMds() noexcept {
    if (op_ctx == nullptr)
        return;
    saved_ = op_ctx->creds;
    op_ctx->creds.caller_uid = 0;
    op_ctx->creds.caller_gid = 0;
    op_ctx->creds.caller_glen = 0;
    op_ctx->creds.caller_garray = nullptr;
}

AsMds::~AsMds() {
    if (op_ctx != nullptr)
        op_ctx->creds = saved_;
}

Found get_xattr(Export& exp, fsal_obj_handle* sub, std::string_view name, std::string& value,
                std::string& error, std::size_t max) {
    // Room for a small value first; the largest only for a value that does not fit.
    std::string buf(std::min<std::size_t>(4096, max), '\0');
    xattrkey4 key = xattr_key(name);
    xattrvalue4 out{};
    AsMds as_mds;
    fsal_status_t st;
    for (;;) {
        out.utf8string_len = static_cast<u_int>(buf.size());
        out.utf8string_val = buf.data();
        st = sub_call(&exp, [&] { return sub->obj_ops->getxattrs(sub, &key, &out); });
        if (st.major != ERR_FSAL_XATTR2BIG || buf.size() == max)
            break;
        buf.assign(max, '\0');
    }
    if (st.major == ERR_FSAL_NOXATTR)
        return Found::no;
    if (FSAL_IS_ERROR(st)) {
        error = "reading " + std::string(name) + ": " + msg_fsal_err(st.major);
        return Found::error;
    }
    buf.resize(std::min<std::size_t>(out.utf8string_len, buf.size()));
    value = std::move(buf);
    return Found::yes;
}

fsal_status_t set_xattr(Export& exp, fsal_obj_handle* sub, std::string_view name,
                        std::string_view value, setxattr_option4 how) {
    xattrkey4 key = xattr_key(name);
    xattrvalue4 v{};
    v.utf8string_len = static_cast<u_int>(value.size());
    v.utf8string_val = const_cast<char*>(value.data());
    AsMds as_mds;
    return sub_call(&exp, [&] { return sub->obj_ops->setxattrs(sub, how, &key, &v); });
}

fsal_status_t remove_xattr(Export& exp, fsal_obj_handle* sub, std::string_view name) {
    xattrkey4 key = xattr_key(name);
    AsMds as_mds;
    const fsal_status_t st = sub_call(&exp, [&] { return sub->obj_ops->removexattrs(sub, &key); });
    return st.major == ERR_FSAL_NOXATTR ? fsalstat(ERR_FSAL_NO_ERROR, 0) : st;
}

bool list_xattrs(Export& exp, fsal_obj_handle* sub, std::vector<std::string>& names,
                 std::string& error) {
    nfs_cookie4 cookie = 0;
    bool_t eof = false;
    AsMds as_mds;
    while (!eof) {
        xattrlist4 list{};
        const fsal_status_t st = sub_call(
            &exp, [&] { return sub->obj_ops->listxattrs(sub, 64 * 1024, &cookie, &eof, &list); });
        if (FSAL_IS_ERROR(st)) {
            error = std::string("listing its extended attributes: ") + msg_fsal_err(st.major);
            return false;
        }
        for (count4 i = 0; i < list.xl4_count; i++) {
            names.emplace_back(list.xl4_entries[i].utf8string_val,
                               list.xl4_entries[i].utf8string_len);
            gsh_free(list.xl4_entries[i].utf8string_val);
        }
        gsh_free(list.xl4_entries);
        if (list.xl4_count == 0)
            break;
    }
    return true;
}

bool in_export_context(Export& exp, const std::function<void()>& run) {
    if (op_ctx != nullptr) {
        run();
        return true;
    }
    return ff_gsh_with_export_context(
        exp.export_id, &exp, [](void* arg) { (*static_cast<const std::function<void()>*>(arg))(); },
        const_cast<void*>(static_cast<const void*>(&run)));
}

fsal_status_t with_object(Export& exp, const std::vector<std::uint8_t>& host,
                          const std::function<void(fsal_obj_handle*)>& use) {
    fsal_export* sub_export = exp.sub_export;
    std::vector<std::uint8_t> copy = host; // create_handle may not keep it constant
    gsh_buffdesc desc{copy.data(), copy.size()};
    fsal_obj_handle* sub = nullptr;
    AsMds as_mds;
    // With attributes asked for: FSAL_CEPH makes a handle of the object's type only then.
    fsal_attrlist attrs;
    fsal_prepare_attrs(&attrs, ATTR_TYPE);
    const fsal_status_t st = sub_call(
        &exp, [&] { return sub_export->exp_ops.create_handle(sub_export, &desc, &sub, &attrs); });
    fsal_release_attrs(&attrs);
    if (FSAL_IS_ERROR(st) || sub == nullptr)
        return FSAL_IS_ERROR(st) ? st : fsalstat(ERR_FSAL_STALE, 0);
    use(sub);
    sub_call(&exp, [&] { sub->obj_ops->release(sub); });
    return fsalstat(ERR_FSAL_NO_ERROR, 0);
}

} // namespace flexfiles::mds
