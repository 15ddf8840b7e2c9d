// SPDX-License-Identifier: LGPL-3.0-or-later
/*
 * Forwarders for pnfs/ to Ganesha functions whose headers do not compile
 * as C++ (see sal_shim.h).
 */
#include "config.h" /* Ganesha's build configuration, first as in Ganesha */
/* then the rest (fsal.h first: the others need its types) */
#include "export_mgr.h"
#include "fridgethr.h"
#include "fsal.h"
#include "fsal_up.h"
#include "ganesha/sal_shim.h"
#include "sal_data.h"
#include "sal_functions.h"

#include <string.h>

bool ff_layout_find_export(struct fsal_module *fsal,
			   bool (*match)(struct fsal_export *exp, void *arg),
			   void *arg)
{
	struct glist_head *node;
	bool found = false;

	if (fsal == NULL || match == NULL)
		return false;

	PTHREAD_RWLOCK_rdlock(&fsal->lock);
	glist_for_each(node, &fsal->exports)
	{
		struct fsal_export *exp =
			glist_entry(node, struct fsal_export, exports);

		if (match(exp, arg)) {
			found = true;
			break;
		}
	}
	PTHREAD_RWLOCK_unlock(&fsal->lock);
	return found;
}

struct recall_done {
	void (*cb)(void *cb_arg, int status);
	void *cb_arg;
};

static void recall_issued(void *arg, state_status_t status)
{
	struct recall_done *done = arg;

	done->cb(done->cb_arg, (int)status);
	gsh_free(done);
}

int ff_layout_async_recall(const struct fsal_up_vector *vec, const void *key,
			   size_t key_len, bool changed, bool rw_only,
			   uint64_t except_client,
			   void (*cb)(void *cb_arg, int status), void *cb_arg)
{
	struct gsh_buffdesc handle = { .addr = (void *)key, .len = key_len };
	struct pnfs_segment whole = { .io_mode = rw_only ? LAYOUTIOMODE4_RW :
							   LAYOUTIOMODE4_ANY,
				      .offset = 0,
				      .length = NFS4_UINT64_MAX };
	struct layoutrecall_spec spec = {
		.how = layoutrecall_howspec_complement,
		.u.client = except_client
	};
	struct recall_done *done;
	fsal_status_t st;

	if (vec == NULL || key == NULL || key_len == 0 || cb == NULL)
		return EINVAL;

	done = gsh_malloc(sizeof(*done));
	done->cb = cb;
	done->cb_arg = cb_arg;
	st = up_async_layoutrecall(general_fridge, vec, &handle,
				   LAYOUT4_FLEX_FILES, changed, &whole, NULL,
				   except_client != 0 ? &spec : NULL,
				   recall_issued, done);
	if (FSAL_IS_ERROR(st)) {
		gsh_free(done);
		return st.minor != 0 ? st.minor : EIO;
	}
	return 0;
}

int ff_notify_device(const struct fsal_up_vector *vec, const void *deviceid,
		     size_t len, bool deleted, bool immediate)
{
	struct pnfs_deviceid devid;
	state_status_t status;

	if (vec == NULL || vec->notify_device == NULL || deviceid == NULL ||
	    len != sizeof(devid))
		return EINVAL;

	memcpy(&devid, deviceid, sizeof(devid));
	status = vec->notify_device(deleted ? NOTIFY_DEVICEID4_DELETE
					    : NOTIFY_DEVICEID4_CHANGE,
				    LAYOUT4_FLEX_FILES, devid, immediate);
	return status == STATE_SUCCESS ? 0 : EIO;
}

bool ff_gsh_in_grace(void)
{
	return nfs_in_grace();
}

struct gsh_export *ff_layout_ctx_export_get(void)
{
	if (op_ctx == NULL || op_ctx->ctx_export == NULL)
		return NULL;
	get_gsh_export_ref(op_ctx->ctx_export);
	return op_ctx->ctx_export;
}

void ff_layout_export_put(struct gsh_export *exp)
{
	if (exp != NULL)
		put_gsh_export(exp);
}

unsigned int ff_layout_state_segments(
	struct state_t *state,
	void (*cb)(void *seg_data, layoutiomode4 io_mode, void *arg), void *arg)
{
	struct glist_head *node;
	unsigned int n = 0;

	if (state == NULL || state->state_type != STATE_TYPE_LAYOUT)
		return 0;

	glist_for_each(node, &state->state_data.layout.state_segments)
	{
		state_layout_segment_t *seg = glist_entry(
			node, state_layout_segment_t, sls_state_segments);

		if (cb != NULL)
			cb(seg->sls_fsal_data, seg->sls_segment.io_mode, arg);
		n++;
	}
	return n;
}

struct fsal_obj_handle *ff_layout_state_lock(struct state_t *state)
{
	struct fsal_obj_handle *obj = get_state_obj_ref(state);

	if (obj != NULL)
		STATELOCK_lock(obj);
	return obj;
}

void ff_layout_state_unlock(struct fsal_obj_handle *obj)
{
	if (obj == NULL)
		return;
	STATELOCK_unlock(obj);
	obj->obj_ops->put_ref(obj);
}
