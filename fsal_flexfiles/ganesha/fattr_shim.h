/* SPDX-License-Identifier: LGPL-3.0-or-later */
/*
 * The C side of LAYOUT_WCC: what needs Ganesha headers that do not compile as
 * C++ (nfs_proto_tools.h pulls in sal_data.h and friends; see ganesha/shim.h).
 *
 *  - owner and owner_group names of ffdsw_attributes through Ganesha's
 *    idmapper, as SETATTR's go (the values themselves are decoded by
 *    core/cache/owner_map.hpp, which keeps the raw strings so that the FSAL
 *    maps them outside the state lock, bounded per body).
 */
#ifndef FF_WCC_FATTR_SHIM_H
#define FF_WCC_FATTR_SHIM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Maps an owner (group = 0) or owner_group name through Ganesha's idmapper
 * (an owner-only fattr4 through nfs4_Fattr_To_FSAL_attr, i.e. name2uid /
 * name2gid as for SETATTR; the core exports no idmapper call). Returns 0 and
 * sets *id when the name maps to an id, -1 when it does not: the idmapper's
 * answer for a name it cannot map, the export's anonymous id, counts as
 * "does not map".
 * Must run with op_ctx set (a worker thread); takes no lock of the FSAL's.
 */
int ff_wcc_name_to_id(const char *name, size_t len, int group, uint32_t *id);

#ifdef __cplusplus
}
#endif

#endif /* FF_WCC_FATTR_SHIM_H */
