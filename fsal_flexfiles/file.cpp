// SPDX-License-Identifier: LGPL-3.0-or-later
//
// File operations: open/create, read, write, commit, locks, delegations,
// setattr, close. All go to the sub-FSAL's file for now. This is where the
// MDS will create a file's data files on the data servers (open2 with a
// name), and where I/O that reaches the MDS itself (clients without a layout)
// will be sent on to the data servers.
#include "handle.hpp"

#include <memory>

namespace flexfiles {
namespace {

// ---------------------------------------------------------------------------
// Open, create, close

fsal_status_t open2(fsal_obj_handle* obj_hdl, state_t* state, fsal_openflags_t openflags,
                    enum fsal_create_mode createmode, const char* name, fsal_attrlist* attrs_in,
                    fsal_verifier_t verifier, fsal_obj_handle** new_obj, fsal_attrlist* attrs_out,
                    bool* caller_perm_check) noexcept {
    Export* exp = current_export();
    fsal_obj_handle* obj = sub_of(obj_hdl);
    fsal_obj_handle* sub_handle = nullptr;
    fsal_status_t status = sub_call(exp, [&] {
        return obj->obj_ops->open2(obj, state, openflags, createmode, name, attrs_in, verifier,
                                   &sub_handle, attrs_out, caller_perm_check);
    });
    // Opening by handle (name == nullptr) returns no new object.
    if (sub_handle == nullptr)
        return status;
    return adopt(exp, status, sub_handle, new_obj);
}

bool check_verifier(fsal_obj_handle* obj_hdl, fsal_verifier_t verifier) noexcept {
    fsal_obj_handle* obj = sub_of(obj_hdl);
    return sub_call(current_export(), [&] { return obj->obj_ops->check_verifier(obj, verifier); });
}

fsal_openflags_t status2(fsal_obj_handle* obj_hdl, state_t* state) noexcept {
    fsal_obj_handle* obj = sub_of(obj_hdl);
    return sub_call(current_export(), [&] { return obj->obj_ops->status2(obj, state); });
}

fsal_status_t reopen2(fsal_obj_handle* obj_hdl, state_t* state,
                      fsal_openflags_t openflags) noexcept {
    fsal_obj_handle* obj = sub_of(obj_hdl);
    return sub_call(current_export(), [&] { return obj->obj_ops->reopen2(obj, state, openflags); });
}

fsal_status_t close2(fsal_obj_handle* obj_hdl, state_t* state) noexcept {
    fsal_obj_handle* obj = sub_of(obj_hdl);
    return sub_call(current_export(), [&] { return obj->obj_ops->close2(obj, state); });
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
    fsal_obj_handle* obj = sub_of(obj_hdl);
    auto* done = new IoCompletion{exp, obj_hdl, done_cb, caller_arg};
    sub_call(exp, [&] { obj->obj_ops->read2(obj, bypass, io_done, read_arg, done); });
}

void write2(fsal_obj_handle* obj_hdl, bool bypass, fsal_async_cb done_cb, fsal_io_arg* write_arg,
            void* caller_arg) noexcept {
    Export* exp = current_export();
    fsal_obj_handle* obj = sub_of(obj_hdl);
    auto* done = new IoCompletion{exp, obj_hdl, done_cb, caller_arg};
    sub_call(exp, [&] { obj->obj_ops->write2(obj, bypass, io_done, write_arg, done); });
}

fsal_status_t commit2(fsal_obj_handle* obj_hdl, off_t offset, size_t len) noexcept {
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

fsal_status_t fallocate(fsal_obj_handle* obj_hdl, state_t* state, uint64_t offset, uint64_t length,
                        bool allocate) noexcept {
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

fsal_status_t lease_op2(fsal_obj_handle* obj_hdl, state_t* state, void* owner,
                        fsal_deleg_t deleg) noexcept {
    fsal_obj_handle* obj = sub_of(obj_hdl);
    return sub_call(current_export(),
                    [&] { return obj->obj_ops->lease_op2(obj, state, owner, deleg); });
}

// A size change will also truncate the data files; a mode or owner change
// never reaches them (they carry the synthetic fencing owners).
fsal_status_t setattr2(fsal_obj_handle* obj_hdl, bool bypass, state_t* state,
                       fsal_attrlist* attrib_set) noexcept {
    fsal_obj_handle* obj = sub_of(obj_hdl);
    return sub_call(current_export(),
                    [&] { return obj->obj_ops->setattr2(obj, bypass, state, attrib_set); });
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
