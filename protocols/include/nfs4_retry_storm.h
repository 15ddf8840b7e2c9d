/* SPDX-License-Identifier: LGPL-3.0-or-later */
/*
 * Noticing a client that retries a failing operation without end.
 *
 * A client that keeps sending an operation the server keeps refusing the
 * same way (the Linux client's LAYOUTCOMMIT answered NFS4ERR_OLD_STATEID
 * after a layout recall, about 2,000 times a second) costs the server and
 * says something is wrong on one side.  complete_op() reports every failed
 * operation of an NFSv4.1+ compound here; when one client fails the same
 * operation with the same status NFS4_RETRY_STORM_PER_SECOND times within
 * one second, that second is counted as a retry storm and logged (at most
 * once per NFS4_RETRY_STORM_LOG_INTERVAL seconds per slot), naming the
 * client, the operation, the status and the file.  Nothing else changes:
 * the client is still answered as before.
 */
#ifndef NFS4_RETRY_STORM_H
#define NFS4_RETRY_STORM_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NFS4_RETRY_STORM_PER_SECOND 500
#define NFS4_RETRY_STORM_LOG_INTERVAL 10

struct compound_data;

/* A failed operation of data's compound (status != NFS4_OK). */
void nfs4_note_failed_op(struct compound_data *data, int opcode,
			 int status);

/* Retry storms seen since the server started. */
uint64_t nfs4_retry_storms(void);

#ifdef __cplusplus
}
#endif

#endif /* NFS4_RETRY_STORM_H */
