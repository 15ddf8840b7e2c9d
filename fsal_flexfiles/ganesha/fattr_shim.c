// SPDX-License-Identifier: LGPL-3.0-or-later
/*
 * The C side of LAYOUT_WCC (see fattr_shim.h).
 */
#include "config.h" /* Ganesha's build configuration, first as in Ganesha */
/* then the rest */
#include "fattr_shim.h"
#include "fsal.h"
#include "fsal_up.h"
#include "nfs_proto_tools.h"
#include "nfsv41.h"

#include <string.h>

static void ff_wcc_time_of(const struct timespec *ts, struct ff_wcc_time *out)
{
	out->sec = (int64_t)ts->tv_sec;
	out->nsec = (uint32_t)ts->tv_nsec;
}

int ff_wcc_decode_fattr4(const uint32_t *mask_words, unsigned int nwords,
			 const char *vals, unsigned int len,
			 struct ff_wcc_attrs *out)
{
	struct fsal_attrlist attrs;
	fattr4 f;
	unsigned int i;
	int status;

	memset(out, 0, sizeof(*out));
	memset(&f, 0, sizeof(f));
	if (nwords > BITMAP4_MAPLEN)
		nwords = BITMAP4_MAPLEN;
	f.attrmask.bitmap4_len = nwords;
	for (i = 0; i < nwords; i++)
		f.attrmask.map[i] = mask_words[i];
	/* The decoder only reads attr_vals (xdrmem over it, XDR_DECODE). */
	f.attr_vals.attrlist4_len = len;
	f.attr_vals.attrlist4_val = (char *)vals;

	status = nfs4_Fattr_To_FSAL_attr(&attrs, &f, NULL);
	if (status != NFS4_OK)
		return status;

	if (attrs.valid_mask & ATTR_SIZE) {
		out->size = attrs.filesize;
		out->valid |= FF_WCC_A_SIZE;
	}
	if (attrs.valid_mask & ATTR_SPACEUSED) {
		out->space_used = attrs.spaceused;
		out->valid |= FF_WCC_A_SPACE_USED;
	}
	if (attrs.valid_mask & ATTR_MODE) {
		out->mode = attrs.mode & 07777;
		out->valid |= FF_WCC_A_MODE;
	}
	if (attrs.valid_mask & ATTR_OWNER) {
		out->uid = (uint32_t)attrs.owner;
		out->valid |= FF_WCC_A_OWNER;
	}
	if (attrs.valid_mask & ATTR_GROUP) {
		out->gid = (uint32_t)attrs.group;
		out->valid |= FF_WCC_A_GROUP;
	}
	if (attrs.valid_mask & ATTR_ATIME) {
		ff_wcc_time_of(&attrs.atime, &out->atime);
		out->valid |= FF_WCC_A_ATIME;
	}
	if (attrs.valid_mask & ATTR_MTIME) {
		ff_wcc_time_of(&attrs.mtime, &out->mtime);
		out->valid |= FF_WCC_A_MTIME;
	}
	if (attrs.valid_mask & ATTR_CTIME) {
		ff_wcc_time_of(&attrs.ctime, &out->ctime);
		out->valid |= FF_WCC_A_CTIME;
	}
	return NFS4_OK;
}
