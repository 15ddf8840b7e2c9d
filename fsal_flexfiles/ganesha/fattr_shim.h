/* SPDX-License-Identifier: LGPL-3.0-or-later */
/*
 * The C side of LAYOUT_WCC: what needs Ganesha headers that do not compile as
 * C++ (nfs_proto_tools.h pulls in sal_data.h and friends; see ganesha/shim.h).
 *
 *  - ffdsw_attributes values through Ganesha's own fattr4 decoder
 *    (nfs4_Fattr_To_FSAL_attr, as SETATTR uses it), so that owner and
 *    owner_group strings go through Ganesha's idmapper exactly like SETATTR's.
 */
#ifndef FF_WCC_FATTR_SHIM_H
#define FF_WCC_FATTR_SHIM_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct fsal_export;
struct fsal_obj_handle;

/* Bits of ff_wcc_attrs.valid; the same values as flexfiles::wcc::AttrBit. */
#define FF_WCC_A_SIZE 0x01u
#define FF_WCC_A_SPACE_USED 0x02u
#define FF_WCC_A_MODE 0x04u
#define FF_WCC_A_OWNER 0x08u
#define FF_WCC_A_GROUP 0x10u
#define FF_WCC_A_ATIME 0x20u
#define FF_WCC_A_MTIME 0x40u
#define FF_WCC_A_CTIME 0x80u

struct ff_wcc_time {
	int64_t sec;
	uint32_t nsec;
};

struct ff_wcc_attrs {
	uint32_t valid;
	uint64_t size;
	uint64_t space_used;
	uint32_t mode; /* permission bits (07777) */
	uint32_t uid;
	uint32_t gid;
	struct ff_wcc_time atime;
	struct ff_wcc_time mtime;
	struct ff_wcc_time ctime;
};

/*
 * Decodes one fattr4 (bitmap words and attr_vals) with Ganesha's decoder.
 * Returns an nfsstat4: NFS4_OK, NFS4ERR_BADXDR (values short, long or
 * garbled), NFS4ERR_INVAL (e.g. nseconds >= 1e9), NFS4ERR_BADOWNER (an owner
 * string the idmapper cannot map), NFS4ERR_ATTRNOTSUPP (an attribute the
 * decoder cannot read back). Must run with op_ctx set (a worker thread).
 */
int ff_wcc_decode_fattr4(const uint32_t *mask_words, unsigned int nwords,
			 const char *vals, unsigned int len,
			 struct ff_wcc_attrs *out);

#ifdef __cplusplus
}
#endif

#endif /* FF_WCC_FATTR_SHIM_H */
