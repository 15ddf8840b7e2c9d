// SPDX-License-Identifier: LGPL-3.0-or-later
//
// One ganesha.nfsd process for a test: writes its ganesha.conf, starts it in the foreground,
// waits until it answers an RPC NULL, and stops it (by PID) when the object goes away.
#pragma once

#include "ff_harness/process.hpp"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace flexfiles::harness {

struct ExportSpec {
    std::uint16_t export_id = 1;
    // Absolute directory served (created if missing); empty means <server dir>/export<id>.
    std::filesystem::path path;
    // false: `path` is a folder of the FSAL's own namespace (e.g. "/" of a CephFS), written
    // as it is and not created on this machine.
    bool local_path = true;
    // NFSv4 pseudo path; empty means "/export<id>".
    std::string pseudo;
    // The whole FSAL block, e.g. "FSAL { Name = VFS; }", or a FLEXFILES block with its
    // nested FSAL and Data_Server blocks.
    std::string fsal = "FSAL { Name = VFS; }";
    std::string access_type = "RW";
    std::string squash = "No_Root_Squash";
    // Export-level Protocols; empty leaves Ganesha's default (all the server runs).
    std::vector<int> protocols;
    // Raw lines placed inside the EXPORT block.
    std::string extra;
};

struct ServerOptions {
    // Names the working folder and log messages: "mds", "ds1", ...
    std::string name = "server";
    std::string address = "127.0.0.1";
    std::uint16_t nfs_port = 2049;
    std::uint16_t mnt_port = 20048;        // written when NFSv3 is on
    std::vector<int> protocols{3};         // {3}, {4} or {3, 4}
    std::vector<int> minor_versions{1, 2}; // NFSv4 minor versions, when 4 is on
    std::vector<ExportSpec> exports;

    // RecoveryRoot (absolute); empty means <server dir>/recovery. The FLEXFILES layout
    // stores default to a folder in it too, so two servers given one recovery root and the
    // same export paths share everything a failover pair shares.
    std::filesystem::path recovery_root;
    // NFSv4 RecoveryBackend: fs, or rados_cluster for several servers on one CephFS
    // (CephCluster::make_cluster_member writes its RADOS_KV block).
    std::string recovery_backend = "fs";

    std::optional<unsigned> lease_lifetime; // seconds; Ganesha's default is 60
    std::optional<unsigned> grace_period;   // seconds
    bool graceless = true;                  // no grace period at start (OPENs work at once)

    std::string log_level = "NIV_EVENT"; // -N
    std::string core_extra;              // raw lines inside NFS_CORE_PARAM
    std::string nfsv4_extra;             // raw lines inside NFSv4
    std::string extra_config;            // raw text appended at the top level (LOG, MDCACHE, ...)
    std::map<std::string, std::string> env;

    // Ganesha connects to the *system* bus through libdbus, which honours
    // DBUS_SYSTEM_BUS_ADDRESS. Empty points it at a socket that does not exist, so a test
    // server never touches the machine's real system bus (it then logs that dbus is off).
    std::string dbus_address;
    // Dbus_Name_Prefix: the server owns "<prefix>.org.ganesha.nfsd" instead of
    // "org.ganesha.nfsd", so several servers can share one bus. Object paths
    // (/org/ganesha/nfsd/...) do not change. [A-Za-z_][A-Za-z0-9_]*, else Ganesha would
    // silently ignore it: rejected here.
    std::string dbus_name_prefix;

    // Ganesha keeps running after most config errors: without the export whose block was
    // bad, or, after a syntax error, on built-in defaults (every address, default paths).
    // So a start that logs a CONFIG CRIT line fails, unless a test wants exactly that.
    bool allow_config_errors = false;

    // When set, the server's ganesha.conf is exactly this text (e.g. a config sample with
    // its addresses and paths substituted); the fields above then only tell the harness
    // where to find the server (address, ports, protocols, exports' paths).
    std::string config_text;

    std::chrono::milliseconds startup_timeout{20000};
    std::chrono::milliseconds stop_grace{5000};

    // An NFSv3-only data server with one VFS export (Access_Type RW, No_Root_Squash).
    static ServerOptions data_server(std::string name, std::string address,
                                     std::uint16_t export_id);
    // An NFSv4.1/4.2 server (graceless) with one VFS export; replace exports[0].fsal
    // with a FLEXFILES block to make it a pNFS MDS.
    static ServerOptions metadata_server(std::string name, std::string address,
                                         std::uint16_t export_id);
};

class GaneshaServer {
public:
    // Creates `<dir>` (wiped) and starts the server. dir defaults to
    // test_work_dir()/<options.name>. Ready means: it answers an RPC NULL (NFS program,
    // version 3 if enabled else 4, and MOUNT v3 when NFSv3 is on) and has logged
    // "NFS SERVER INITIALIZED" (waited for up to 2 s more). Throws std::runtime_error
    // (with the last log lines) if the server exits or is not ready in time.
    explicit GaneshaServer(ServerOptions options, std::filesystem::path dir = {});
    ~GaneshaServer();
    GaneshaServer(const GaneshaServer&) = delete;
    GaneshaServer& operator=(const GaneshaServer&) = delete;

    const ServerOptions& options() const { return options_; }
    // Change before restart(); the config is rewritten from it.
    ServerOptions& mutable_options() { return options_; }

    const std::string& name() const { return options_.name; }
    const std::string& address() const { return options_.address; }
    std::uint16_t nfs_port() const { return options_.nfs_port; }
    std::uint16_t mnt_port() const { return options_.mnt_port; }
    pid_t pid() const { return process_.pid(); }
    bool running();

    const std::filesystem::path& dir() const { return dir_; }
    std::filesystem::path config_path() const { return dir_ / "ganesha.conf"; }
    std::filesystem::path log_path() const { return dir_ / "ganesha.log"; }
    std::filesystem::path pid_path() const { return dir_ / "ganesha.pid"; }
    std::filesystem::path recovery_root() const {
        return options_.recovery_root.empty() ? dir_ / "recovery" : options_.recovery_root;
    }
    // The directory on disk behind an export (absolute).
    std::filesystem::path export_path(std::uint16_t export_id) const;
    std::filesystem::path export_path() const; // the first export's
    // nfs://ADDR/PATH?nfsport=N&mountport=M for the export (NFSv3 mounts its Path).
    std::string nfs3_url(std::optional<std::uint16_t> export_id = std::nullopt) const;
    // The dbus name this server owns when it has a bus.
    std::string dbus_bus_name() const;

    // Starts a stopped server (rewrites the config); throws like the constructor. Starts
    // are serialised machine-wide (<lock_dir()>/ganesha-start.lock) because concurrent
    // rpcbind registrations can fail, and a start that still loses one is retried twice.
    void start();
    // SIGTERM, then SIGKILL after options().stop_grace; returns the wait status.
    int stop();
    void restart();
    // kill(pid, sig), e.g. SIGSTOP / SIGCONT to freeze a data server. For SIGSTOP it
    // returns once every thread is stopped (false if that takes over 2 s).
    bool signal(int sig);

    std::string log_text() const;
    // Byte offset of the log's end: pass to log_contains to look only at newer lines.
    std::size_t log_offset() const;
    bool log_contains(const std::string& text, std::size_t from_offset = 0) const;
    std::vector<std::string> log_tail(std::size_t lines = 30) const;
    // CRIT, MAJ and FATAL log lines, minus those every server here logs (no Kerberos
    // keytab; no dbus when it has no bus) and minus lines containing any of `ignore`.
    std::vector<std::string> error_lines(const std::vector<std::string>& ignore = {}) const;

    // CONFIG CRIT lines logged since the last start.
    std::vector<std::string> config_errors() const;

    // The text that would be written as ganesha.conf (for tests of the harness).
    std::string render_config() const;

private:
    void prepare_dirs();
    void wait_until_ready();
    [[noreturn]] void fail(const std::string& why);

    ServerOptions options_;
    std::filesystem::path dir_;
    std::size_t start_log_offset_ = 0;
    ChildProcess process_;
};

} // namespace flexfiles::harness
