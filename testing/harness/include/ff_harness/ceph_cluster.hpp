// SPDX-License-Identifier: LGPL-3.0-or-later
//
// A single-node Ceph cluster for one test, on a loopback address of its own: one monitor,
// one OSD on memstore (RAM, no disk), a manager, one MDS, and a CephFS named "cephfs"
// (metadata and data pools of one replica). Debian's ceph-mon, ceph-osd, ceph-mgr and
// ceph-mds, run in the foreground as the test's children and stopped by PID when the
// object goes away. Authentication is off (loopback only). Clients (libcephfs, the ceph
// CLI, FSAL_CEPH) read conf().
#pragma once

#include "ff_harness/dbus_daemon.hpp" // CommandResult, run_command
#include "ff_harness/ganesha_server.hpp"
#include "ff_harness/process.hpp"
#include "ff_harness/work_dir.hpp"

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace flexfiles::harness {

struct CephOptions {
    std::uint16_t mon_port = 13300;         // on the cluster's own address
    std::uint64_t osd_bytes = 512ull << 20; // memstore's size
    std::chrono::milliseconds startup_timeout{60000};
};

class CephCluster {
public:
    // Creates `<dir>` (wiped; default test_work_dir()/ceph) and starts the daemons; ready
    // means the file system's MDS is active. Throws std::runtime_error (with the last log
    // lines) if a step fails or readiness does not come in time.
    explicit CephCluster(CephOptions options = {}, std::filesystem::path dir = {});
    ~CephCluster();
    CephCluster(const CephCluster&) = delete;
    CephCluster& operator=(const CephCluster&) = delete;

    // The client configuration: monitor address, no authentication.
    const std::filesystem::path& conf() const { return conf_; }
    const std::string& address() const { return address_; }
    static constexpr const char* kFsName = "cephfs";
    // How long the start took, to the MDS being active.
    std::chrono::milliseconds startup_time() const { return startup_time_; }

    // Ganesha's CEPH block (top level: the client configuration FSAL_CEPH reads), and the
    // FSAL block of an export of this cluster's file system (the namespace of a FLEXFILES
    // export: FlexfilesOptions::sub_fsal).
    std::string ganesha_block() const;
    static std::string fsal_block();

    // Several Ganesha servers on this file system share their clients' recovery records
    // and grace periods through Ganesha's rados_cluster backend (RADOS objects in the pool
    // "nfs-ganesha", namespace "grace"). add_grace_members registers the node ids (Ganesha's
    // ganesha-rados-grace), before those servers start; make_cluster_member makes `server`
    // node `nodeid`: its recovery backend, RADOS_KV and CEPH blocks, and a grace period of
    // 5 s (lease 5 s): wait_out_grace() before the first OPEN. The node id also names
    // its CephFS client session, which must differ between servers (FSAL_CEPH resets the
    // session of the same id when it starts).
    void add_grace_members(const std::vector<std::string>& nodeids) const;
    void make_cluster_member(ServerOptions& server, const std::string& nodeid) const;
    static constexpr const char* kRecoveryPool = "nfs-ganesha";
    // Waits until `server` is out of grace: its log's last grace transition, logged after
    // byte `from_offset` (GaneshaServer::log_offset()), is the way out. A node joining starts
    // a grace period on every node: to wait for the one that follows a start, pass the log's
    // offset from before it. Throws if not within `timeout`.
    static void wait_out_grace(const GaneshaServer& server, std::size_t from_offset = 0,
                               std::chrono::milliseconds timeout = std::chrono::seconds(30));

    // The ceph CLI against this cluster, e.g. ceph({"fs", "status"}).
    CommandResult ceph(std::vector<std::string> args,
                       std::chrono::milliseconds timeout = std::chrono::seconds(30)) const;
    // The PIDs of the daemons (mon, osd, mgr, mds), for tests that stop one.
    std::vector<pid_t> pids() const;

private:
    void start_daemon(const std::string& program, const std::string& id);
    void step(const std::vector<std::string>& argv, const std::string& what);
    [[noreturn]] void fail(const std::string& why);

    CephOptions options_;
    AddressBlock block_;
    std::string address_;
    std::filesystem::path dir_;
    std::filesystem::path conf_;
    std::filesystem::path run_dir_; // admin sockets and pid files
    std::vector<ChildProcess> daemons_;
    std::chrono::milliseconds startup_time_{0};
};

} // namespace flexfiles::harness
