/* SPDX-License-Identifier: LGPL-3.0-or-later */
/*
 * vim:noexpandtab:shiftwidth=8:tabstop=8:
 *
 * This program is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Lesser General Public License
 * as published by the Free Software Foundation; either version 3 of
 * the License, or (at your option) any later version.
 *
 * This program is distributed in the hope that it will be useful, but
 * WITHOUT ANY WARRANTY; without even the implied warranty of
 * MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE.  See the GNU
 * Lesser General Public License for more details.
 *
 * You should have received a copy of the GNU Lesser General Public
 * License along with this library; if not, see
 * <https://www.gnu.org/licenses/>.
 */

/**
 * @file nfs4_layout_wcc_xdr.h
 * @brief NFSv4.2 LAYOUT_WCC (operation 77, RFC 9766): types and XDR
 *
 * The RFC's XDR (section 3, the flex-files body in section 3.7):
 *
 *   struct LAYOUT_WCC4args {
 *           stateid4        lowa_stateid;
 *           layouttype4     lowa_type;
 *           opaque          lowa_body<>;
 *   };
 *
 *   struct LAYOUT_WCC4res {
 *           nfsstat4        lowr_status;
 *   };
 *
 *   struct ff_data_server_wcc4 {
 *           deviceid4       ffdsw_deviceid;
 *           stateid4        ffdsw_stateid;
 *           nfs_fh4         ffdsw_fh_vers<>;
 *           fattr4          ffdsw_attributes;
 *   };
 *
 *   struct ff_mirror_wcc4 {
 *           ff_data_server_wcc4 ffmw_data_servers<>;
 *   };
 *
 *   struct ff_layout_wcc4 {
 *           ff_mirror_wcc4  fflw_mirrors<>;
 *   };
 *
 * The RFC leaves every array unbounded; this implementation bounds each
 * one (the limits below) so that a hostile length fails the decode before
 * anything is allocated.  The routines follow include/nfsv41.h: one
 * static inline bool xdr_<type>() per type, working for XDR_ENCODE,
 * XDR_DECODE and XDR_FREE.  After a failed decode the partially filled
 * structure is still consistent and must be released with xdr_free() (or
 * the *_free() helpers below), exactly as for any rpcgen-style type.
 *
 * How this header is included: the patched nfsv41.h includes it twice,
 * once with NFS4_LAYOUT_WCC_TYPES_ONLY defined just before struct
 * nfs_argop4 (types only, they go into the argop/resop unions) and once
 * without, just before xdr_nfs_argop4() (the XDR routines).  Any other
 * user simply includes this header (or nfsv41.h); it includes nfsv41.h
 * first, which does the two steps in the right places.  It compiles as C
 * and as C++ (the declarations sit inside extern "C").
 */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
/* Outside the include guards on purpose: see the note above. */
#include "nfsv41.h"

/* ------------------------------------------------------------------ */
/* Types                                                              */
/* ------------------------------------------------------------------ */

#ifndef NFS4_LAYOUT_WCC_XDR_TYPES
#define NFS4_LAYOUT_WCC_XDR_TYPES

#ifdef __cplusplus
extern "C" {
#endif

/** Largest lowa_body accepted or produced, in bytes. */
#define LAYOUT_WCC4_BODY_MAX 65536

/** Largest number of mirrors in one ff_layout_wcc4. */
#define FF_WCC4_MIRRORS_MAX 32

/** Largest number of data servers in one ff_mirror_wcc4. */
#define FF_WCC4_DATA_SERVERS_MAX 32

/** Largest number of filehandles (one per NFS version) per data server;
 *  each filehandle is itself bounded by NFS4_FHSIZE.
 */
#define FF_WCC4_FH_VERS_MAX 8

/** Largest bitmap4 (in 32-bit words) in ffdsw_attributes.  Words past
 *  BITMAP4_MAPLEN are read and discarded, as Ganesha's xdr_bitmap4 does.
 */
#define FF_WCC4_BITMAP_WORDS_MAX 8

/** Largest attr_vals of ffdsw_attributes, in bytes.  The eight Table 1
 *  attributes take 64 bytes plus the owner and owner_group strings.
 */
#define FF_WCC4_ATTR_VALS_MAX 4096

struct LAYOUT_WCC4args {
	stateid4 lowa_stateid;
	layouttype4 lowa_type;
	struct {
		u_int lowa_body_len;
		char *lowa_body_val;
	} lowa_body;
};
typedef struct LAYOUT_WCC4args LAYOUT_WCC4args;

struct LAYOUT_WCC4res {
	nfsstat4 lowr_status;
};
typedef struct LAYOUT_WCC4res LAYOUT_WCC4res;

struct ff_data_server_wcc4 {
	deviceid4 ffdsw_deviceid;
	stateid4 ffdsw_stateid;
	struct {
		u_int ffdsw_fh_vers_len;
		nfs_fh4 *ffdsw_fh_vers_val;
	} ffdsw_fh_vers;
	fattr4 ffdsw_attributes;
};
typedef struct ff_data_server_wcc4 ff_data_server_wcc4;

struct ff_mirror_wcc4 {
	struct {
		u_int ffmw_data_servers_len;
		ff_data_server_wcc4 *ffmw_data_servers_val;
	} ffmw_data_servers;
};
typedef struct ff_mirror_wcc4 ff_mirror_wcc4;

struct ff_layout_wcc4 {
	struct {
		u_int fflw_mirrors_len;
		ff_mirror_wcc4 *fflw_mirrors_val;
	} fflw_mirrors;
};
typedef struct ff_layout_wcc4 ff_layout_wcc4;

#ifdef __cplusplus
}
#endif

#endif /* NFS4_LAYOUT_WCC_XDR_TYPES */

/* ------------------------------------------------------------------ */
/* XDR routines and helpers                                           */
/* ------------------------------------------------------------------ */

#if !defined(NFS4_LAYOUT_WCC_TYPES_ONLY) && !defined(NFS4_LAYOUT_WCC_XDR_FUNCS)
#define NFS4_LAYOUT_WCC_XDR_FUNCS

#ifdef __cplusplus
extern "C" {
#endif

static inline bool xdr_LAYOUT_WCC4args(XDR *xdrs, LAYOUT_WCC4args *objp)
{
	if (!xdr_stateid4(xdrs, &objp->lowa_stateid))
		return false;
	if (!xdr_layouttype4(xdrs, &objp->lowa_type))
		return false;
	if (!inline_xdr_bytes(xdrs, (char **)&objp->lowa_body.lowa_body_val,
			      &objp->lowa_body.lowa_body_len,
			      LAYOUT_WCC4_BODY_MAX))
		return false;
	return true;
}

static inline bool xdr_LAYOUT_WCC4res(XDR *xdrs, LAYOUT_WCC4res *objp)
{
	if (!xdr_nfsstat4(xdrs, &objp->lowr_status))
		return false;
	return true;
}

/**
 * @brief bitmap4 with a bounded word count
 *
 * Same result as xdr_bitmap4() (words past BITMAP4_MAPLEN are dropped),
 * but a count above FF_WCC4_BITMAP_WORDS_MAX fails at once.
 */
static inline bool xdr_ff_wcc4_bitmap4(XDR *xdrs, struct bitmap4 *objp)
{
	u_int i, count;

	if (xdrs->x_op == XDR_FREE)
		return true;

	if (xdrs->x_op == XDR_ENCODE && objp->bitmap4_len > BITMAP4_MAPLEN)
		return false;

	if (!inline_xdr_u_int(xdrs, &objp->bitmap4_len))
		return false;

	count = objp->bitmap4_len;
	if (count > FF_WCC4_BITMAP_WORDS_MAX)
		return false;

	for (i = 0; i < count; i++) {
		uint32_t discard = 0;
		uint32_t *word = i < BITMAP4_MAPLEN ? &objp->map[i] : &discard;

		if (!inline_xdr_u_int32_t(xdrs, word))
			return false;
	}

	if (xdrs->x_op == XDR_DECODE && count > BITMAP4_MAPLEN)
		objp->bitmap4_len = BITMAP4_MAPLEN;
	return true;
}

/** fattr4 with both parts bounded (see the limits above). */
static inline bool xdr_ff_wcc4_fattr4(XDR *xdrs, fattr4 *objp)
{
	if (!xdr_ff_wcc4_bitmap4(xdrs, &objp->attrmask))
		return false;
	if (!inline_xdr_bytes(xdrs, (char **)&objp->attr_vals.attrlist4_val,
			      &objp->attr_vals.attrlist4_len,
			      FF_WCC4_ATTR_VALS_MAX))
		return false;
	return true;
}

static inline bool xdr_ff_data_server_wcc4(XDR *xdrs, ff_data_server_wcc4 *objp)
{
	if (!xdr_deviceid4(xdrs, objp->ffdsw_deviceid))
		return false;
	if (!xdr_stateid4(xdrs, &objp->ffdsw_stateid))
		return false;
	if (!xdr_array(xdrs, (char **)&objp->ffdsw_fh_vers.ffdsw_fh_vers_val,
		       &objp->ffdsw_fh_vers.ffdsw_fh_vers_len,
		       FF_WCC4_FH_VERS_MAX, sizeof(nfs_fh4),
		       (xdrproc_t)xdr_nfs_fh4))
		return false;
	if (!xdr_ff_wcc4_fattr4(xdrs, &objp->ffdsw_attributes))
		return false;
	return true;
}

static inline bool xdr_ff_mirror_wcc4(XDR *xdrs, ff_mirror_wcc4 *objp)
{
	if (!xdr_array(xdrs,
		       (char **)&objp->ffmw_data_servers.ffmw_data_servers_val,
		       &objp->ffmw_data_servers.ffmw_data_servers_len,
		       FF_WCC4_DATA_SERVERS_MAX, sizeof(ff_data_server_wcc4),
		       (xdrproc_t)xdr_ff_data_server_wcc4))
		return false;
	return true;
}

static inline bool xdr_ff_layout_wcc4(XDR *xdrs, ff_layout_wcc4 *objp)
{
	if (!xdr_array(xdrs, (char **)&objp->fflw_mirrors.fflw_mirrors_val,
		       &objp->fflw_mirrors.fflw_mirrors_len,
		       FF_WCC4_MIRRORS_MAX, sizeof(ff_mirror_wcc4),
		       (xdrproc_t)xdr_ff_mirror_wcc4))
		return false;
	return true;
}

/**
 * @brief Release everything a decode of an ff_layout_wcc4 allocated
 *
 * Safe after a failed decode and on a zeroed structure.  Leaves the
 * structure zeroed.
 */
static inline void ff_layout_wcc4_free(ff_layout_wcc4 *objp)
{
	xdr_free((xdrproc_t)xdr_ff_layout_wcc4, objp);
	memset(objp, 0, sizeof(*objp));
}

/**
 * @brief Decode a complete LAYOUT4_FLEX_FILES lowa_body
 *
 * @param[in]  body  The opaque body (may be NULL when len is 0)
 * @param[in]  len   Its length
 * @param[out] out   Decoded body; release with ff_layout_wcc4_free()
 *
 * @retval true  the body decoded and every byte of it was used.
 * @retval false malformed, over a bound, or trailing bytes; nothing is
 *               left allocated and *out is zeroed.
 */
static inline bool ff_layout_wcc4_decode(const char *body, u_int len,
					 ff_layout_wcc4 *out)
{
	XDR xdrs;
	bool ok;

	memset(out, 0, sizeof(*out));
	/* No bytes (a NULL body) is not an ff_layout_wcc4, which starts
	 * with its mirror count; and no XDR stream over a NULL buffer.
	 */
	if (body == NULL || len > LAYOUT_WCC4_BODY_MAX)
		return false;

	/* ntirpc's xdrmem_ncreate() aborts on a buffer that is not 4-byte
	 * aligned. Ganesha's decoded opaques are; a caller's bytes may not be.
	 */
	if (((uintptr_t)body & 3) != 0) {
		uint32_t *copy = (uint32_t *)malloc(len + 4);

		if (copy == NULL)
			return false;
		memcpy(copy, body, len);
		ok = ff_layout_wcc4_decode((const char *)copy, len, out);
		free(copy);
		return ok;
	}

	xdrmem_create(&xdrs, (char *)body, len, XDR_DECODE);
	ok = xdr_ff_layout_wcc4(&xdrs, out) && xdr_getpos(&xdrs) == len;
	xdr_destroy(&xdrs);

	if (!ok)
		ff_layout_wcc4_free(out);
	return ok;
}

/**
 * @brief Encode an ff_layout_wcc4 into a caller's buffer
 *
 * @param[in]  body  What to encode
 * @param[out] buf   Destination
 * @param[in]  size  Its size
 * @param[out] len   Bytes written
 *
 * @retval false a bound is exceeded or the buffer is too small.
 */
static inline bool ff_layout_wcc4_encode(const ff_layout_wcc4 *body, char *buf,
					 u_int size, u_int *len)
{
	XDR xdrs;
	bool ok;

	xdrmem_create(&xdrs, buf, size, XDR_ENCODE);
	ok = xdr_ff_layout_wcc4(&xdrs, (ff_layout_wcc4 *)body);
	*len = ok ? xdr_getpos(&xdrs) : 0;
	xdr_destroy(&xdrs);
	return ok && *len <= LAYOUT_WCC4_BODY_MAX;
}

/** Word/bit of an attribute number in a bitmap4. */
#define FF_WCC4_ATTR_BIT(attr) (1U << ((attr) % 32))

/**
 * @brief The attributes RFC 9766 Table 1 requires, as bitmap words
 *
 * size (4), mode (33), owner (36), owner_group (37), space_used (45),
 * time_access (47), time_metadata (52), time_modify (53).
 */
#define FF_WCC4_TABLE1_WORD0 FF_WCC4_ATTR_BIT(FATTR4_SIZE)
#define FF_WCC4_TABLE1_WORD1                                                   \
	(FF_WCC4_ATTR_BIT(FATTR4_MODE) | FF_WCC4_ATTR_BIT(FATTR4_OWNER) |      \
	 FF_WCC4_ATTR_BIT(FATTR4_OWNER_GROUP) |                                \
	 FF_WCC4_ATTR_BIT(FATTR4_SPACE_USED) |                                 \
	 FF_WCC4_ATTR_BIT(FATTR4_TIME_ACCESS) |                                \
	 FF_WCC4_ATTR_BIT(FATTR4_TIME_METADATA) |                              \
	 FF_WCC4_ATTR_BIT(FATTR4_TIME_MODIFY))

/**
 * @brief Does a bitmap name only RFC 9766 Table 1 attributes?
 *
 * An empty mask is valid (a mirror the client has nothing new for).
 */
static inline bool ff_wcc4_attrmask_is_table1(const struct bitmap4 *mask)
{
	u_int i;

	for (i = 0; i < mask->bitmap4_len && i < BITMAP4_MAPLEN; i++) {
		uint32_t allowed = i == 0   ? FF_WCC4_TABLE1_WORD0
				   : i == 1 ? FF_WCC4_TABLE1_WORD1
					    : 0;

		if (mask->map[i] & ~allowed)
			return false;
	}
	return true;
}

#ifdef __cplusplus
}
#endif

#endif /* NFS4_LAYOUT_WCC_XDR_FUNCS */
