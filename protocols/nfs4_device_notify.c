// SPDX-License-Identifier: LGPL-3.0-or-later
/*
 * pNFS device ID notifications: the per-client grants and the XDR of one
 * CB_NOTIFY_DEVICEID change (see include/nfs4_device_notify.h).
 *
 * A client's table is a small array searched linearly: it has one entry per
 * device the client asked about, which for a flex-files MDS is one per data
 * server.
 */
#include "config.h"

#include <string.h>

#include "abstract_mem.h"
#include "nfs4_device_notify.h"

struct nfs4_devnotify_grant {
	layouttype4 type;
	deviceid4 id;
	uint32_t granted;	/* NOTIFY_DEVICEID4_*_MASK bits */
};

struct nfs4_devnotify_grants {
	uint32_t count;
	uint32_t size;		/* entries allocated */
	struct nfs4_devnotify_grant grant[];
};

static struct nfs4_devnotify_grant *
find_grant(const struct nfs4_devnotify_grants *grants, layouttype4 type,
	   const deviceid4 id)
{
	uint32_t i;

	if (grants == NULL)
		return NULL;

	for (i = 0; i < grants->count; i++) {
		const struct nfs4_devnotify_grant *g = &grants->grant[i];

		if (g->type == type &&
		    memcmp(g->id, id, NFS4_DEVICEID4_SIZE) == 0)
			return (struct nfs4_devnotify_grant *)g;
	}
	return NULL;
}

uint32_t nfs4_devnotify_grant(struct nfs4_devnotify_grants **grants,
			      layouttype4 type, const deviceid4 id,
			      uint32_t asked, uint32_t offered)
{
	uint32_t granted = asked & offered & NFS4_DEVNOTIFY_TYPES;
	struct nfs4_devnotify_grant *g = find_grant(*grants, type, id);
	struct nfs4_devnotify_grants *table = *grants;

	if (granted == 0) {
		nfs4_devnotify_forget(grants, type, id);
		return 0;
	}
	if (g != NULL) {
		g->granted = granted;
		return granted;
	}
	if (table != NULL && table->count >= NFS4_DEVNOTIFY_MAX_DEVICES)
		return 0;
	if (table == NULL || table->count == table->size) {
		uint32_t size = table == NULL ? 4 : 2 * table->size;

		if (size > NFS4_DEVNOTIFY_MAX_DEVICES)
			size = NFS4_DEVNOTIFY_MAX_DEVICES;
		table = gsh_realloc(table, sizeof(*table) +
					   size * sizeof(table->grant[0]));
		if (*grants == NULL)
			table->count = 0;
		table->size = size;
		*grants = table;
	}
	g = &table->grant[table->count++];
	g->type = type;
	memcpy(g->id, id, NFS4_DEVICEID4_SIZE);
	g->granted = granted;
	return granted;
}

uint32_t nfs4_devnotify_granted(const struct nfs4_devnotify_grants *grants,
				layouttype4 type, const deviceid4 id)
{
	const struct nfs4_devnotify_grant *g = find_grant(grants, type, id);

	return g != NULL ? g->granted : 0;
}

void nfs4_devnotify_forget(struct nfs4_devnotify_grants **grants,
			   layouttype4 type, const deviceid4 id)
{
	struct nfs4_devnotify_grants *table = *grants;
	struct nfs4_devnotify_grant *g = find_grant(table, type, id);

	if (g == NULL)
		return;

	/* The order of the entries does not matter: the last one fills in. */
	*g = table->grant[--table->count];
	if (table->count == 0)
		nfs4_devnotify_free(grants);
}

void nfs4_devnotify_free(struct nfs4_devnotify_grants **grants)
{
	gsh_free(*grants);
	*grants = NULL;
}

bool nfs4_devnotify_encode(notify4 *change,
			   char vals[NFS4_DEVNOTIFY_VALS_MAX],
			   notify_deviceid_type4 notify_type,
			   layouttype4 layout_type, const deviceid4 id,
			   bool immediate)
{
	XDR xdrs;
	bool ok;

	memset(change, 0, sizeof(*change));
	xdrmem_create(&xdrs, vals, NFS4_DEVNOTIFY_VALS_MAX, XDR_ENCODE);

	switch (notify_type) {
	case NOTIFY_DEVICEID4_DELETE: {
		notify_deviceid_delete4 del = { .ndd_layouttype = layout_type };

		memcpy(del.ndd_deviceid, id, NFS4_DEVICEID4_SIZE);
		ok = xdr_notify_deviceid_delete4(&xdrs, &del);
		break;
	}
	case NOTIFY_DEVICEID4_CHANGE: {
		notify_deviceid_change4 chg = { .ndc_layouttype = layout_type,
						.ndc_immediate = immediate };

		memcpy(chg.ndc_deviceid, id, NFS4_DEVICEID4_SIZE);
		ok = xdr_notify_deviceid_change4(&xdrs, &chg);
		break;
	}
	default:
		ok = false;
		break;
	}

	if (ok) {
		change->notify_mask.bitmap4_len = 1;
		change->notify_mask.map[0] = 1U << notify_type;
		change->notify_vals.notifylist4_len = xdr_getpos(&xdrs);
		change->notify_vals.notifylist4_val = vals;
	}
	xdr_destroy(&xdrs);
	return ok;
}
