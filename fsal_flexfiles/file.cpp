// SPDX-License-Identifier: LGPL-3.0-or-later
//
// File operations: open/create, read, write, commit, locks, delegations,
// setattr, close. Opening and locking are the sub-FSAL's (the namespace
// object carries the opens, share reservations and locks). A regular file's
// bytes are not in its namespace object, which stays empty (size 0): they are
// in its data files on the data servers (data_path/data_path.hpp). So creating
// a regular file places its data files, and read/write/commit and a size
// change that reach the MDS (clients without a layout) go to the data files.
#include "data_path/data_path.hpp"
#include "methods.hpp"
#include "pnfs/layout_ops.hpp"

#include <cinttypes>
#include <memory>

namespace flexfiles {
namespace {

// ---------------------------------------------------------------------------
// Open, create, close

// Whether `name` exists in the sub-FSAL's directory `dir`. Any answer but
// NOENT counts as "exists": a namespace object is only ever undone when it is
// certain this open created it.
bool name_exists(Export* exp, fsal_obj_handle* dir, const char* name) noexcept {
    fsal_obj_handle* found = nullptr;
    const fsal_status_t st =
        sub_call(exp, [&] { return dir->obj_ops->lookup(dir, name, &found, nullptr); });
    if (found != nullptr)
        sub_call(exp, [&] { found->obj_ops->release(found); });
    return st.major != ERR_FSAL_NOENT;
}

// After the sub-FSAL opened (and maybe created) a regular file: give a file
// that has none its data files, and truncate them for an open with O_TRUNC.
// An error here fails the open.
fsal_status_t after_open(Export& exp, Handle& handle, bool creating, bool created,
                         fsal_openflags_t openflags, const char* name) noexcept {
    if (creating) {
        std::shared_ptr<const mds::DataFileMap> map = handle.data_files();
        if (!map) {
            std::lock_guard lk(handle.placement_mu);
            map = handle.data_files();
            fsal_status_t st = fsalstat(ERR_FSAL_NO_ERROR, 0);
            if (!map)
                st = mds::place_data_files(exp, handle, name);
            // An existing file without data files (created before the export used
            // FLEXFILES) stays openable: its first write places them.
            if (FSAL_IS_ERROR(st) && created)
                return st;
        }
        if (created)
            return fsalstat(ERR_FSAL_NO_ERROR, 0); // new data files are empty
    }
    if ((openflags & FSAL_O_TRUNC) != 0 && handle.data_files() != nullptr)
        return mds::proxy_truncate(exp, handle, 0);
    return fsalstat(ERR_FSAL_NO_ERROR, 0);
}

// Undoes a successful sub-FSAL open whose data files could not be made: closes
// it and, when the open created the namespace object, removes that again.
void undo_open(Export* exp, fsal_obj_handle* sub_dir, Handle& handle, state_t* state,
               const char* name, bool created) noexcept {
    fsal_obj_handle* sub = handle.sub;
    const fsal_status_t closed = sub_call(exp, [&] {
        return state != nullptr ? sub->obj_ops->close2(sub, state) : sub->obj_ops->close(sub);
    });
    if (FSAL_IS_ERROR(closed) && closed.major != ERR_FSAL_NOT_OPENED)
        LogWarn(COMPONENT_FSAL, "%s: closing fileid %" PRIu64 " after a failed create: %s",
                exp->label().c_str(), handle.fileid, msg_fsal_err(closed.major));
    if (!created || name == nullptr)
        return;
    const fsal_status_t removed =
        sub_call(exp, [&] { return sub_dir->obj_ops->unlink(sub_dir, sub, name); });
    if (FSAL_IS_ERROR(removed))
        LogCrit(COMPONENT_FSAL,
                "%s: file \"%s\" (fileid %" PRIu64 ") has no data files and could not be "
                "removed again: %s",
                exp->label().c_str(), name, handle.fileid, msg_fsal_err(removed.major));
}

fsal_status_t open2(fsal_obj_handle* obj_hdl, state_t* state, fsal_openflags_t openflags,
                    enum fsal_create_mode createmode, const char* name, fsal_attrlist* attrs_in,
                    fsal_verifier_t verifier, fsal_obj_handle** new_obj, fsal_attrlist* attrs_out,
                    bool* caller_perm_check) noexcept {
    Export* exp = current_export();
    fsal_obj_handle* obj = sub_of(obj_hdl);
    const bool creating = name != nullptr && createmode != FSAL_NO_CREATE;
    // Whether this open creates the namespace object (undone if placement fails).
    // Another client creating the same name in between would make this true
    // wrongly; GUARDED/EXCLUSIVE creates then fail in the sub-FSAL anyway.
    const bool created = creating && exp != nullptr && !name_exists(exp, obj, name);

    fsal_obj_handle* sub_handle = nullptr;
    fsal_status_t status = sub_call(exp, [&] {
        return obj->obj_ops->open2(obj, state, openflags, createmode, name, attrs_in, verifier,
                                   &sub_handle, attrs_out, caller_perm_check);
    });
    fsal_obj_handle* opened = nullptr;
    if (name == nullptr) {
        // Opening by handle returns no new object.
        if (FSAL_IS_ERROR(status))
            return status;
        opened = obj_hdl;
    } else {
        if (sub_handle == nullptr)
            return status;
        status = adopt(exp, status, sub_handle, new_obj);
        if (FSAL_IS_ERROR(status))
            return status;
        opened = *new_obj;
    }
    if (exp == nullptr || opened->type != REGULAR_FILE)
        return status;

    Handle& handle = *Handle::of(opened);
    const fsal_status_t data = after_open(*exp, handle, creating, created, openflags, name);
    if (FSAL_IS_ERROR(data)) {
        undo_open(exp, obj, handle, state, name, created);
        if (name != nullptr) {
            opened->obj_ops->release(opened);
            *new_obj = nullptr;
        }
        return data;
    }
    overlay_file_attrs(exp, handle, attrs_out);
    layout::record_open(*exp, handle, state, openflags);
    layout::on_open(*exp, handle, state, openflags);
    return status;
}

bool check_verifier(fsal_obj_handle* obj_hdl, fsal_verifier_t verifier) noexcept {
    fsal_obj_handle* obj = sub_of(obj_hdl);
    return sub_call(current_export(), [&] { return obj->obj_ops->check_verifier(obj, verifier); });
}

fsal_openflags_t status2(fsal_obj_handle* obj_hdl, state_t* state) noexcept {
    fsal_obj_handle* obj = sub_of(obj_hdl);
    return sub_call(current_export(), [&] { return obj->obj_ops->status2(obj, state); });
}

// An open upgrade or downgrade: what the state may now do (RW layouts, pnfs/authority.cpp).
// An upgrade to write access is an open for write: other clients' RW layouts are fenced
// first, as in open2 (pnfs/fencing.cpp).
fsal_status_t reopen2(fsal_obj_handle* obj_hdl, state_t* state,
                      fsal_openflags_t openflags) noexcept {
    Export* exp = current_export();
    fsal_obj_handle* obj = sub_of(obj_hdl);
    const fsal_status_t status =
        sub_call(exp, [&] { return obj->obj_ops->reopen2(obj, state, openflags); });
    if (!FSAL_IS_ERROR(status) && exp != nullptr && obj_hdl->type == REGULAR_FILE) {
        Handle& handle = *Handle::of(obj_hdl);
        layout::record_open(*exp, handle, state, openflags);
        layout::on_open(*exp, handle, state, openflags);
    }
    return status;
}

fsal_status_t close2(fsal_obj_handle* obj_hdl, state_t* state) noexcept {
    Export* exp = current_export();
    fsal_obj_handle* obj = sub_of(obj_hdl);
    const fsal_status_t status = sub_call(exp, [&] { return obj->obj_ops->close2(obj, state); });
    if (exp != nullptr)
        layout::forget_state(*exp, state);
    return status;
}

fsal_status_t close(fsal_obj_handle* obj_hdl) noexcept {
    fsal_obj_handle* obj = sub_of(obj_hdl);
    return sub_call(current_export(), [&] { return obj->obj_ops->close(obj); });
}

// ---------------------------------------------------------------------------
// Read and write. The sub-FSAL completes them through a callback, possibly
// later and on another thread; the callback goes back up with the FLEXFILES
// handle, under the FLEXFILES export.

struct IoCompletion {
    Export* exp;
    fsal_obj_handle* obj; // the FLEXFILES handle the caller passed
    fsal_async_cb upper_cb;
    void* upper_arg;
};

void io_done(fsal_obj_handle* /*sub_handle*/, fsal_status_t status, void* obj_data,
             void* caller_data) noexcept {
    std::unique_ptr<IoCompletion> done(static_cast<IoCompletion*>(caller_data));
    ExportSwitch to_upper(done->exp);
    done->upper_cb(done->obj, status, obj_data, done->upper_arg);
}

void read2(fsal_obj_handle* obj_hdl, bool bypass, fsal_async_cb done_cb, fsal_io_arg* read_arg,
           void* caller_arg) noexcept {
    Export* exp = current_export();
    if (exp != nullptr && obj_hdl->type == REGULAR_FILE) {
        mds::proxy_read(*exp, *Handle::of(obj_hdl), done_cb, read_arg, caller_arg);
        return;
    }
    fsal_obj_handle* obj = sub_of(obj_hdl);
    auto* done = new IoCompletion{exp, obj_hdl, done_cb, caller_arg};
    sub_call(exp, [&] { obj->obj_ops->read2(obj, bypass, io_done, read_arg, done); });
}

void write2(fsal_obj_handle* obj_hdl, bool bypass, fsal_async_cb done_cb, fsal_io_arg* write_arg,
            void* caller_arg) noexcept {
    Export* exp = current_export();
    if (exp != nullptr && obj_hdl->type == REGULAR_FILE) {
        mds::proxy_write(*exp, *Handle::of(obj_hdl), done_cb, write_arg, caller_arg);
        return;
    }
    fsal_obj_handle* obj = sub_of(obj_hdl);
    auto* done = new IoCompletion{exp, obj_hdl, done_cb, caller_arg};
    sub_call(exp, [&] { obj->obj_ops->write2(obj, bypass, io_done, write_arg, done); });
}

fsal_status_t commit2(fsal_obj_handle* obj_hdl, off_t offset, size_t len) noexcept {
    Export* exp = current_export();
    if (exp != nullptr && obj_hdl->type == REGULAR_FILE)
        return mds::proxy_commit(*exp, *Handle::of(obj_hdl), offset, len);
    fsal_obj_handle* obj = sub_of(obj_hdl);
    return sub_call(current_export(), [&] { return obj->obj_ops->commit2(obj, offset, len); });
}

fsal_status_t seek2(fsal_obj_handle* obj_hdl, state_t* state, io_info* info) noexcept {
    fsal_obj_handle* obj = sub_of(obj_hdl);
    return sub_call(current_export(), [&] { return obj->obj_ops->seek2(obj, state, info); });
}

fsal_status_t io_advise2(fsal_obj_handle* obj_hdl, state_t* state, io_hints* hints) noexcept {
    fsal_obj_handle* obj = sub_of(obj_hdl);
    return sub_call(current_export(), [&] { return obj->obj_ops->io_advise2(obj, state, hints); });
}

// Allocating or punching a regular file's namespace object would give it bytes
// it must not hold; the data servers are NFSv3, which has neither operation.
fsal_status_t fallocate(fsal_obj_handle* obj_hdl, state_t* state, uint64_t offset, uint64_t length,
                        bool allocate) noexcept {
    if (obj_hdl->type == REGULAR_FILE)
        return fsalstat(ERR_FSAL_NOTSUPP, 0);
    fsal_obj_handle* obj = sub_of(obj_hdl);
    return sub_call(current_export(),
                    [&] { return obj->obj_ops->fallocate(obj, state, offset, length, allocate); });
}

// The pre-multi-fd seek and io_advise, still in the API.
fsal_status_t seek(fsal_obj_handle* obj_hdl, io_info* info) noexcept {
    fsal_obj_handle* obj = sub_of(obj_hdl);
    return sub_call(current_export(), [&] { return obj->obj_ops->seek(obj, info); });
}

fsal_status_t io_advise(fsal_obj_handle* obj_hdl, io_hints* hints) noexcept {
    fsal_obj_handle* obj = sub_of(obj_hdl);
    return sub_call(current_export(), [&] { return obj->obj_ops->io_advise(obj, hints); });
}

// ---------------------------------------------------------------------------
// Locks, delegations, setattr

fsal_status_t lock_op2(fsal_obj_handle* obj_hdl, state_t* state, void* owner,
                       fsal_lock_op_t lock_op, fsal_lock_param_t* request_lock,
                       fsal_lock_param_t* conflicting_lock) noexcept {
    fsal_obj_handle* obj = sub_of(obj_hdl);
    return sub_call(current_export(), [&] {
        return obj->obj_ops->lock_op2(obj, state, owner, lock_op, request_lock, conflicting_lock);
    });
}

// A delegation granted (read or write) or returned: RW layouts follow (pnfs/authority.cpp).
fsal_status_t lease_op2(fsal_obj_handle* obj_hdl, state_t* state, void* owner,
                        fsal_deleg_t deleg) noexcept {
    Export* exp = current_export();
    fsal_obj_handle* obj = sub_of(obj_hdl);
    const fsal_status_t status =
        sub_call(exp, [&] { return obj->obj_ops->lease_op2(obj, state, owner, deleg); });
    if (exp != nullptr && obj_hdl->type == REGULAR_FILE &&
        (!FSAL_IS_ERROR(status) || deleg == FSAL_DELEG_NONE))
        layout::record_delegation(*exp, *Handle::of(obj_hdl), state, deleg);
    return status;
}

// A size change of a regular file truncates or extends every data file; the
// namespace object keeps size 0. A mode or owner change never reaches the
// data files (they carry the synthetic fencing owners).
fsal_status_t setattr2(fsal_obj_handle* obj_hdl, bool bypass, state_t* state,
                       fsal_attrlist* attrib_set) noexcept {
    Export* exp = current_export();
    fsal_obj_handle* obj = sub_of(obj_hdl);
    const bool size_change = exp != nullptr && obj_hdl->type == REGULAR_FILE &&
                             FSAL_TEST_MASK(attrib_set->valid_mask, ATTR_SIZE);
    if (!size_change)
        return sub_call(exp,
                        [&] { return obj->obj_ops->setattr2(obj, bypass, state, attrib_set); });

    fsal_status_t status = mds::proxy_truncate(*exp, *Handle::of(obj_hdl), attrib_set->filesize);
    if (FSAL_IS_ERROR(status))
        return status;
    FSAL_UNSET_MASK(attrib_set->valid_mask, ATTR_SIZE);
    if (attrib_set->valid_mask != 0)
        status =
            sub_call(exp, [&] { return obj->obj_ops->setattr2(obj, bypass, state, attrib_set); });
    FSAL_SET_MASK(attrib_set->valid_mask, ATTR_SIZE);
    return status;
}

} // namespace

void init_file_ops(fsal_obj_ops& ops) noexcept {
    ops.open2 = open2;
    ops.check_verifier = check_verifier;
    ops.status2 = status2;
    ops.reopen2 = reopen2;
    ops.close2 = close2;
    ops.close = close;
    ops.read2 = read2;
    ops.write2 = write2;
    ops.commit2 = commit2;
    ops.seek2 = seek2;
    ops.io_advise2 = io_advise2;
    ops.fallocate = fallocate;
    ops.seek = seek;
    ops.io_advise = io_advise;
    ops.lock_op2 = lock_op2;
    ops.lease_op2 = lease_op2;
    ops.setattr2 = setattr2;
}

} // namespace flexfiles
