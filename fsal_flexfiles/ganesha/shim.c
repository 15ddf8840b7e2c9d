// SPDX-License-Identifier: LGPL-3.0-or-later
/*
 * Forwarders to Ganesha functions whose headers do not compile as C++
 * (see shim.h for why this is C and not a compatibility header).
 */
#include "config.h" /* Ganesha's build configuration, first as in Ganesha */
/* then the rest */
#include "FSAL/fsal_commonlib.h"
#include "export_mgr.h"
#include "fsal.h"
#include "gsh_config.h"
#include "nfs_exports.h"
#include "shim.h"

void ff_gsh_obj_handle_init(struct fsal_obj_handle *obj,
			    struct fsal_export *exp, object_file_type_t type)
{
	fsal_obj_handle_init(obj, exp, type);
}

void ff_gsh_obj_handle_fini(struct fsal_obj_handle *obj)
{
	fsal_obj_handle_fini(obj);
}

void ff_gsh_default_obj_ops_init(struct fsal_obj_ops *ops)
{
	fsal_default_obj_ops_init(ops);
}

void ff_gsh_export_init(struct fsal_export *exp)
{
	fsal_export_init(exp);
}

void ff_gsh_export_stack(struct fsal_export *sub_export,
			 struct fsal_export *super_export)
{
	fsal_export_stack(sub_export, super_export);
}

int ff_gsh_attach_export(struct fsal_module *fsal, struct fsal_export *exp)
{
	return fsal_attach_export(fsal, &exp->exports);
}

void ff_gsh_detach_export(struct fsal_module *fsal, struct fsal_export *exp)
{
	fsal_detach_export(fsal, &exp->exports);
}

void ff_gsh_free_export_ops(struct fsal_export *exp)
{
	free_export_ops(exp);
}

fsal_status_t ff_gsh_update_export(struct fsal_module *fsal, void *parse_node,
				   struct config_error_type *err_type,
				   struct fsal_export *original,
				   struct fsal_module *updated_super)
{
	return update_export(fsal, parse_node, err_type, original,
			     updated_super);
}

uint16_t ff_gsh_ctx_export_id(void)
{
	if (op_ctx == NULL || op_ctx->ctx_export == NULL)
		return 0;
	return op_ctx->ctx_export->export_id;
}

bool ff_gsh_ctx_export_writable(void)
{
	return op_ctx != NULL &&
	       (op_ctx->export_perms.options & EXPORT_OPTION_WRITE_ACCESS) != 0;
}

const char *ff_gsh_ctx_export_path(void)
{
	const struct gsh_export *exp;

	if (op_ctx == NULL || op_ctx->ctx_export == NULL)
		return "(no export)";
	exp = op_ctx->ctx_export;
	if (exp->cfg_pseudopath != NULL)
		return exp->cfg_pseudopath;
	if (exp->cfg_fullpath != NULL)
		return exp->cfg_fullpath;
	return "(no path)";
}

bool ff_gsh_with_export_context(uint16_t export_id, struct fsal_export *fsal_exp,
				void (*fn)(void *arg), void *arg)
{
	struct req_op_context ctx;
	struct gsh_export *exp = get_gsh_export(export_id);

	if (exp == NULL)
		return false;
	/* The context takes the reference; release_op_context gives it back. */
	init_op_context_simple(&ctx, exp, fsal_exp);
	fn(arg);
	release_op_context();
	return true;
}

const char *ff_gsh_recovery_root(void)
{
	if (nfs_param.nfsv4_param.recov_root != NULL &&
	    nfs_param.nfsv4_param.recov_root[0] != '\0')
		return nfs_param.nfsv4_param.recov_root;
	return NFS_V4_RECOV_ROOT;
}

unsigned int ff_gsh_lease_lifetime(void)
{
	return nfs_param.nfsv4_param.lease_lifetime;
}
