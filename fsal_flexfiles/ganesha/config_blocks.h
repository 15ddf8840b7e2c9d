/* SPDX-License-Identifier: LGPL-3.0-or-later */
/*
 * Ganesha's config parser for the FLEXFILES export block (config_blocks.c): it
 * fills the plain C structs of model/config_block.h, which the C++ config model
 * (model/config.hpp) turns into an ExportConfig.
 */
#ifndef FF_GANESHA_CONFIG_BLOCKS_H
#define FF_GANESHA_CONFIG_BLOCKS_H

#include "model/config_block.h"

#ifdef __cplusplus
extern "C" {
#endif

struct config_error_type;

/*
 * Parses the FLEXFILES FSAL block at parse_node into *out. Loading the
 * nested FSAL block also loads and initialises the sub-FSAL and takes a
 * reference on it (Ganesha's subfsal_commit): sub_fsal_node is set only
 * when that happened. Returns 0, or -1 with the errors in err_type. Either
 * way *out must be released with ff_cfg_export_release().
 */
int ff_cfg_export_load(void *parse_node, struct config_error_type *err_type,
		       struct ff_cfg_export *out);

/* Frees what ff_cfg_export_load() allocated; *cfg is zeroed. */
void ff_cfg_export_release(struct ff_cfg_export *cfg);

#ifdef __cplusplus
}
#endif

#endif /* FF_GANESHA_CONFIG_BLOCKS_H */
