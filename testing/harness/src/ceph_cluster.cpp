// SPDX-License-Identifier: LGPL-3.0-or-later
#include "ff_harness/ceph_cluster.hpp"

#include <fstream>
#include <stdexcept>
#include <thread>
#include <uuid/uuid.h>

namespace fs = std::filesystem;

namespace flexfiles::harness {

namespace {

std::string new_fsid() {
    uuid_t id;
    uuid_generate_random(id);
    char text[37];
    uuid_unparse_lower(id, text);
    return text;
}

} // namespace

CephCluster::CephCluster(CephOptions options, fs::path dir)
    : options_(options), block_(AddressBlock::acquire()), address_(block_.address(1)),
      dir_(dir.empty() ? test_work_dir() / "ceph" : std::move(dir)), conf_(dir_ / "ceph.conf"),
      run_dir_("/tmp/ff-ceph-" + std::to_string(block_.slot())) {
    const auto started = std::chrono::steady_clock::now();
    fs::remove_all(dir_);
    for (const char* sub : {"log", "mon.a", "osd.0", "mgr.x", "mds.a"})
        fs::create_directories(dir_ / sub);
    // Admin sockets are UNIX sockets (paths of at most 107 bytes): a short folder of this
    // address block's, not the test's working folder.
    fs::remove_all(run_dir_);
    fs::create_directories(run_dir_);
    const std::string fsid = new_fsid();
    const std::string mon = "v2:" + address_ + ":" + std::to_string(options_.mon_port);
    {
        std::ofstream c(conf_);
        const std::string d = dir_.string();
        c << "[global]\n"
          << "fsid = " << fsid << "\n"
          << "mon host = " << mon << "\n"
          << "mon initial members = a\n"
          << "public addr = " << address_ << "\n"
          << "ms bind ipv6 = false\n"
          // Loopback only, one machine: no cephx.
          << "auth cluster required = none\nauth service required = none\n"
          << "auth client required = none\n"
          << "auth allow insecure global id reclaim = true\n"
          << "mon warn on insecure global id reclaim allowed = false\n"
          // One OSD: pools of one replica.
          << "osd pool default size = 1\nosd pool default min size = 1\n"
          << "mon allow pool size one = true\nmon warn on pool no redundancy = false\n"
          << "osd crush chooseleaf type = 0\n"
          << "osd objectstore = memstore\n"
          << "memstore device bytes = " << options_.osd_bytes << "\n"
          << "mon data avail warn = 1\nmon data avail crit = 0\n"
          << "run dir = " << run_dir_.string() << "\n"
          << "log file = " << d << "/log/$name.log\n"
          << "admin socket = " << run_dir_.string() << "/$name.$pid.asok\n"
          << "pid file = " << run_dir_.string() << "/$name.pid\n"
          << "mon data = " << d << "/$name\nosd data = " << d << "/$name\n"
          << "mds data = " << d << "/$name\nmgr data = " << d << "/$name\n";
    }
    step({"/usr/bin/monmaptool", "--create", "--add", "a", mon, "--fsid", fsid,
          (dir_ / "monmap").string()},
         "monmaptool");
    step({"/usr/bin/ceph-mon", "-c", conf_.string(), "--mkfs", "-i", "a", "--monmap",
          (dir_ / "monmap").string()},
         "ceph-mon --mkfs");
    start_daemon("/usr/bin/ceph-mon", "a");
    const CommandResult osd = ceph({"osd", "create"}, options_.startup_timeout);
    if (!osd.ok())
        fail("ceph osd create: " + osd.output);
    step({"/usr/bin/ceph-osd", "-c", conf_.string(), "-i", "0", "--mkfs"}, "ceph-osd --mkfs");
    start_daemon("/usr/bin/ceph-osd", "0");
    start_daemon("/usr/bin/ceph-mgr", "x");
    for (const auto& args :
         std::vector<std::vector<std::string>>{{"osd", "pool", "create", "cephfs_meta", "8"},
                                               {"osd", "pool", "create", "cephfs_data", "8"},
                                               {"fs", "new", kFsName, "cephfs_meta", "cephfs_data"},
                                               {"osd", "pool", "create", kRecoveryPool, "8"}}) {
        const CommandResult r = ceph(args);
        if (!r.ok())
            fail("ceph " + args[0] + " " + args[1] + ": " + r.output);
    }
    start_daemon("/usr/bin/ceph-mds", "a");
    const auto deadline = started + options_.startup_timeout;
    while (true) {
        const CommandResult r = ceph({"fs", "status", kFsName});
        if (r.ok() && r.output.find("active") != std::string::npos)
            break;
        if (std::chrono::steady_clock::now() > deadline)
            fail("the MDS did not become active: " + r.output);
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    startup_time_ = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - started);
}

CephCluster::~CephCluster() {
    // Clients first would be the caller's business; daemons in reverse start order.
    for (auto it = daemons_.rbegin(); it != daemons_.rend(); ++it)
        it->stop(std::chrono::seconds(5));
    std::error_code ignored;
    fs::remove_all(run_dir_, ignored);
}

CommandResult CephCluster::ceph(std::vector<std::string> args,
                                std::chrono::milliseconds timeout) const {
    std::vector<std::string> argv{"/usr/bin/ceph", "-c", conf_.string(), "--connect-timeout", "10"};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_command(argv, {}, timeout);
}

std::string CephCluster::ganesha_block() const {
    return "CEPH {\n    Ceph_Conf = \"" + conf_.string() + "\";\n}\n";
}

std::string CephCluster::fsal_block() {
    return std::string("FSAL { Name = CEPH; Filesystem = \"") + kFsName + "\"; }";
}

void CephCluster::add_grace_members(const std::vector<std::string>& nodeids) const {
    std::vector<std::string> argv{(ganesha_build_dir() / "ganesha-rados-grace").string(),
                                  "--cephconf",
                                  conf_.string(),
                                  "--pool",
                                  kRecoveryPool,
                                  "--ns",
                                  "grace",
                                  "add"};
    argv.insert(argv.end(), nodeids.begin(), nodeids.end());
    const CommandResult r = run_command(argv, {}, std::chrono::seconds(30));
    if (!r.ok())
        throw std::runtime_error("ganesha-rados-grace add: " + r.output);
}

void CephCluster::make_cluster_member(ServerOptions& server, const std::string& nodeid) const {
    server.recovery_backend = "rados_cluster";
    // rados_cluster keeps its records only through a grace period: Graceless would skip
    // setting them up (and Ganesha 4.3 then crashes at the first client). A short one.
    server.graceless = false;
    server.grace_period = 5;
    server.lease_lifetime = 5;
    server.extra_config += ganesha_block() + "RADOS_KV {\n    Ceph_Conf = \"" + conf_.string() +
                           "\";\n    Pool = \"" + kRecoveryPool +
                           "\";\n    Namespace = \"grace\";\n    Nodeid = \"" + nodeid + "\";\n}\n";
    server.env["LD_LIBRARY_PATH"] = (ganesha_build_dir() / "SAL").string();
}

void CephCluster::wait_out_grace(const GaneshaServer& server, std::size_t from_offset,
                                 std::chrono::milliseconds timeout) {
    // The last grace transition logged after from_offset must be the way out.
    const auto out_of_grace = [&] {
        const std::string text = server.log_text();
        const std::size_t from = std::min(from_offset, text.size());
        const std::size_t out = text.rfind("NFS Server Now NOT IN GRACE");
        const std::size_t in = text.rfind("NFS Server Now IN GRACE");
        return out != std::string::npos && out >= from && (in == std::string::npos || in < out);
    };
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!out_of_grace()) {
        if (std::chrono::steady_clock::now() > deadline)
            throw std::runtime_error(server.options().name + " is still in its grace period");
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
}

std::vector<pid_t> CephCluster::pids() const {
    std::vector<pid_t> out;
    for (const auto& d : daemons_)
        out.push_back(d.pid());
    return out;
}

void CephCluster::start_daemon(const std::string& program, const std::string& id) {
    SpawnOptions o;
    o.argv = {program, "-f", "-c", conf_.string(), "-i", id};
    o.output = dir_ / "log" / (fs::path(program).filename().string() + "." + id + ".out");
    o.stderr_to_stdout = true;
    daemons_.emplace_back(o);
}

void CephCluster::step(const std::vector<std::string>& argv, const std::string& what) {
    const CommandResult r = run_command(argv, {}, options_.startup_timeout);
    if (!r.ok())
        fail(what + ": " + describe_wait_status(r.wait_status) + ": " + r.output);
}

void CephCluster::fail(const std::string& why) {
    std::string logs;
    for (const char* name : {"mon.a", "osd.0", "mgr.x", "mds.a"}) {
        logs += std::string("--- ") + name + "\n";
        for (const auto& line : last_lines(dir_ / "log" / (std::string(name) + ".log"), 10))
            logs += line + "\n";
    }
    for (auto it = daemons_.rbegin(); it != daemons_.rend(); ++it)
        it->stop(std::chrono::seconds(2));
    throw std::runtime_error("ceph cluster in " + dir_.string() + ": " + why + "\n" + logs);
}

} // namespace flexfiles::harness
