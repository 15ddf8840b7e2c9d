// SPDX-License-Identifier: LGPL-3.0-or-later
//
// FLEXFILES exports: creation from the config block (stacking on the
// sub-FSAL's export), update, release, and the export operations. Every
// operation that is about the metadata namespace is the sub-FSAL's answer;
// the pNFS MDS operations are this FSAL's own (see "pNFS MDS" below).
#include "export.hpp"

#include "data_path/data_path.hpp"
#include "dbus/dbus_glue.h"
#include "handle.hpp"
#include "methods.hpp"
#include "pnfs/layout_ops.hpp"
#include "pnfs/layout_wcc.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

namespace flexfiles {

Export* current_export() noexcept {
    if (op_ctx == nullptr || op_ctx->fsal_export == nullptr ||
        op_ctx->fsal_export->fsal != &the_module)
        return nullptr;
    return Export::of(op_ctx->fsal_export);
}

ExportSwitch::ExportSwitch(fsal_export* target) noexcept {
    if (op_ctx == nullptr || target == nullptr)
        return;
    saved_ = op_ctx->fsal_export;
    op_ctx->fsal_export = target;
    switched_ = true;
}

ExportSwitch::~ExportSwitch() {
    if (switched_ && op_ctx != nullptr)
        op_ctx->fsal_export = saved_;
}

namespace {

// ---------------------------------------------------------------------------
// Parsing the block

// The parser's output, released whatever happens.
class ParsedBlock {
public:
    ParsedBlock() = default;
    ~ParsedBlock() { ff_cfg_export_release(&raw); }
    ParsedBlock(const ParsedBlock&) = delete;
    ParsedBlock& operator=(const ParsedBlock&) = delete;

    ff_cfg_export raw{};
};

// The reference Ganesha's subfsal_commit took on the sub-FSAL while parsing
// the nested FSAL block. A created export keeps it until release(); every
// other path gives it back.
class SubFsalRef {
public:
    explicit SubFsalRef(const ff_cfg_export& parsed) noexcept {
        if (parsed.sub_fsal_node == nullptr || parsed.sub_fsal_name == nullptr)
            return;
        // lookup_fsal() takes a reference of its own: give that one back at
        // once and keep the parser's.
        fsal_ = lookup_fsal(parsed.sub_fsal_name);
        if (fsal_ != nullptr)
            fsal_put(fsal_);
    }
    ~SubFsalRef() {
        if (fsal_ != nullptr)
            fsal_put(fsal_);
    }
    SubFsalRef(const SubFsalRef&) = delete;
    SubFsalRef& operator=(const SubFsalRef&) = delete;

    fsal_module* get() const noexcept { return fsal_; }
    // The export now owns the reference.
    void keep() noexcept { fsal_ = nullptr; }

private:
    fsal_module* fsal_ = nullptr;
};

// Logs every problem of `cfg` (LogCrit, naming the export and the field) and
// says whether there was none.
bool usable(const config::ExportConfig& cfg, int export_id, const char* path) {
    const std::vector<std::string> problems = config::validate(cfg);
    for (const std::string& problem : problems)
        LogCrit(COMPONENT_FSAL, "FLEXFILES export %d (%s): %s", export_id, path, problem.c_str());
    if (!problems.empty())
        LogCrit(COMPONENT_FSAL,
                "FLEXFILES export %d (%s): %zu configuration error(s), export refused", export_id,
                path, problems.size());
    return problems.empty();
}

// ---------------------------------------------------------------------------
// Export lifetime

void release(fsal_export* exp_hdl) noexcept {
    Export* exp = Export::of(exp_hdl);
    fsal_export* sub = exp->sub_export;
    fsal_module* sub_fsal = sub->fsal;

    mds::close_data_path(*exp);
    if (const std::size_t left = exp->layouts().grants.size(); left != 0)
        LogWarn(COMPONENT_PNFS, "%s: released with %zu layout segments recorded",
                exp->label().c_str(), left);
    sub_call(exp, [&] { sub->exp_ops.release(sub); });
    fsal_put(sub_fsal); // the reference taken when the block was parsed

    ff_gsh_detach_export(exp->fsal, exp);
    ff_gsh_free_export_ops(exp);
    delete exp;
}

void prepare_unexport(fsal_export* exp_hdl) noexcept {
    fsal_export* sub = exp_hdl->sub_export;
    sub_call(Export::of(exp_hdl), [&] { sub->exp_ops.prepare_unexport(sub); });
}

void unexport(fsal_export* exp_hdl, fsal_obj_handle* root_obj) noexcept {
    fsal_export* sub = exp_hdl->sub_export;
    sub_call(Export::of(exp_hdl), [&] { sub->exp_ops.unexport(sub, sub_of(root_obj)); });
}

void unmount(fsal_export* parent_exp_hdl, fsal_obj_handle* junction_obj) noexcept {
    fsal_export* sub = parent_exp_hdl->sub_export;
    sub_call(Export::of(parent_exp_hdl), [&] { sub->exp_ops.unmount(sub, sub_of(junction_obj)); });
}

// ---------------------------------------------------------------------------
// Handles from paths and from the wire

fsal_status_t lookup_path(fsal_export* exp_hdl, const char* path, fsal_obj_handle** handle,
                          fsal_attrlist* attrs_out) noexcept {
    Export* exp = Export::of(exp_hdl);
    fsal_obj_handle* sub_handle = nullptr;
    fsal_status_t status = sub_call(exp, [&] {
        return exp->sub_export->exp_ops.lookup_path(exp->sub_export, path, &sub_handle, attrs_out);
    });
    return adopt(exp, status, sub_handle, handle, attrs_out);
}

// Filehandles are the sub-FSAL's: FLEXFILES adds nothing to them (yet).
fsal_status_t wire_to_host(fsal_export* exp_hdl, fsal_digesttype_t in_type, gsh_buffdesc* fh_desc,
                           int flags) noexcept {
    fsal_export* sub = exp_hdl->sub_export;
    return sub_call(Export::of(exp_hdl),
                    [&] { return sub->exp_ops.wire_to_host(sub, in_type, fh_desc, flags); });
}

fsal_status_t host_to_key(fsal_export* exp_hdl, gsh_buffdesc* fh_desc) noexcept {
    fsal_export* sub = exp_hdl->sub_export;
    return sub_call(Export::of(exp_hdl), [&] { return sub->exp_ops.host_to_key(sub, fh_desc); });
}

fsal_status_t create_handle(fsal_export* exp_hdl, gsh_buffdesc* fh_desc, fsal_obj_handle** handle,
                            fsal_attrlist* attrs_out) noexcept {
    Export* exp = Export::of(exp_hdl);
    fsal_obj_handle* sub_handle = nullptr;
    fsal_status_t status = sub_call(exp, [&] {
        return exp->sub_export->exp_ops.create_handle(exp->sub_export, fh_desc, &sub_handle,
                                                      attrs_out);
    });
    return adopt(exp, status, sub_handle, handle, attrs_out);
}

// ---------------------------------------------------------------------------
// File system information

fsal_status_t get_fs_dynamic_info(fsal_export* exp_hdl, fsal_obj_handle* obj_hdl,
                                  fsal_dynamicfsinfo_t* info) noexcept {
    fsal_export* sub = exp_hdl->sub_export;
    return sub_call(Export::of(exp_hdl),
                    [&] { return sub->exp_ops.get_fs_dynamic_info(sub, sub_of(obj_hdl), info); });
}

bool fs_supports(fsal_export* exp_hdl, fsal_fsinfo_options_t option) noexcept {
    switch (option) {
    case fso_pnfs_mds_supported:
        // This FSAL's own answer, never the sub-FSAL's (whose layouts would
        // name the wrong servers).
        return layout::export_grants_layouts(Export::of(exp_hdl));
    case fso_pnfs_ds_supported:
        // The data servers are separate NFSv3 servers; this one is the MDS.
        return false;
    case fso_layout_wcc:
        return wcc::export_supports_layout_wcc(Export::of(exp_hdl));
    default:
        break;
    }
    fsal_export* sub = exp_hdl->sub_export;
    return sub_call(Export::of(exp_hdl), [&] { return sub->exp_ops.fs_supports(sub, option); });
}

uint64_t fs_maxfilesize(fsal_export* exp_hdl) noexcept {
    fsal_export* sub = exp_hdl->sub_export;
    return sub_call(Export::of(exp_hdl), [&] { return sub->exp_ops.fs_maxfilesize(sub); });
}

uint32_t fs_maxread(fsal_export* exp_hdl) noexcept {
    fsal_export* sub = exp_hdl->sub_export;
    return sub_call(Export::of(exp_hdl), [&] { return sub->exp_ops.fs_maxread(sub); });
}

uint32_t fs_maxwrite(fsal_export* exp_hdl) noexcept {
    fsal_export* sub = exp_hdl->sub_export;
    return sub_call(Export::of(exp_hdl), [&] { return sub->exp_ops.fs_maxwrite(sub); });
}

uint32_t fs_maxlink(fsal_export* exp_hdl) noexcept {
    fsal_export* sub = exp_hdl->sub_export;
    return sub_call(Export::of(exp_hdl), [&] { return sub->exp_ops.fs_maxlink(sub); });
}

uint32_t fs_maxnamelen(fsal_export* exp_hdl) noexcept {
    fsal_export* sub = exp_hdl->sub_export;
    return sub_call(Export::of(exp_hdl), [&] { return sub->exp_ops.fs_maxnamelen(sub); });
}

uint32_t fs_maxpathlen(fsal_export* exp_hdl) noexcept {
    fsal_export* sub = exp_hdl->sub_export;
    return sub_call(Export::of(exp_hdl), [&] { return sub->exp_ops.fs_maxpathlen(sub); });
}

fsal_aclsupp_t fs_acl_support(fsal_export* exp_hdl) noexcept {
    fsal_export* sub = exp_hdl->sub_export;
    return sub_call(Export::of(exp_hdl), [&] { return sub->exp_ops.fs_acl_support(sub); });
}

attrmask_t fs_supported_attrs(fsal_export* exp_hdl) noexcept {
    fsal_export* sub = exp_hdl->sub_export;
    return sub_call(Export::of(exp_hdl), [&] { return sub->exp_ops.fs_supported_attrs(sub); });
}

uint32_t fs_umask(fsal_export* exp_hdl) noexcept {
    fsal_export* sub = exp_hdl->sub_export;
    return sub_call(Export::of(exp_hdl), [&] { return sub->exp_ops.fs_umask(sub); });
}

int32_t fs_expiretimeparent(fsal_export* exp_hdl) noexcept {
    fsal_export* sub = exp_hdl->sub_export;
    return sub_call(Export::of(exp_hdl), [&] { return sub->exp_ops.fs_expiretimeparent(sub); });
}

// ---------------------------------------------------------------------------
// Quotas, write verifier, state, credentials

fsal_status_t check_quota(fsal_export* exp_hdl, const char* filepath, int quota_type) noexcept {
    fsal_export* sub = exp_hdl->sub_export;
    return sub_call(Export::of(exp_hdl),
                    [&] { return sub->exp_ops.check_quota(sub, filepath, quota_type); });
}

fsal_status_t get_quota(fsal_export* exp_hdl, const char* filepath, int quota_type, int quota_id,
                        fsal_quota_t* quota) noexcept {
    fsal_export* sub = exp_hdl->sub_export;
    return sub_call(Export::of(exp_hdl), [&] {
        return sub->exp_ops.get_quota(sub, filepath, quota_type, quota_id, quota);
    });
}

fsal_status_t set_quota(fsal_export* exp_hdl, const char* filepath, int quota_type, int quota_id,
                        fsal_quota_t* quota, fsal_quota_t* resquota) noexcept {
    fsal_export* sub = exp_hdl->sub_export;
    return sub_call(Export::of(exp_hdl), [&] {
        return sub->exp_ops.set_quota(sub, filepath, quota_type, quota_id, quota, resquota);
    });
}

// NFSv4 WRITE and COMMIT ask after the FSAL's call: the export's own verifier, which moves
// when a data server lost unstable data (mds/write_verifier.hpp). Random per export
// instance, so an MDS restart moves it too, for what its sub-FSAL held unstable.
void get_write_verifier(fsal_export* exp_hdl, gsh_buffdesc* verf_desc) noexcept {
    const auto v = Export::of(exp_hdl)->write_verifier().current();
    std::memcpy(verf_desc->addr, v.data(), std::min<std::size_t>(verf_desc->len, v.size()));
}

// state_t comes from the sub-FSAL: its open/lock code expects the state it
// allocated (VFS appends its file descriptor to it).
state_t* alloc_state(fsal_export* exp_hdl, enum state_type state_type,
                     state_t* related_state) noexcept {
    fsal_export* sub = exp_hdl->sub_export;
    return sub_call(Export::of(exp_hdl),
                    [&] { return sub->exp_ops.alloc_state(sub, state_type, related_state); });
}

void free_state(fsal_export* exp_hdl, state_t* state) noexcept {
    fsal_export* sub = exp_hdl->sub_export;
    // Whatever path ended the state, it no longer authorises RW layouts.
    if (Export* exp = Export::of(exp_hdl))
        layout::forget_state(*exp, state);
    sub_call(Export::of(exp_hdl), [&] { sub->exp_ops.free_state(sub, state); });
}

bool is_superuser(fsal_export* exp_hdl, const user_cred* creds) noexcept {
    fsal_export* sub = exp_hdl->sub_export;
    return sub_call(Export::of(exp_hdl), [&] { return sub->exp_ops.is_superuser(sub, creds); });
}

void init_export_ops(export_ops& ops) noexcept {
    layout::init_layout_export_ops(ops);
    // get_name keeps the default: the export is a FLEXFILES export.
    ops.release = release;
    ops.prepare_unexport = prepare_unexport;
    ops.unexport = unexport;
    ops.unmount = unmount;
    ops.lookup_path = lookup_path;
    // lookup_junction keeps the default: deprecated, and MDCACHE above never
    // calls it.
    ops.wire_to_host = wire_to_host;
    ops.host_to_key = host_to_key;
    ops.create_handle = create_handle;
    ops.get_fs_dynamic_info = get_fs_dynamic_info;
    ops.fs_supports = fs_supports;
    ops.fs_maxfilesize = fs_maxfilesize;
    ops.fs_maxread = fs_maxread;
    ops.fs_maxwrite = fs_maxwrite;
    ops.fs_maxlink = fs_maxlink;
    ops.fs_maxnamelen = fs_maxnamelen;
    ops.fs_maxpathlen = fs_maxpathlen;
    ops.fs_acl_support = fs_acl_support;
    ops.fs_supported_attrs = fs_supported_attrs;
    ops.fs_umask = fs_umask;
    ops.fs_expiretimeparent = fs_expiretimeparent;
    ops.check_quota = check_quota;
    ops.get_quota = get_quota;
    ops.set_quota = set_quota;
    ops.get_write_verifier = get_write_verifier;
    ops.alloc_state = alloc_state;
    ops.free_state = free_state;
    ops.is_superuser = is_superuser;

    // pNFS MDS: getdevicelist, fs_layouttypes (-> LAYOUT4_FLEX_FILES),
    // fs_layout_blocksize, fs_maximum_segments and fs_loc_body_size are this
    // FSAL's, set here by pnfs/. Until then Ganesha's defaults answer: no
    // layout types, so LAYOUTGET gets NFS4ERR_LAYOUTUNAVAILABLE.
}

} // namespace

// ---------------------------------------------------------------------------
// Module operations

fsal_status_t create_export(fsal_module* fsal_hdl, void* parse_node, config_error_type* err_type,
                            const fsal_up_vector* up_ops) noexcept {
    const int export_id = ff_gsh_ctx_export_id();
    const char* const path = ff_gsh_ctx_export_path();

    ParsedBlock parsed;
    const int rc = ff_cfg_export_load(parse_node, err_type, &parsed.raw);
    SubFsalRef sub_fsal(parsed.raw);
    if (rc != 0) {
        LogCrit(COMPONENT_FSAL,
                "FLEXFILES export %d (%s): the FSAL block has errors (config errors above or "
                "below), export refused",
                export_id, path);
        return fsalstat(ERR_FSAL_INVAL, EINVAL);
    }

    config::ExportConfig cfg = config::from_parsed(parsed.raw);
    if (!usable(cfg, export_id, path))
        return fsalstat(ERR_FSAL_INVAL, EINVAL);
    if (sub_fsal.get() == nullptr) {
        LogCrit(COMPONENT_FSAL, "FLEXFILES export %d (%s): FSAL %s is not loaded, export refused",
                export_id, path, cfg.sub_fsal.c_str());
        return fsalstat(ERR_FSAL_INVAL, EINVAL);
    }

    // The sub-FSAL creates its export and leaves it in op_ctx->fsal_export.
    fsal_module* sub = sub_fsal.get();
    fsal_status_t status =
        sub->m_ops.create_export(sub, parsed.raw.sub_fsal_node, err_type, up_ops);
    if (FSAL_IS_ERROR(status)) {
        LogCrit(COMPONENT_FSAL, "FLEXFILES export %d (%s): FSAL %s could not create its export: %s",
                export_id, path, cfg.sub_fsal.c_str(), msg_fsal_err(status.major));
        return status;
    }

    fsal_export* sub_export = op_ctx->fsal_export;
    if (cfg.map_in_namespace && !sub_export->exp_ops.fs_supports(sub_export, fso_xattr_support)) {
        LogCrit(COMPONENT_FSAL,
                "FLEXFILES export %d (%s): Map_In_Namespace needs a sub-FSAL with extended "
                "attributes and FSAL %s has none; export refused",
                export_id, path, cfg.sub_fsal.c_str());
        sub_export->exp_ops.release(sub_export);
        return fsalstat(ERR_FSAL_INVAL, EINVAL);
    }

    auto* exp = new Export(std::move(cfg));
    ff_gsh_export_stack(op_ctx->fsal_export, exp);
    ff_gsh_export_init(exp);
    init_export_ops(exp->exp_ops);
    exp->up_ops = up_ops;
    exp->fsal = fsal_hdl;
    sub_fsal.keep();

    if (ff_gsh_attach_export(fsal_hdl, exp) != 0) {
        LogCrit(COMPONENT_FSAL, "FLEXFILES export %d (%s): could not attach the export to FSAL %s",
                export_id, path, fsal_hdl->name);
        release(exp);
        return fsalstat(ERR_FSAL_SERVERFAULT, 0);
    }

    LogEvent(COMPONENT_FSAL, "FLEXFILES export %d (%s): %s", export_id, path,
             config::describe(exp->settings).c_str());
    // The layout store, the data-server clients and the reaper; a data server
    // that is unreachable now is not an error (it is Down until it answers).
    status = mds::open_data_path(*exp, export_id);
    if (FSAL_IS_ERROR(status)) {
        release(exp);
        return status;
    }

    // The dbus management interface (dbus/), once per process, as soon as Ganesha's dbus
    // is up: not yet, since exports are created before dbus is initialised.
    ff_mgmt_dbus_start();

    op_ctx->fsal_export = exp;
    return fsalstat(ERR_FSAL_NO_ERROR, 0);
}

fsal_status_t update_export(fsal_module* fsal_hdl, void* parse_node, config_error_type* err_type,
                            fsal_export* original, fsal_module* updated_super) noexcept {
    const int export_id = original->export_id;
    const char* const path = ff_gsh_ctx_export_path();

    // Refuses a change of the stacking above us.
    fsal_status_t status =
        ff_gsh_update_export(fsal_hdl, parse_node, err_type, original, updated_super);
    if (FSAL_IS_ERROR(status))
        return status;

    ParsedBlock parsed;
    const int rc = ff_cfg_export_load(parse_node, err_type, &parsed.raw);
    // The export keeps the reference it took at creation; this one goes back.
    SubFsalRef sub_fsal(parsed.raw);
    if (rc != 0) {
        LogCrit(COMPONENT_FSAL,
                "FLEXFILES export %d (%s): the FSAL block has errors, update refused", export_id,
                path);
        return fsalstat(ERR_FSAL_INVAL, EINVAL);
    }
    const config::ExportConfig cfg = config::from_parsed(parsed.raw);
    if (!usable(cfg, export_id, path))
        return fsalstat(ERR_FSAL_INVAL, EINVAL);

    // Changing the fleet or the layout parameters under clients that hold
    // layouts needs recalls and fencing (dbus/ will do that); until then a
    // change needs the export removed and added again.
    Export* exp = Export::of(original);
    if (!(cfg == exp->settings)) {
        LogCrit(COMPONENT_FSAL,
                "FLEXFILES export %d (%s): the FLEXFILES parameters changed; changing them on a "
                "live export is not supported yet (remove and add the export), update refused",
                export_id, path);
        return fsalstat(ERR_FSAL_INVAL, EINVAL);
    }

    fsal_module* sub = sub_fsal.get();
    if (sub == nullptr)
        return fsalstat(ERR_FSAL_INVAL, EINVAL);
    status = sub->m_ops.update_export(sub, parsed.raw.sub_fsal_node, err_type, original->sub_export,
                                      fsal_hdl);
    if (FSAL_IS_ERROR(status))
        LogCrit(COMPONENT_FSAL, "FLEXFILES export %d (%s): FSAL %s refused the update: %s",
                export_id, path, cfg.sub_fsal.c_str(), msg_fsal_err(status.major));
    return status;
}

} // namespace flexfiles
