/* SPDX-License-Identifier: LGPL-3.0-or-later */
/*
 * The FLEXFILES export block as Ganesha's config parser reads it.
 *
 *   EXPORT {
 *       FSAL {
 *           Name = FLEXFILES;
 *           Mirrors = 2;                  # 1..3, default 1
 *           Stripe_Unit = 1048576;        # bytes, default 1 MiB
 *           Fencing_Uid_Min = 1000000;    # synthetic owners of data files
 *           Fencing_Uid_Max = 1999999;
 *           Fencing_Gid_Min = 1000000;
 *           Fencing_Gid_Max = 1999999;
 *           Fencing_Read_Uid = 2000000;   # the uid READ layouts carry; default
 *                                         # Fencing_Uid_Max + 1 (Min - 1 if Max is
 *                                         # the highest id): outside the range
 *           Trust_WCC = true;             # use LAYOUT_WCC attributes from clients
 *           WCC_Max_Age = 1000;           # ms
 *           WCC_Max_Ctime_Skew = 60;      # s, how far a reported ctime may lead
 *           DS_Getattr_Deadline = 500;    # ms
 *           DS_IO_Timeout = 5000;         # ms, deadline of each data-path RPC
 *           Layout_Store = /var/lib/nfs/ganesha/flexfiles/export-1.db;
 *                                         # default: <NFSv4 RecoveryRoot>/flexfiles/
 *                                         #          export-<Export_Id>.db
 *           Map_In_Namespace = false;     # also keep each file's map on the
 *                                         # namespace object (an xattr), for
 *                                         # several MDSs on one namespace (CEPH)
 *           Data_Server { Id = 1; Address = 127.0.0.2; Export_Path = /srv/ds1; }
 *           Data_Server { Id = 2; Address = 127.0.0.3; NFS_Port = 2049;
 *                         MNT_Port = 20048; Export_Path = /srv/ds2;
 *                         Rsize = 1048576; Wsize = 1048576; }
 *           FSAL { Name = VFS; }          # the metadata namespace
 *       }
 *   }
 *
 * The parser reads the values and applies the defaults; the allowed
 * ranges and the rules that span fields or blocks (duplicate Id, Mirrors
 * against the number of data servers, ...) are checked by
 * flexfiles::config::validate() on the C++ side, so that every message
 * names the field. This header is plain C with no Ganesha include: the C parser tables
 * (ganesha/config_blocks.c) and the C++ config model (config.hpp) share it.
 */
#ifndef FF_MODEL_CONFIG_BLOCK_H
#define FF_MODEL_CONFIG_BLOCK_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Defaults (used by the parser tables) and allowed ranges (checked by
 * config.cpp). Times are in milliseconds, sizes in bytes. */
#define FF_CFG_PORT_MIN 1u
#define FF_CFG_NFS_PORT_DEFAULT 2049
#define FF_CFG_MNT_PORT_DEFAULT 20048
#define FF_CFG_IO_SIZE_MIN 4096u
#define FF_CFG_IO_SIZE_MAX (16u * 1024 * 1024)
#define FF_CFG_IO_SIZE_DEFAULT (1024u * 1024)
#define FF_CFG_MIRRORS_MIN 1u
#define FF_CFG_MIRRORS_MAX 3u
#define FF_CFG_MIRRORS_DEFAULT 1u
#define FF_CFG_STRIPE_UNIT_MIN 4096ull
#define FF_CFG_STRIPE_UNIT_MAX (1ull << 30)
#define FF_CFG_STRIPE_UNIT_DEFAULT (1ull << 20)
#define FF_CFG_FENCING_ID_MIN 1u          /* 0 is root */
#define FF_CFG_FENCING_ID_MAX 4294967294u /* (uid_t)-1 means "unchanged" to chown */
#define FF_CFG_FENCING_ID_MIN_DEFAULT 1000000u
#define FF_CFG_FENCING_ID_MAX_DEFAULT 1999999u
#define FF_CFG_FENCING_READ_UID_DERIVED 0u /* Fencing_Read_Uid unset: derived */
#define FF_CFG_TRUST_WCC_DEFAULT true
#define FF_CFG_WCC_MAX_AGE_MS_MAX 3600000u
#define FF_CFG_WCC_MAX_AGE_MS_DEFAULT 1000u
/* A LAYOUT_WCC entry whose time_metadata is ahead of the MDS's clock by more than this is
 * refused (it would make every later honest report look stale). Seconds. */
#define FF_CFG_WCC_MAX_CTIME_SKEW_S_MAX 86400u
#define FF_CFG_WCC_MAX_CTIME_SKEW_S_DEFAULT 60u
#define FF_CFG_DS_GETATTR_DEADLINE_MS_MIN 1u
#define FF_CFG_DS_GETATTR_DEADLINE_MS_MAX 60000u
#define FF_CFG_DS_GETATTR_DEADLINE_MS_DEFAULT 500u
#define FF_CFG_DS_IO_TIMEOUT_MS_MIN 100u
#define FF_CFG_DS_IO_TIMEOUT_MS_MAX 120000u
#define FF_CFG_DS_IO_TIMEOUT_MS_DEFAULT 5000u
/* Connections per data server on which a worker thread sends a proxied WRITE itself. */
#define FF_CFG_DS_DIRECT_CONNECTIONS_MAX 256u
#define FF_CFG_DS_DIRECT_CONNECTIONS_DEFAULT 8u
/* Microseconds such a worker, when it is the only one waiting for data servers, polls for
 * the reply before it sleeps. */
#define FF_CFG_DS_DIRECT_SPIN_US_MAX 1000u
#define FF_CFG_DS_DIRECT_SPIN_US_DEFAULT 0u
/* Milliseconds the resilverer waits on a file's RW layouts before it recalls them (and
 * again as often while they stay out); 0: it never recalls them. */
#define FF_CFG_RESILVER_RECALL_AFTER_MS_MAX 3600000u
#define FF_CFG_RESILVER_RECALL_AFTER_MS_DEFAULT 10000u
/* Layout_Store defaults to <RecoveryRoot>/FF_CFG_LAYOUT_STORE_SUBDIR/export-<Export_Id>.db:
 * /var/lib/nfs/ganesha/flexfiles/... by default, and per server wherever a server keeps its
 * state (RecoveryRoot), so two servers on one machine never share a store. */
#define FF_CFG_LAYOUT_STORE_SUBDIR "flexfiles"
#define FF_CFG_ADDRESS_MAX 255 /* characters */
#define FF_CFG_PATH_MAX 4096   /* characters */

/* One Data_Server block. Strings are Ganesha allocations (gsh_strdup). */
struct ff_cfg_data_server {
    uint32_t id;   /* 0 when the block has no Id */
    char* address; /* NULL when the block has no Address */
    uint16_t nfs_port;
    uint16_t mnt_port;
    char* export_path; /* NULL when the block has no Export_Path */
    uint32_t rsize;
    uint32_t wsize;
    struct ff_cfg_data_server* next; /* next block, in file order */
};

/* The FLEXFILES FSAL block of one export. */
struct ff_cfg_export {
    char* sub_fsal_name;                     /* Name in the nested FSAL block, NULL if none */
    void* sub_fsal_node;                     /* that block's parse node, for the sub-FSAL */
    struct ff_cfg_data_server* data_servers; /* in file order */
    uint32_t mirrors;
    uint64_t stripe_unit;
    uint32_t fencing_uid_min;
    uint32_t fencing_uid_max;
    uint32_t fencing_gid_min;
    uint32_t fencing_gid_max;
    uint32_t fencing_read_uid; /* FF_CFG_FENCING_READ_UID_DERIVED when unset */
    bool trust_wcc;
    uint32_t wcc_max_age_ms;
    uint32_t wcc_max_ctime_skew_s;
    uint32_t ds_getattr_deadline_ms;
    uint32_t ds_io_timeout_ms;
    uint32_t ds_direct_connections;
    uint32_t ds_direct_spin_us;
    uint32_t resilver_recall_after_ms;
    char* layout_store; /* NULL when the block has no Layout_Store */
    bool map_in_namespace;
};

#ifdef __cplusplus
}
#endif

#endif /* FF_MODEL_CONFIG_BLOCK_H */
