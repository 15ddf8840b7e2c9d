// SPDX-License-Identifier: LGPL-3.0-or-later
/*
 * The C side of LAYOUT_WCC (see fattr_shim.h).
 */
#include "config.h" /* Ganesha's build configuration, first as in Ganesha */
/* then the rest */
#include "fattr_shim.h"
#include "fsal.h"
#include "fsal_up.h"
#include "nfs_exports.h"
#include "nfs_proto_tools.h"
#include "nfsv41.h"

#include <string.h>

/* What the idmapper answers for a name it cannot map (get_anonymous_uid/gid,
 * which libganesha_nfsd does not export: the export's value when set, else
 * the built-in default; EXPORT_DEFAULTS is not consulted). */
static uint32_t anonymous_id(int group)
{
	if (op_ctx != NULL) {
		const struct export_perms *p = &op_ctx->export_perms;

		if (group && (p->set & EXPORT_OPTION_ANON_GID_SET))
			return (uint32_t)p->anonymous_gid;
		if (!group && (p->set & EXPORT_OPTION_ANON_UID_SET))
			return (uint32_t)p->anonymous_uid;
	}
	return group ? (uint32_t)(gid_t)ANON_GID : (uint32_t)(uid_t)ANON_UID;
}

int ff_wcc_name_to_id(const char *name, size_t len, int group, uint32_t *id)
{
	/* One fattr4 holding only the owner (or owner_group): Ganesha's SETATTR
	 * decoder maps it with name2uid / name2gid, which the core does not
	 * export to modules. */
	char vals[4 + 1024 + 3];
	const uint32_t attr = group ? FATTR4_OWNER_GROUP : FATTR4_OWNER;
	const size_t padded = (len + 3) & ~(size_t)3;
	struct fsal_attrlist attrs;
	uint32_t be_len;
	fattr4 f;
	uint32_t mapped;

	if (len == 0 || len > 1024)
		return -1;
	memset(vals, 0, sizeof(vals));
	be_len = htonl((uint32_t)len);
	memcpy(vals, &be_len, 4);
	memcpy(vals + 4, name, len);

	memset(&f, 0, sizeof(f));
	memset(&attrs, 0, sizeof(attrs));
	f.attrmask.bitmap4_len = 2;
	f.attrmask.map[attr / 32] = 1u << (attr % 32);
	f.attr_vals.attrlist4_len = (u_int)(4 + padded);
	f.attr_vals.attrlist4_val = vals;

	if (nfs4_Fattr_To_FSAL_attr(&attrs, &f, NULL) != NFS4_OK)
		return -1;
	if (group && (attrs.valid_mask & ATTR_GROUP))
		mapped = (uint32_t)attrs.group;
	else if (!group && (attrs.valid_mask & ATTR_OWNER))
		mapped = (uint32_t)attrs.owner;
	else
		return -1;
	if (mapped == anonymous_id(group))
		return -1;
	*id = mapped;
	return 0;
}
