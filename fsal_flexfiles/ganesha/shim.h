/* SPDX-License-Identifier: LGPL-3.0-or-later */
/*
 * The thin C layer between the FLEXFILES C++ code and the Ganesha headers
 * that do not compile as C++.
 *
 * Decision: a C shim, not a compatibility header.
 *
 * Most of Ganesha's headers (fsal.h, fsal_api.h, config_parsing.h, log.h,
 * nfsv41.h) compile as C++ inside extern "C", and ganesha.hpp includes
 * them directly. Three do not: sal_functions.h (pulled in by
 * FSAL/fsal_commonlib.h), nfs_exports.h and export_mgr.h. They use
 * `export`, a C++20 keyword, as parameter and variable names, and
 * sal_functions.h forward-declares `enum recovery_backend` without a fixed
 * underlying type, which C++ forbids. A compatibility header would have to
 * #define the keyword `export` to something else around those includes
 * (undefined behaviour once standard headers are involved, [macro.names])
 * and pre-declare Ganesha's enums in an order that matches every include
 * path; it would break silently with each header it does not anticipate,
 * including the ones our protocols/ patches touch. The shim compiles those
 * headers as what they are, C, and hands C++ a handful of functions whose
 * signatures use only C++-clean types. Its cost is one extra call when an
 * export or a handle is created or destroyed, nowhere near an I/O path.
 *
 * Add a function here only when C++ needs something from those headers;
 * everything else is used directly through ganesha.hpp.
 */
#ifndef FF_GANESHA_SHIM_H
#define FF_GANESHA_SHIM_H

#include "fsal_api.h"

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* FSAL/fsal_commonlib.h */
void ff_gsh_obj_handle_init(struct fsal_obj_handle *obj,
			    struct fsal_export *exp, object_file_type_t type);
void ff_gsh_obj_handle_fini(struct fsal_obj_handle *obj);
void ff_gsh_default_obj_ops_init(struct fsal_obj_ops *ops);
void ff_gsh_export_init(struct fsal_export *exp);
void ff_gsh_export_stack(struct fsal_export *sub_export,
			 struct fsal_export *super_export);
int ff_gsh_attach_export(struct fsal_module *fsal, struct fsal_export *exp);
void ff_gsh_detach_export(struct fsal_module *fsal, struct fsal_export *exp);
void ff_gsh_free_export_ops(struct fsal_export *exp);
fsal_status_t ff_gsh_update_export(struct fsal_module *fsal, void *parse_node,
				   struct config_error_type *err_type,
				   struct fsal_export *original,
				   struct fsal_module *updated_super);

/* export_mgr.h: the Ganesha export op_ctx is working on (for log lines). */
uint16_t ff_gsh_ctx_export_id(void);
const char *ff_gsh_ctx_export_path(void);

/* nfs_exports.h: whether op_ctx's export permissions let the caller write
 * (EXPORT_OPTION_WRITE_ACCESS, what Ganesha checks for OPEN and WRITE). */
bool ff_gsh_ctx_export_writable(void);

/* gsh_config.h: the NFSv4 RecoveryRoot (where this server keeps its state). */
const char *ff_gsh_recovery_root(void);

/* export_mgr.h / fsal.h: runs fn(arg) on a thread of the FSAL's own (no worker, so no
 * op_ctx) with an op context naming Ganesha export `export_id` and `fsal_exp`, as the
 * sub-FSAL's calls need. false (fn not run) when the export is gone. */
bool ff_gsh_with_export_context(uint16_t export_id, struct fsal_export *fsal_exp,
				void (*fn)(void *arg), void *arg);

/* gsh_config.h: the NFSv4 Lease_Lifetime, in seconds. */
unsigned int ff_gsh_lease_lifetime(void);

#ifdef __cplusplus
}
#endif

#endif /* FF_GANESHA_SHIM_H */
