/* SPDX-License-Identifier: LGPL-3.0-or-later */
/*
 * What pnfs/ needs from Ganesha headers that do not compile as C++
 * (sal_functions.h, export_mgr.h, delayed_exec.h: see ganesha/shim.h for
 * why this is C), as functions with C++-clean signatures.
 */
#ifndef FF_LAYOUT_SAL_SHIM_H
#define FF_LAYOUT_SAL_SHIM_H

#include "fsal_api.h"

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct gsh_export;
struct state_t;

/*
 * Calls match(export, arg) for each export of `fsal`, under the module's
 * lock (exports cannot go away meanwhile), until it returns true. Returns
 * whether one did. `match` must not block.
 */
bool ff_layout_find_export(struct fsal_module *fsal,
			   bool (*match)(struct fsal_export *exp, void *arg),
			   void *arg);

/*
 * CB_LAYOUTRECALL of every layout of the file `key` names (a handle key as
 * the up-call vector's export looks it up: the sub-FSAL's handle_to_key),
 * of any iomode (only RW ones when `rw_only`), whole file, clora_changed =
 * `changed`, held by any client but
 * `except_client` (0: all clients). Queued on Ganesha's general fridge
 * (up_async_layoutrecall: an FSAL must not call the up-call inside its own
 * operations); cb(cb_arg, status) runs when the recall has been issued,
 * status STATE_SUCCESS, STATE_NOT_FOUND (nothing left to recall) or an
 * error. Returns 0 when queued (cb will run), an errno otherwise (it will
 * not).
 */
int ff_layout_async_recall(const struct fsal_up_vector *vec, const void *key,
			   size_t key_len, bool changed, bool rw_only,
			   uint64_t except_client,
			   void (*cb)(void *cb_arg, int status), void *cb_arg);

/*
 * CB_NOTIFY_DEVICEID of the flex-files device `deviceid` (16 bytes) through
 * the up-call vector's notify_device: NOTIFY_DEVICEID4_DELETE when
 * `deleted`, else NOTIFY_DEVICEID4_CHANGE with ndc_immediate = `immediate`.
 * The core queues one callback per client granted that notification and
 * returns. Returns 0, or an errno when nothing was queued.
 */
int ff_notify_device(const struct fsal_up_vector *vec, const void *deviceid,
		     size_t len, bool deleted, bool immediate);

/* Whether the server is in its grace period (nfs_in_grace). */
bool ff_gsh_in_grace(void);

/*
 * A reference to op_ctx's export (NULL without one); give it back with
 * ff_layout_export_put. Keeps the export, its FSAL export and its up-call
 * vector alive.
 */
struct gsh_export *ff_layout_ctx_export_get(void);
void ff_layout_export_put(struct gsh_export *exp);

/*
 * Calls cb(fsal_seg_data, io_mode, arg) for each segment of a layout state.
 * The caller holds the state lock of the state's object (Ganesha calls the
 * FSAL's layout methods that way). Returns the number of segments; 0 for a
 * NULL state or a state that is not a layout state.
 */
unsigned int ff_layout_state_segments(struct state_t *state,
				      void (*cb)(void *seg_data,
						 layoutiomode4 io_mode,
						 void *arg),
				      void *arg);

/*
 * The state lock (STATELOCK_lock) of the object a layout state belongs to,
 * for the layout methods Ganesha calls without it (layout_wcc: the FSAL
 * decodes the body first and takes the lock only to read the layout state and
 * apply). The object is the one Ganesha keeps the state on (MDCACHE's entry,
 * not the FSAL's own handle, which has no state_hdl). Returns the object,
 * referenced and locked, or NULL when the state no longer has one (it is
 * being freed); give it to ff_layout_state_unlock (NULL is fine).
 */
struct fsal_obj_handle *ff_layout_state_lock(struct state_t *state);
void ff_layout_state_unlock(struct fsal_obj_handle *obj);

#ifdef __cplusplus
}
#endif

#endif /* FF_LAYOUT_SAL_SHIM_H */
