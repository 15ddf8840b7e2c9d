// SPDX-License-Identifier: LGPL-3.0-or-later
/*
 * Noticing a client that retries a failing operation without end (see
 * include/nfs4_retry_storm.h).
 *
 * One slot per client, in a small table indexed by the clientid's hash: a
 * collision only restarts a slot's count, which can delay noticing a storm
 * by a second but never invents one (a storm needs one key for the whole
 * count).  Each slot has its own mutex, held for a few loads and stores; the
 * log line is written after it is released.
 */
#include "config.h"

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "fsal.h"
#include "log.h"
#include "nfs4_retry_storm.h"
#include "nfs_convert.h"
#include "nfs_core.h"
#include "nfs_proto_data.h"
#include "sal_data.h"

#define STORM_SLOTS 256

struct storm_slot {
	pthread_mutex_t mtx;
	clientid4 clientid;
	int opcode;
	int status;
	time_t second;		/* the second being counted */
	uint32_t count;		/* failures of (clientid, opcode, status) */
	time_t logged;		/* when this slot last logged a storm */
};

static struct storm_slot slots[STORM_SLOTS] = {
	[0 ... STORM_SLOTS - 1] = { .mtx = PTHREAD_MUTEX_INITIALIZER }
};

static _Atomic uint64_t storms;

uint64_t nfs4_retry_storms(void)
{
	return atomic_load_explicit(&storms, memory_order_relaxed);
}

void nfs4_note_failed_op(struct compound_data *data, int opcode, int status)
{
	struct storm_slot *slot;
	clientid4 clientid;
	uint64_t fileid;
	uint32_t count = 0;
	bool log_it = false;
	time_t now;

	if (data->session == NULL || data->session->clientid_record == NULL)
		return;		/* NFSv4.0 and SEQUENCE-less errors: not here */

	clientid = data->session->clientid_record->cid_clientid;
	fileid = data->current_obj != NULL ? data->current_obj->fileid : 0;
	now = time(NULL);
	slot = &slots[(clientid ^ (clientid >> 32)) % STORM_SLOTS];

	PTHREAD_MUTEX_lock(&slot->mtx);
	if (slot->clientid != clientid || slot->opcode != opcode ||
	    slot->status != status || slot->second != now) {
		slot->clientid = clientid;
		slot->opcode = opcode;
		slot->status = status;
		slot->second = now;
		slot->count = 0;
	}
	if (++slot->count == NFS4_RETRY_STORM_PER_SECOND) {
		atomic_fetch_add_explicit(&storms, 1, memory_order_relaxed);
		if (now - slot->logged >= NFS4_RETRY_STORM_LOG_INTERVAL) {
			slot->logged = now;
			log_it = true;
			count = slot->count;
		}
	}
	PTHREAD_MUTEX_unlock(&slot->mtx);

	if (log_it)
		LogEvent(COMPONENT_NFS_V4,
			 "client %" PRIx64
			 " retries a failing operation: %u x %s answered %s within one second (last on fileid %"
			 PRIu64 "); %" PRIu64 " such second(s) so far",
			 (uint64_t) clientid, count, nfsop4_to_str(opcode),
			 nfsstat4_to_str(status), fileid, nfs4_retry_storms());
}
