// SPDX-License-Identifier: LGPL-3.0-or-later
//
// The configuration of one FLEXFILES export: what the EXPORT { FSAL { Name =
// FLEXFILES; ... } } block says, as C++ values, and the rules that span its
// fields. Ganesha's parser (ganesha/config_blocks.c) reads the block, applies
// defaults and per-field ranges; from_parsed() turns the result into an
// ExportConfig and validate() checks what the parser cannot: cross-field and
// cross-block rules. No Ganesha header is needed here, so the model can be
// unit-tested on its own.
#pragma once

#include "model/config_block.h"

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace flexfiles::config {

// One NFSv3 data server (a Data_Server block).
struct DataServer {
    // Becomes the device id in layouts. Clients cache device ids, so it must
    // stay the same across restarts: it is configured, never derived from the
    // block's position.
    uint32_t id = 0;
    std::string address; // numeric IPv4 or IPv6, as written
    uint16_t nfs_port = FF_CFG_NFS_PORT_DEFAULT;
    uint16_t mnt_port = FF_CFG_MNT_PORT_DEFAULT;
    std::string export_path; // the path the data server's MOUNT service exports
    uint32_t rsize = FF_CFG_IO_SIZE_DEFAULT;
    uint32_t wsize = FF_CFG_IO_SIZE_DEFAULT;

    // "127.0.0.2:2049" or "[::1]:2049", for log lines.
    std::string endpoint() const;

    bool operator==(const DataServer&) const = default;
};

// Inclusive range of synthetic uids or gids the MDS gives data files, so
// that it can fence a client by changing the owner.
struct IdRange {
    uint32_t min = FF_CFG_FENCING_ID_MIN_DEFAULT;
    uint32_t max = FF_CFG_FENCING_ID_MAX_DEFAULT;

    bool operator==(const IdRange&) const = default;
};

struct ExportConfig {
    std::string sub_fsal;                      // the FSAL holding the metadata namespace (e.g. VFS)
    std::vector<DataServer> data_servers;      // in file order
    uint32_t mirrors = FF_CFG_MIRRORS_DEFAULT; // data files per file, each on its own server
    uint64_t stripe_unit = FF_CFG_STRIPE_UNIT_DEFAULT; // bytes
    IdRange fencing_uids;
    IdRange fencing_gids;
    // Fencing_Read_Uid as configured (FF_CFG_FENCING_READ_UID_DERIVED: unset); what READ
    // layouts carry is read_layout_uid().
    uint32_t fencing_read_uid = FF_CFG_FENCING_READ_UID_DERIVED;
    bool trust_wcc = FF_CFG_TRUST_WCC_DEFAULT; // accept LAYOUT_WCC attributes
    std::chrono::milliseconds wcc_max_age{FF_CFG_WCC_MAX_AGE_MS_DEFAULT};
    // How far ahead of the MDS's clock a client-reported ctime may be (core/cache/README.md).
    std::chrono::seconds wcc_max_ctime_skew{FF_CFG_WCC_MAX_CTIME_SKEW_S_DEFAULT};
    std::chrono::milliseconds ds_getattr_deadline{FF_CFG_DS_GETATTR_DEADLINE_MS_DEFAULT};
    // Deadline of every data-path RPC to a data server (CREATE, REMOVE, READ, WRITE, ...).
    std::chrono::milliseconds ds_io_timeout{FF_CFG_DS_IO_TIMEOUT_MS_DEFAULT};
    // Connections per data server on which a worker thread sends a proxied WRITE and waits
    // for its reply itself, instead of handing it to the server's event thread and back
    // (fleet::DataServer::write_here); 0: always the event thread.
    std::uint32_t ds_direct_connections = FF_CFG_DS_DIRECT_CONNECTIONS_DEFAULT;
    // How long such a worker, when no other is waiting for data servers, polls for the
    // reply before it sleeps (DS_Direct_Spin); 0: it sleeps at once.
    std::chrono::microseconds ds_direct_spin{FF_CFG_DS_DIRECT_SPIN_US_DEFAULT};
    // How long the resilverer waits on a stale file's RW layouts before it recalls them
    // (Resilver_Recall_After; mds/resilver.hpp); 0: it only waits.
    std::chrono::milliseconds resilver_recall_after{FF_CFG_RESILVER_RECALL_AFTER_MS_DEFAULT};
    // Where the map file -> data files lives (store/layout_store.hpp); empty: the default,
    // see layout_store_path().
    std::string layout_store;
    // Each file's map is also an extended attribute of its namespace object
    // (model/map_text.hpp), where every MDS serving the namespace finds it; needs a
    // sub-FSAL with xattrs (CEPH). docs/scale-out.md.
    bool map_in_namespace = false;

    bool operator==(const ExportConfig&) const = default;
};

// The uid READ layouts carry as ffds_user (RFC 8435 section 2.2: a uid that is not the
// data file's owner, with the data file's group, which the data file's mode lets read and
// not write; model/data_files.hpp). Fencing_Read_Uid when set; else Fencing_Uid_Max + 1,
// or Fencing_Uid_Min - 1 when Max is the highest id. It must lie outside Fencing_Uid_Min
// ..Max: a fencing moves owners within that range, and an owner equal to the READ uid
// would let READ layouts write. 0 when no such uid exists (validate() says so).
uint32_t read_layout_uid(const ExportConfig& cfg);

// Copies what Ganesha's parser produced.
ExportConfig from_parsed(const ff_cfg_export& parsed);

// Every rule the configuration breaks, one message each, naming the block and
// the field ("Data_Server block 2 (Id = 2): Address is missing"). Empty when
// the configuration is usable.
std::vector<std::string> validate(const ExportConfig& cfg);

// The layout store's path: Layout_Store, or <state_dir>/flexfiles/export-<id>.db where
// state_dir is the server's NFSv4 RecoveryRoot (/var/lib/nfs/ganesha by default).
std::string layout_store_path(const ExportConfig& cfg, int export_id, const std::string& state_dir);

// One line for the log: the sub-FSAL, the data servers and the settings.
std::string describe(const ExportConfig& cfg);

} // namespace flexfiles::config
