// SPDX-License-Identifier: LGPL-3.0-or-later
//
// FLEXFILES object handles and their namespace operations (lookup, create,
// readdir, rename, attributes, ...). Each one calls the sub-FSAL with the
// sub-FSAL's handles under the sub-FSAL's export, and wraps the handles it
// returns.
#include "handle.hpp"

#include "data_path/data_path.hpp"
#include "methods.hpp"
#include "pnfs/getattr_overlay.hpp"
#include "pnfs/layout_ops.hpp"
#include "pnfs/layout_wcc.hpp"

#include <cinttypes>

namespace flexfiles {

namespace {

// The sub-FSAL's handle key of `sub` (the layout store's key), copied.
mds::ObjectKey key_of(Export* exp, fsal_obj_handle* sub) noexcept {
    gsh_buffdesc desc{};
    sub_call(exp, [&] { sub->obj_ops->handle_to_key(sub, &desc); });
    const auto* bytes = static_cast<const std::uint8_t*>(desc.addr);
    return bytes == nullptr ? mds::ObjectKey() : mds::ObjectKey(bytes, bytes + desc.len);
}

} // namespace

mds::StoreResult<std::optional<mds::DataFileMap>> Handle::load_map_logged() {
    auto got = mds::load_map(*exp, sub, key);
    if (!got.ok()) {
        mds::DataPathCounters::add(exp->counters().store_errors);
        LogCrit(COMPONENT_FSAL, "%s: fileid %" PRIu64 ": cannot read its data files: %s",
                exp->label().c_str(), fileid, got.status.error.c_str());
    }
    return got;
}

std::shared_ptr<const mds::DataFileMap> Handle::data_files() {
    if (type != REGULAR_FILE || exp == nullptr)
        return nullptr;
    if (map_loaded_.load(std::memory_order_acquire))
        return map_.get();
    std::lock_guard lk(load_mu_);
    if (map_loaded_.load(std::memory_order_relaxed))
        return map_.get();
    auto got = load_map_logged();
    if (!got.ok())
        return nullptr; // not cached: the next call asks the store again
    if (got.value)
        map_.publish(std::make_shared<const mds::DataFileMap>(std::move(*got.value)));
    else if (mds::map_in_namespace(*exp))
        return nullptr; // not cached: another MDS of the namespace may place it any time
    map_loaded_.store(true, std::memory_order_release);
    return map_.get();
}

std::shared_ptr<const mds::DataFileMap> Handle::current_data_files() {
    if (type != REGULAR_FILE || exp == nullptr || !mds::map_in_namespace(*exp))
        return data_files();
    // One getxattr: CephFS keeps the attribute cached under its capabilities, so this is
    // a round trip only when another client (MDS) changed it.
    auto got = load_map_logged();
    if (!got.ok())
        return nullptr;
    if (!got.value)
        return nullptr;
    // Mirrors another MDS marked stale are left out here too.
    mds::adopt_namespace_stale_marks(*exp, *this, *got.value);
    const std::shared_ptr<const mds::DataFileMap> cached = data_files();
    if (cached && *cached == *got.value)
        return cached;
    auto fresh = std::make_shared<const mds::DataFileMap>(std::move(*got.value));
    set_data_files(fresh);
    return fresh;
}

void Handle::set_data_files(std::shared_ptr<const mds::DataFileMap> map) {
    std::lock_guard lk(load_mu_);
    map_.publish(std::move(map));
    map_loaded_.store(true, std::memory_order_release);
}

void overlay_file_attrs(Export* exp, Handle& handle, fsal_attrlist* attrs) noexcept {
    if (exp == nullptr || attrs == nullptr || handle.type != REGULAR_FILE ||
        (attrs->valid_mask & ATTR_RDATTR_ERR) != 0)
        return;
    const std::shared_ptr<const mds::DataFileMap> map = handle.data_files();
    if (!map)
        return;
    ExportSwitch in_flexfiles(exp);
    // Errors are the overlay's to log; the namespace attributes stand.
    (void)wcc::overlay_data_attrs(*exp, handle, *map, attrs);
}

fsal_status_t adopt(Export* exp, fsal_status_t status, fsal_obj_handle* sub, fsal_obj_handle** out,
                    fsal_attrlist* attrs) noexcept {
    *out = nullptr;
    if (FSAL_IS_ERROR(status) || sub == nullptr || exp == nullptr) {
        if (sub != nullptr) // a sub-FSAL that returned a handle with its error
            sub_call(exp, [&] { sub->obj_ops->release(sub); });
        if (!FSAL_IS_ERROR(status)) {
            LogCrit(COMPONENT_FSAL, "FLEXFILES: %s",
                    exp == nullptr ? "no FLEXFILES export in op_ctx"
                                   : "the sub-FSAL returned no handle");
            return fsalstat(ERR_FSAL_SERVERFAULT, 0);
        }
        return status;
    }

    auto* handle = new Handle();
    ff_gsh_obj_handle_init(handle, exp, sub->type);
    handle->obj_ops = &the_module.handle_ops;
    handle->sub = sub;
    handle->fsid = sub->fsid;
    handle->fileid = sub->fileid;
    handle->fs = sub->fs;
    handle->state_hdl = sub->state_hdl;
    handle->exp = exp;
    handle->key = key_of(exp, sub);
    if (handle->type == REGULAR_FILE) {
        exp->layouts().grants.mirror_unseen(handle->fileid, handle->writes_unseen);
        if (exp->cache_)
            exp->cache_->attach(handle->fileid, handle->cache_anchor);
    }
    *out = handle;
    overlay_file_attrs(exp, *handle, attrs);
    return status;
}

namespace {

// ---------------------------------------------------------------------------
// Lifetime

void release(fsal_obj_handle* obj_hdl) noexcept {
    Handle* handle = Handle::of(obj_hdl);
    fsal_obj_handle* sub = handle->sub;
    // current_export() is null when Ganesha releases leftover handles at
    // shutdown; the sub-FSAL is then called as it is, like MDCACHE does.
    sub_call(current_export(), [&] { sub->obj_ops->release(sub); });
    ff_gsh_obj_handle_fini(handle);
    if (handle->type == REGULAR_FILE && handle->exp != nullptr && handle->exp->cache_) {
        // The cache's writers may have read the anchor's address in a snapshot: the handle
        // goes once every read section open now has ended.
        handle->exp->cache_->detach(handle->fileid, handle->cache_anchor);
        wcc::release_after_grace_period(std::shared_ptr<const void>(
            handle, [](const void* h) { delete static_cast<const Handle*>(h); }));
        return;
    }
    delete handle;
}

fsal_status_t merge(fsal_obj_handle* orig_hdl, fsal_obj_handle* dupe_hdl) noexcept {
    fsal_obj_handle* orig = sub_of(orig_hdl);
    return sub_call(current_export(), [&] { return orig->obj_ops->merge(orig, sub_of(dupe_hdl)); });
}

// ---------------------------------------------------------------------------
// Names in directories

fsal_status_t lookup(fsal_obj_handle* dir_hdl, const char* path, fsal_obj_handle** handle,
                     fsal_attrlist* attrs_out) noexcept {
    Export* exp = current_export();
    fsal_obj_handle* dir = sub_of(dir_hdl);
    fsal_obj_handle* sub_handle = nullptr;
    fsal_status_t status =
        sub_call(exp, [&] { return dir->obj_ops->lookup(dir, path, &sub_handle, attrs_out); });
    return adopt(exp, status, sub_handle, handle, attrs_out);
}

// Readdir hands each entry to the layer above with a FLEXFILES handle, under
// the FLEXFILES export, then returns to the sub-FSAL's export for the next.
struct ReaddirState {
    Export* exp;
    fsal_readdir_cb upper_cb;
    void* upper_state;
};

enum fsal_dir_result readdir_entry(const char* name, fsal_obj_handle* sub_handle,
                                   fsal_attrlist* attrs, void* dir_state,
                                   fsal_cookie_t cookie) noexcept {
    auto* state = static_cast<ReaddirState*>(dir_state);
    fsal_obj_handle* handle = nullptr;
    if (FSAL_IS_ERROR(
            adopt(state->exp, fsalstat(ERR_FSAL_NO_ERROR, 0), sub_handle, &handle, attrs)))
        return DIR_TERMINATE;
    ExportSwitch to_upper(state->exp);
    return state->upper_cb(name, handle, attrs, state->upper_state, cookie);
}

fsal_status_t readdir(fsal_obj_handle* dir_hdl, fsal_cookie_t* whence, void* dir_state,
                      fsal_readdir_cb cb, attrmask_t attrmask, bool* eof) noexcept {
    Export* exp = current_export();
    fsal_obj_handle* dir = sub_of(dir_hdl);
    ReaddirState state{exp, cb, dir_state};
    return sub_call(exp, [&] {
        return dir->obj_ops->readdir(dir, whence, &state, readdir_entry, attrmask, eof);
    });
}

fsal_cookie_t compute_readdir_cookie(fsal_obj_handle* parent, const char* name) noexcept {
    fsal_obj_handle* dir = sub_of(parent);
    return sub_call(current_export(),
                    [&] { return dir->obj_ops->compute_readdir_cookie(dir, name); });
}

int dirent_cmp(fsal_obj_handle* parent, const char* name1, fsal_cookie_t cookie1, const char* name2,
               fsal_cookie_t cookie2) noexcept {
    fsal_obj_handle* dir = sub_of(parent);
    return sub_call(current_export(),
                    [&] { return dir->obj_ops->dirent_cmp(dir, name1, cookie1, name2, cookie2); });
}

// ---------------------------------------------------------------------------
// Creating and removing names. Regular files are created by open2 (file.cpp);
// that is where data files will be placed on the data servers.

fsal_status_t mkdir(fsal_obj_handle* dir_hdl, const char* name, fsal_attrlist* attrs_in,
                    fsal_obj_handle** new_obj, fsal_attrlist* attrs_out) noexcept {
    Export* exp = current_export();
    fsal_obj_handle* dir = sub_of(dir_hdl);
    fsal_obj_handle* sub_handle = nullptr;
    fsal_status_t status = sub_call(
        exp, [&] { return dir->obj_ops->mkdir(dir, name, attrs_in, &sub_handle, attrs_out); });
    return adopt(exp, status, sub_handle, new_obj);
}

fsal_status_t mknode(fsal_obj_handle* dir_hdl, const char* name, object_file_type_t nodetype,
                     fsal_attrlist* attrs_in, fsal_obj_handle** new_obj,
                     fsal_attrlist* attrs_out) noexcept {
    Export* exp = current_export();
    fsal_obj_handle* dir = sub_of(dir_hdl);
    fsal_obj_handle* sub_handle = nullptr;
    fsal_status_t status = sub_call(exp, [&] {
        return dir->obj_ops->mknode(dir, name, nodetype, attrs_in, &sub_handle, attrs_out);
    });
    return adopt(exp, status, sub_handle, new_obj);
}

fsal_status_t symlink(fsal_obj_handle* dir_hdl, const char* name, const char* link_path,
                      fsal_attrlist* attrs_in, fsal_obj_handle** new_obj,
                      fsal_attrlist* attrs_out) noexcept {
    Export* exp = current_export();
    fsal_obj_handle* dir = sub_of(dir_hdl);
    fsal_obj_handle* sub_handle = nullptr;
    fsal_status_t status = sub_call(exp, [&] {
        return dir->obj_ops->symlink(dir, name, link_path, attrs_in, &sub_handle, attrs_out);
    });
    return adopt(exp, status, sub_handle, new_obj);
}

fsal_status_t readlink(fsal_obj_handle* obj_hdl, gsh_buffdesc* link_content,
                       bool refresh) noexcept {
    fsal_obj_handle* obj = sub_of(obj_hdl);
    return sub_call(current_export(),
                    [&] { return obj->obj_ops->readlink(obj, link_content, refresh); });
}

fsal_status_t link(fsal_obj_handle* obj_hdl, fsal_obj_handle* destdir_hdl,
                   const char* name) noexcept {
    fsal_obj_handle* obj = sub_of(obj_hdl);
    return sub_call(current_export(),
                    [&] { return obj->obj_ops->link(obj, sub_of(destdir_hdl), name); });
}

// A rename over an existing regular file takes a link from it, maybe its last:
// then its data files go, as for unlink.
fsal_status_t rename(fsal_obj_handle* obj_hdl, fsal_obj_handle* olddir_hdl, const char* old_name,
                     fsal_obj_handle* newdir_hdl, const char* new_name) noexcept {
    Export* exp = current_export();
    fsal_obj_handle* olddir = sub_of(olddir_hdl);
    fsal_obj_handle* newdir = sub_of(newdir_hdl);

    fsal_obj_handle* replaced = nullptr; // the sub-FSAL's handle of the file replaced
    mds::ObjectKey replaced_key;
    if (exp != nullptr) {
        fsal_status_t found = sub_call(
            exp, [&] { return newdir->obj_ops->lookup(newdir, new_name, &replaced, nullptr); });
        if (FSAL_IS_ERROR(found)) {
            replaced = nullptr;
        } else if (replaced != nullptr) {
            replaced_key = key_of(exp, replaced);
            if (replaced->type != REGULAR_FILE || replaced_key == Handle::of(obj_hdl)->key) {
                sub_call(exp, [&] { replaced->obj_ops->release(replaced); });
                replaced = nullptr;
            } else if (mds::map_in_namespace(*exp)) {
                // Its map may be on the namespace object only (another MDS placed it): the
                // store must have it before the object can go, to queue its data files.
                (void)mds::load_map(*exp, replaced, replaced_key);
            }
        }
    }

    fsal_status_t status = sub_call(exp, [&] {
        return olddir->obj_ops->rename(sub_of(obj_hdl), olddir, old_name, newdir, new_name);
    });
    if (replaced != nullptr) {
        if (!FSAL_IS_ERROR(status) && mds::last_link_gone(*exp, replaced))
            mds::remove_data_files(*exp, replaced_key, replaced->fileid, nullptr, new_name);
        sub_call(exp, [&] { replaced->obj_ops->release(replaced); });
    }
    return status;
}

// Removing the last link of a regular file removes its data files.
fsal_status_t unlink(fsal_obj_handle* dir_hdl, fsal_obj_handle* obj_hdl,
                     const char* name) noexcept {
    Export* exp = current_export();
    fsal_obj_handle* dir = sub_of(dir_hdl);
    Handle* handle = Handle::of(obj_hdl);
    if (exp != nullptr && obj_hdl->type == REGULAR_FILE && mds::map_in_namespace(*exp))
        (void)handle->data_files(); // as for rename: into the store before the object goes
    fsal_status_t status =
        sub_call(exp, [&] { return dir->obj_ops->unlink(dir, handle->sub, name); });
    if (!FSAL_IS_ERROR(status) && exp != nullptr && obj_hdl->type == REGULAR_FILE &&
        mds::last_link_gone(*exp, handle->sub))
        mds::remove_data_files(*exp, handle->key, handle->fileid, handle, name);
    return status;
}

// ---------------------------------------------------------------------------
// Attributes and access. A regular file's namespace object holds no bytes:
// size, space_used and the times come from its data files (pnfs/getattr_overlay.cpp).

fsal_status_t getattrs(fsal_obj_handle* obj_hdl, fsal_attrlist* attrs_out) noexcept {
    Export* exp = current_export();
    Handle* handle = Handle::of(obj_hdl);
    fsal_obj_handle* obj = handle->sub;
    fsal_status_t status = sub_call(exp, [&] { return obj->obj_ops->getattrs(obj, attrs_out); });
    if (FSAL_IS_ERROR(status) || exp == nullptr || obj_hdl->type != REGULAR_FILE)
        return status;
    if (wcc::overlay_from_cache(*exp, *handle, attrs_out))
        return status; // no lock, no allocation, no data-server traffic
    if (const std::shared_ptr<const mds::DataFileMap> map = handle->data_files())
        status = wcc::overlay_data_attrs(*exp, *handle, *map, attrs_out);
    return status;
}

fsal_status_t test_access(fsal_obj_handle* obj_hdl, fsal_accessflags_t access_type,
                          fsal_accessflags_t* allowed, fsal_accessflags_t* denied,
                          bool owner_skip) noexcept {
    fsal_obj_handle* obj = sub_of(obj_hdl);
    return sub_call(current_export(), [&] {
        return obj->obj_ops->test_access(obj, access_type, allowed, denied, owner_skip);
    });
}

// A referral is a directory (fsal_common_is_referral): for anything else the answer is
// known without the sub-FSAL, which would otherwise fetch its attributes (for VFS an
// open_by_handle_at, fstat and close) on every GETATTR that MDCACHE cannot answer alone.
bool is_referral(fsal_obj_handle* obj_hdl, fsal_attrlist* attrs, bool cache_attrs) noexcept {
    if (obj_hdl->type != DIRECTORY)
        return false;
    fsal_obj_handle* obj = sub_of(obj_hdl);
    return sub_call(current_export(),
                    [&] { return obj->obj_ops->is_referral(obj, attrs, cache_attrs); });
}

// ---------------------------------------------------------------------------
// Filehandles and keys: the sub-FSAL's, unchanged.

fsal_status_t handle_to_wire(const fsal_obj_handle* obj_hdl, fsal_digesttype_t output_type,
                             gsh_buffdesc* fh_desc) noexcept {
    const fsal_obj_handle* obj = Handle::of(obj_hdl)->sub;
    return sub_call(current_export(),
                    [&] { return obj->obj_ops->handle_to_wire(obj, output_type, fh_desc); });
}

void handle_to_key(fsal_obj_handle* obj_hdl, gsh_buffdesc* fh_desc) noexcept {
    fsal_obj_handle* obj = sub_of(obj_hdl);
    sub_call(current_export(), [&] { obj->obj_ops->handle_to_key(obj, fh_desc); });
}

bool handle_cmp(fsal_obj_handle* obj_hdl1, fsal_obj_handle* obj_hdl2) noexcept {
    if (obj_hdl1 == nullptr || obj_hdl2 == nullptr)
        return false;
    if (obj_hdl1 == obj_hdl2)
        return true;
    fsal_obj_handle* obj1 = sub_of(obj_hdl1);
    return sub_call(current_export(),
                    [&] { return obj1->obj_ops->handle_cmp(obj1, sub_of(obj_hdl2)); });
}

} // namespace

void init_handle_ops(fsal_obj_ops& ops) noexcept {
    ff_gsh_default_obj_ops_init(&ops);
    // pNFS and LAYOUT_WCC (pnfs/) install their own object methods.
    layout::init_layout_obj_ops(ops);
    wcc::init_wcc_obj_ops(ops);

    // get_ref/put_ref keep the defaults: MDCACHE above counts references, and
    // each FLEXFILES handle lives exactly as long as the entry that holds it.
    ops.release = release;
    ops.merge = merge;
    ops.lookup = lookup;
    ops.readdir = readdir;
    ops.compute_readdir_cookie = compute_readdir_cookie;
    ops.dirent_cmp = dirent_cmp;
    ops.mkdir = mkdir;
    ops.mknode = mknode;
    ops.symlink = symlink;
    ops.readlink = readlink;
    ops.test_access = test_access;
    ops.getattrs = getattrs;
    ops.link = link;
    ops.rename = rename;
    ops.unlink = unlink;
    ops.handle_to_wire = handle_to_wire;
    ops.handle_to_key = handle_to_key;
    ops.handle_cmp = handle_cmp;
    ops.is_referral = is_referral;

    init_file_ops(ops);
    init_xattr_ops(ops);
}

} // namespace flexfiles
