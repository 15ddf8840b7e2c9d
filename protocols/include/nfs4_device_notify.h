/* SPDX-License-Identifier: LGPL-3.0-or-later */
/*
 * pNFS device ID notifications (RFC 8881 sections 18.40 and 20.12).
 *
 * A client asks for notifications about one device ID in GETDEVICEINFO
 * (gdia_notify_types); the server answers, in gdir_notification, the ones it
 * will send, and must not send others (section 18.40.3).  So the grants are
 * kept per client and per device ID: a table owned by the client record
 * (nfs_client_id_t's cid_devnotify, under cid_mutex), which a later
 * GETDEVICEINFO of the same device ID replaces and a
 * NOTIFY_DEVICEID4_DELETE ends.  Only device IDs an FSAL resolved are ever
 * recorded, so a table has at most one entry per device of the server
 * (and never more than NFS4_DEVNOTIFY_MAX_DEVICES).
 *
 * The XDR of one change of CB_NOTIFY_DEVICEID (section 20.12): a notify4
 * whose notify_mask has the one bit of the change's type and whose
 * notify_vals is the XDR encoding of notify_deviceid_delete4 or
 * notify_deviceid_change4 (section 3.3.11).
 *
 * Nothing here locks, logs or looks at a client record: the callers do.
 */
#ifndef NFS4_DEVICE_NOTIFY_H
#define NFS4_DEVICE_NOTIFY_H

#include <stdbool.h>
#include <stdint.h>

#include "nfsv41.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The notify_deviceid_type4 bits there are (RFC 8881 section 20.12). */
#define NFS4_DEVNOTIFY_TYPES \
	(NOTIFY_DEVICEID4_CHANGE_MASK | NOTIFY_DEVICEID4_DELETE_MASK)

/* The most device IDs one client holds grants for. */
#define NFS4_DEVNOTIFY_MAX_DEVICES 1024

/* The largest notify_vals: layouttype4, deviceid4, bool (change4). */
#define NFS4_DEVNOTIFY_VALS_MAX (2 * BYTES_PER_XDR_UNIT + NFS4_DEVICEID4_SIZE)

/* One client's grants; NULL is the empty table. */
struct nfs4_devnotify_grants;

/**
 * @brief Record what one GETDEVICEINFO grants
 *
 * @param[in,out] grants  The client's table (may be NULL; allocated here)
 * @param[in] type        The device's layout type
 * @param[in] id          The device ID
 * @param[in] asked       gdia_notify_types' first word
 * @param[in] offered     What the FSAL can send (fs_info.pnfs_device_notify)
 *
 * @return The bits to answer in gdir_notification: asked & offered, or 0
 *         when the table is full.  The device's previous grant is replaced;
 *         0 removes it.
 */
uint32_t nfs4_devnotify_grant(struct nfs4_devnotify_grants **grants,
			      layouttype4 type, const deviceid4 id,
			      uint32_t asked, uint32_t offered);

/* The notify_deviceid_type4 bits granted for (type, id), or 0. */
uint32_t nfs4_devnotify_granted(const struct nfs4_devnotify_grants *grants,
				layouttype4 type, const deviceid4 id);

/* Drops the grant for (type, id), if any (the device was deleted). */
void nfs4_devnotify_forget(struct nfs4_devnotify_grants **grants,
			   layouttype4 type, const deviceid4 id);

/* Frees the table and sets *grants to NULL. */
void nfs4_devnotify_free(struct nfs4_devnotify_grants **grants);

/**
 * @brief Encode one change of a CB_NOTIFY_DEVICEID
 *
 * @param[out] change      notify_mask and notify_vals (pointing into vals)
 * @param[out] vals        Buffer for notify_vals
 * @param[in] notify_type  NOTIFY_DEVICEID4_CHANGE or NOTIFY_DEVICEID4_DELETE
 * @param[in] layout_type  The device's layout type
 * @param[in] id           The device ID
 * @param[in] immediate    ndc_immediate (CHANGE only)
 *
 * @return false for another notify_type (nothing encoded).
 */
bool nfs4_devnotify_encode(notify4 *change,
			   char vals[NFS4_DEVNOTIFY_VALS_MAX],
			   notify_deviceid_type4 notify_type,
			   layouttype4 layout_type, const deviceid4 id,
			   bool immediate);

#ifdef __cplusplus
}
#endif

#endif /* NFS4_DEVICE_NOTIFY_H */
