// SPDX-License-Identifier: LGPL-3.0-or-later
//
// One metadata server and N NFSv3 data servers on their own loopback addresses:
//   MDS  127.<slot>.0.1          data server i (0-based)  127.<slot>.0.<10 + i>
// Each data server: its own VFS export folder, Export_Id 100 + i, Access_Type RW,
// Squash No_Root_Squash, NFS_Port 2049, MNT_Port 20048. The MDS config comes from a
// callback that sees the data servers, so a test chooses FLEXFILES or plain VFS.
#pragma once

#include "ff_harness/dbus_daemon.hpp"
#include "ff_harness/ganesha_server.hpp"
#include "ff_harness/work_dir.hpp"

#include <functional>
#include <memory>
#include <vector>

namespace flexfiles::harness {

struct DataServerInfo {
    unsigned index = 0;
    std::string name;    // "ds1", "ds2", ... (1-based, as in logs and folders)
    std::string address; // 127.<slot>.0.<10 + index>
    std::uint16_t nfs_port = 2049;
    std::uint16_t mnt_port = 20048;
    std::uint16_t export_id = 0;
    std::filesystem::path export_path; // absolute; also the MOUNT path
    std::string nfs3_url() const;      // nfs://ADDR/PATH?nfsport=..&mountport=..
};

struct ClusterOptions {
    unsigned data_servers = 3;
    bool start_mds = true;
    // Start a private bus; every server then uses it, the MDS as org.ganesha.nfsd and data
    // server i under Dbus_Name_Prefix "ds<i+1>".
    bool with_dbus = false;
    // Edits the MDS options (already ServerOptions::metadata_server("mds", 127.<slot>.0.1,
    // Export_Id 1), i.e. NFSv4.1/4.2 over VFS) knowing the data servers, e.g. to put a
    // FLEXFILES block with Data_Server entries in exports[0].fsal. Empty keeps plain VFS.
    std::function<void(ServerOptions& mds, const std::vector<DataServerInfo>& ds)> configure_mds;
    // Edits each data server's options before it starts (log level, extra config...).
    std::function<void(ServerOptions& ds, const DataServerInfo& info)> configure_ds;
};

class Cluster {
public:
    // Starts the bus (if asked), the data servers, then the MDS, under
    // test_work_dir()/cluster. Throws std::runtime_error (with log lines) if any fails.
    explicit Cluster(ClusterOptions options = {});
    ~Cluster();
    Cluster(const Cluster&) = delete;
    Cluster& operator=(const Cluster&) = delete;

    GaneshaServer& mds();
    bool has_mds() const { return mds_ != nullptr; }
    GaneshaServer& ds(unsigned index);
    std::size_t ds_count() const { return data_servers_.size(); }
    const std::vector<DataServerInfo>& ds_info() const { return info_; }
    // Every running server, MDS last.
    std::vector<GaneshaServer*> servers();
    DbusDaemon* dbus() { return dbus_.get(); }
    const AddressBlock& addresses() const { return block_; }
    const std::filesystem::path& dir() const { return dir_; }

    // Starts the MDS later (when ClusterOptions::start_mds was false), with `configure`
    // (or the options' configure_mds) applied.
    GaneshaServer& start_mds(
        std::function<void(ServerOptions&, const std::vector<DataServerInfo>&)> configure = {});

private:
    ClusterOptions options_;
    AddressBlock block_;
    std::filesystem::path dir_;
    std::unique_ptr<DbusDaemon> dbus_;
    std::vector<DataServerInfo> info_;
    std::vector<std::unique_ptr<GaneshaServer>> data_servers_;
    std::unique_ptr<GaneshaServer> mds_;
};

} // namespace flexfiles::harness
