// SPDX-License-Identifier: LGPL-3.0-or-later
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
 * @file nfs4_op_layout_wcc.c
 * @brief The NFSv4.2 LAYOUT_WCC operation (RFC 9766).
 */

#include "config.h"

#include <string.h>

#include "fsal.h"
#include "log.h"
#include "nfs4_layout_wcc_xdr.h"
#include "nfs_convert.h"
#include "nfs_core.h"
#include "nfs_proto_functions.h"
#include "nfs_proto_tools.h"
#include "sal_data.h"
#include "sal_functions.h"

/**
 * @brief Is a layout type one the export hands out?
 *
 * @param[in] export The FSAL export of the current filehandle
 * @param[in] type   lowa_type
 */
static bool layout_wcc_type_supported(struct fsal_export *export,
				      layouttype4 type)
{
	const layouttype4 *types = NULL;
	int32_t count = 0;
	int32_t i;

	export->exp_ops.fs_layouttypes(export, &count, &types);

	for (i = 0; i < count; i++) {
		if (types[i] == type)
			return true;
	}
	return false;
}

/**
 * @brief Does the layout state belong to the client of this session?
 *
 * nfs4_Check_Stateid checks the file and the seqid but accepts any
 * client's stateid; LAYOUT_WCC must only ever touch the caller's layout.
 *
 * The owner is read under the state's mutex, as get_state_obj_export_owner_refs
 * does, but without taking a reference: state_del_locked clears state_owner under
 * that mutex before it drops the state's own reference, so the owner cannot go
 * away while we look. (A reference costs two atomic operations on the owner, and
 * inc/dec_state_owner_ref each zero a 2 KiB log buffer on the stack.)
 *
 * @param[in] state The layout state
 * @param[in] data  Compound data (session of the caller)
 */
static bool layout_wcc_state_is_callers(state_t *state, compound_data_t *data)
{
	state_owner_t *owner;
	bool mine;

	if (data->session == NULL)
		return false;

	PTHREAD_MUTEX_lock(&state->state_mutex);
	owner = state->state_owner;
	mine = owner != NULL &&
	       owner->so_owner.so_nfs4_owner.so_clientrec ==
		       data->session->clientid_record;
	PTHREAD_MUTEX_unlock(&state->state_mutex);

	return mine;
}

/**
 * @brief Keep a FSAL's answer inside RFC 9766 Table 2
 *
 * @param[in] status What the FSAL's layout_wcc method returned
 *
 * @return The status itself, or NFS4ERR_SERVERFAULT for one Table 2 does
 *         not allow (logged, it is a FSAL bug).
 */
static nfsstat4 layout_wcc_fsal_status(nfsstat4 status)
{
	switch (status) {
	case NFS4_OK:
	case NFS4ERR_ADMIN_REVOKED:
	case NFS4ERR_BADXDR:
	case NFS4ERR_BAD_STATEID:
	case NFS4ERR_DEADSESSION:
	case NFS4ERR_DELAY:
	case NFS4ERR_DELEG_REVOKED:
	case NFS4ERR_EXPIRED:
	case NFS4ERR_FHEXPIRED:
	case NFS4ERR_GRACE:
	case NFS4ERR_INVAL:
	case NFS4ERR_ISDIR:
	case NFS4ERR_MOVED:
	case NFS4ERR_NOFILEHANDLE:
	case NFS4ERR_NOTSUPP:
	case NFS4ERR_NO_GRACE:
	case NFS4ERR_OLD_STATEID:
	case NFS4ERR_SERVERFAULT:
	case NFS4ERR_STALE:
	case NFS4ERR_UNKNOWN_LAYOUTTYPE:
	case NFS4ERR_WRONG_CRED:
	case NFS4ERR_WRONG_TYPE:
		return status;
	default:
		LogWarn(COMPONENT_PNFS,
			"LAYOUT_WCC: FSAL answered %s, not in RFC 9766 Table 2",
			nfsstat4_to_str(status));
		return NFS4ERR_SERVERFAULT;
	}
}

/**
 * @brief The NFS4_OP_LAYOUT_WCC operation
 *
 * Implements RFC 9766 section 3: the client hands the metadata server the
 * post-operation attributes its NFSv3 data servers returned for the data
 * files of one layout, so that the server may skip asking them.  The
 * current filehandle and lowa_stateid name the layout; lowa_type says how
 * to read lowa_body, which only the FSAL decodes.
 *
 * Checks, in this order (the first that fails sets the status):
 *  1. no current filehandle              NFS4ERR_NOFILEHANDLE
 *     (and Ganesha's usual bad-handle answers)
 *  2. current filehandle is a directory  NFS4ERR_ISDIR
 *  3. it is not a regular file           NFS4ERR_WRONG_TYPE
 *     (RFC 9766 Table 2; Ganesha's generic check would say INVAL)
 *  4. the export's FSAL does not implement LAYOUT_WCC
 *     (fs_supports(fso_layout_wcc) is false)  NFS4ERR_NOTSUPP
 *     This comes before the layout type and the stateid: the operation
 *     is OPTIONAL (section 3.6), per export.
 *  5. lowa_type is not among the export's fs_layouttypes
 *                                        NFS4ERR_UNKNOWN_LAYOUTTYPE
 *  6. lowa_stateid, through nfs4_Check_Stateid as LAYOUTCOMMIT and
 *     LAYOUTRETURN do (the "current stateid" is accepted):
 *     special stateids, another file's   NFS4ERR_BAD_STATEID
 *     old seqid                          NFS4ERR_OLD_STATEID
 *     expired lease                      NFS4ERR_EXPIRED
 *     state gone with its file           NFS4ERR_STALE
 *     STALE_STATEID and STALE_CLIENTID (an earlier server instance;
 *     moot under sessions per RFC 8881, absent from Table 2)
 *                                        NFS4ERR_BAD_STATEID
 *  7. the stateid is another client's, or not a layout stateid
 *                                        NFS4ERR_BAD_STATEID
 *  8. the layout's type differs from lowa_type: NFS4ERR_BAD_STATEID.
 *     lowa_type is supported (step 5), so UNKNOWN_LAYOUTTYPE would be
 *     wrong; the stateid names no layout of that type on this file,
 *     which is what BAD_STATEID says (Linux knfsd answers the same for
 *     a layout stateid of another type).
 *  9. the FSAL's layout_wcc method, called WITHOUT the object's state
 *     lock (it decodes the body, owner strings included, before it takes
 *     the lock for the layout state); its status is the result (a body it
 *     cannot decode gives NFS4ERR_BADXDR and changes nothing).  A status
 *     outside Table 2 becomes NFS4ERR_SERVERFAULT.
 *
 * Grace: LAYOUT_WCC is served during the grace period and never answers
 * NFS4ERR_GRACE here.  It reclaims nothing and creates no state; it can
 * only name a layout granted by this server instance (anything older
 * fails step 6), and what it carries are attributes of data files, which
 * a restart does not make unsafe to use.
 *
 * The result has no other field than the status: the server may ignore
 * any or all of the attributes (section 3).
 *
 * @param[in]     op    Arguments for nfs4_op
 * @param[in,out] data  Compound request's data
 * @param[out]    resp  Results for nfs4_op
 *
 * @return per RFC 9766 section 3.5, Table 2
 *
 * @see nfs4_Compound
 */
enum nfs_req_result nfs4_op_layout_wcc(struct nfs_argop4 *op,
				       compound_data_t *data,
				       struct nfs_resop4 *resp)
{
	/* Convenience alias for arguments */
	LAYOUT_WCC4args *const args = &op->nfs_argop4_u.oplayout_wcc;
	/* Convenience alias for response */
	LAYOUT_WCC4res *const res = &resp->nfs_resop4_u.oplayout_wcc;
	/* Tag for logging in state operations */
	const char *tag = "LAYOUT_WCC";
	/* Export of the current filehandle */
	struct fsal_export *export;
	/* State named by lowa_stateid */
	state_t *layout_state = NULL;
	/* lowa_body as handed to the FSAL */
	struct gsh_buffdesc body;
	nfsstat4 status;

	resp->resop = NFS4_OP_LAYOUT_WCC;

	status = nfs4_sanity_check_FH(data, NO_FILE_TYPE, false);
	if (status != NFS4_OK)
		goto out;

	if (data->current_filetype == DIRECTORY) {
		status = NFS4ERR_ISDIR;
		goto out;
	}

	if (data->current_filetype != REGULAR_FILE) {
		status = NFS4ERR_WRONG_TYPE;
		goto out;
	}

	export = op_ctx->fsal_export;

	if (!export->exp_ops.fs_supports(export, fso_layout_wcc)) {
		status = NFS4ERR_NOTSUPP;
		goto out;
	}

	if (!layout_wcc_type_supported(export, args->lowa_type)) {
		status = NFS4ERR_UNKNOWN_LAYOUTTYPE;
		goto out;
	}

	status = nfs4_Check_Stateid(&args->lowa_stateid, data->current_obj,
				    &layout_state, data,
				    STATEID_SPECIAL_CURRENT, 0, false, tag);
	if (status == NFS4ERR_STALE_STATEID || status == NFS4ERR_STALE_CLIENTID)
		status = NFS4ERR_BAD_STATEID;
	if (status != NFS4_OK)
		goto out;

	if (layout_state == NULL ||
	    layout_state->state_type != STATE_TYPE_LAYOUT ||
	    !layout_wcc_state_is_callers(layout_state, data)) {
		status = NFS4ERR_BAD_STATEID;
		goto out;
	}

	if (layout_state->state_data.layout.state_layout_type !=
	    args->lowa_type) {
		status = NFS4ERR_BAD_STATEID;
		goto out;
	}

	body.addr = args->lowa_body.lowa_body_val;
	body.len = args->lowa_body.lowa_body_len;

	/* Without the state lock: the FSAL decodes the body (up to 64 KiB, owner
	 * strings through the idmapper) first and takes the lock itself only
	 * around what needs it (the layout state's segments, the apply).
	 * layout_state stays referenced until out.
	 */
	status = data->current_obj->obj_ops->layout_wcc(
	    data->current_obj, args->lowa_type, layout_state, &body, NULL);

	status = layout_wcc_fsal_status(status);

out:

	if (layout_state != NULL)
		dec_state_t_ref(layout_state);

	if (status != NFS4_OK)
		LogDebug(COMPONENT_PNFS, "LAYOUT_WCC type %d body %u bytes: %s",
			 (int)args->lowa_type, args->lowa_body.lowa_body_len,
			 nfsstat4_to_str(status));

	res->lowr_status = status;

	return nfsstat4_to_nfs_req_result(res->lowr_status);
} /* nfs4_op_layout_wcc */

/**
 * @brief Free memory allocated for the LAYOUT_WCC result
 *
 * The result is a status only.
 *
 * @param[in,out] resp  Results for nfs4_op
 */
void nfs4_op_layout_wcc_Free(nfs_resop4 *resp)
{
	/* Nothing to be done */
}
