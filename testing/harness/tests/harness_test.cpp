// SPDX-License-Identifier: LGPL-3.0-or-later
//
// Tests of the harness itself: what other integration tests rely on.
#include "ff_harness/harness.hpp"

#include <arpa/inet.h>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace flexfiles::harness;
using namespace std::chrono_literals;

namespace {

bool process_gone(pid_t pid) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(stat, line))
        return true;
    const auto close = line.rfind(')');
    return close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'Z';
}

bool wait_gone(pid_t pid, std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!process_gone(pid)) {
        if (std::chrono::steady_clock::now() >= deadline)
            return false;
        std::this_thread::sleep_for(20ms);
    }
    return true;
}

} // namespace

// A server that exits at startup fails the test at once, showing why.
TEST(Harness, StartupFailureThrowsWithTheLogTail) {
    // Occupy the server's MOUNT port: Ganesha binds NFS, cannot bind MOUNT, and exits.
    // (A syntax error would not do: Ganesha then runs on built-in defaults, every address.)
    AddressBlock block = AddressBlock::acquire();
    ServerOptions o = ServerOptions::data_server("unbindable", block.address(2), 7);
    const int squatter = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ASSERT_GE(squatter, 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(o.mnt_port);
    ASSERT_EQ(inet_pton(AF_INET, o.address.c_str(), &sa.sin_addr), 1);
    ASSERT_EQ(bind(squatter, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)), 0);
    ASSERT_EQ(listen(squatter, 1), 0);

    o.startup_timeout = 15s;
    const auto start = std::chrono::steady_clock::now();
    try {
        GaneshaServer server(o);
        FAIL() << "a server whose MOUNT port is taken started";
    } catch (const std::runtime_error& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("exited during startup"), std::string::npos) << what;
        EXPECT_NE(what.find("last log lines"), std::string::npos) << what;
        EXPECT_NE(what.find("Address already in use"), std::string::npos) << what;
    }
    close(squatter);
    EXPECT_LT(std::chrono::steady_clock::now() - start, 10s) << "should fail as soon as it exits";
}

// Ganesha would serve without the export; the harness refuses such a start.
TEST(Harness, ConfigErrorsFailTheStart) {
    AddressBlock block = AddressBlock::acquire();
    ServerOptions o = ServerOptions::data_server("badfsal", block.address(2), 7);
    o.exports[0].fsal = "FSAL { Name = NO_SUCH_FSAL; }";
    try {
        GaneshaServer server(o);
        FAIL() << "a server whose export failed to load started";
    } catch (const std::runtime_error& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("configuration errors:"), std::string::npos) << what;
        EXPECT_NE(what.find("Failed to load FSAL (NO_SUCH_FSAL)"), std::string::npos) << what;
    }
    // ...unless the test asks for it, to look at the errors itself.
    o.allow_config_errors = true;
    GaneshaServer server(o);
    EXPECT_FALSE(server.config_errors().empty());
    EXPECT_FALSE(server.error_lines().empty());
    EXPECT_TRUE(server.log_contains("Failed to load FSAL (NO_SUCH_FSAL)"));
}

TEST(Harness, RestartSignalsAndLog) {
    AddressBlock block = AddressBlock::acquire();
    GaneshaServer ds(ServerOptions::data_server("ds", block.address(2), 9));
    ASSERT_TRUE(ds.running());
    EXPECT_TRUE(ds.log_contains("NFS SERVER INITIALIZED"));
    EXPECT_FALSE(ds.log_contains("no such line, surely"));
    EXPECT_TRUE(std::filesystem::is_directory(ds.export_path()));
    EXPECT_TRUE(std::filesystem::is_directory(ds.recovery_root()));

    // A frozen server does not answer; a thawed one does.
    ASSERT_TRUE(ds.signal(SIGSTOP));
    EXPECT_FALSE(rpc_null_ping(ds.address(), ds.nfs_port(), kNfsProgram, 3, 300ms).ok);
    ASSERT_TRUE(ds.signal(SIGCONT));
    EXPECT_TRUE(rpc_null_ping(ds.address(), ds.nfs_port(), kNfsProgram, 3, 2000ms).ok);

    // Data survives a restart; the new process logs a new start.
    std::ofstream(ds.export_path() / "kept") << "hello";
    const pid_t old_pid = ds.pid();
    const std::size_t mark = ds.log_offset();
    ds.restart();
    EXPECT_NE(ds.pid(), old_pid);
    EXPECT_TRUE(wait_gone(old_pid, 1s));
    EXPECT_TRUE(ds.log_contains("NFS SERVER INITIALIZED", mark));
    Nfs3Client client(ds.nfs3_url());
    const auto kept = client.lookup(client.root(), "kept");
    ASSERT_EQ(kept.status, Nfs3Status::ok);
    ASSERT_TRUE(kept.attr.has_value());
    EXPECT_EQ(kept.attr->size, 5U);

    // A stopped (SIGSTOP) server still stops promptly, by SIGTERM.
    ASSERT_TRUE(ds.signal(SIGSTOP));
    const auto t0 = std::chrono::steady_clock::now();
    const int status = ds.stop();
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 4s);
    EXPECT_TRUE(WIFEXITED(status) || WIFSIGNALED(status)) << describe_wait_status(status);
    EXPECT_FALSE(ds.running());
    EXPECT_TRUE(ds.error_lines().empty());
}

// kill -9 of a test process leaves no server behind (PR_SET_PDEATHSIG in the child).
TEST(Harness, KilledTestLeavesNoServer) {
    AddressBlock block = AddressBlock::acquire();
    const std::string address = block.address(2);
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    const pid_t test = fork();
    ASSERT_GE(test, 0);
    if (test == 0) {
        close(fds[0]);
        try {
            GaneshaServer server(ServerOptions::data_server("orphan", address, 11));
            const pid_t pid = server.pid();
            if (write(fds[1], &pid, sizeof(pid)) != sizeof(pid))
                _exit(1);
            pause();
        } catch (...) {
        }
        _exit(1);
    }
    close(fds[1]);
    pid_t server_pid = -1;
    const bool got = read(fds[0], &server_pid, sizeof(server_pid)) == sizeof(server_pid);
    close(fds[0]);
    kill(test, SIGKILL);
    int status = 0;
    waitpid(test, &status, 0);
    ASSERT_TRUE(got) << "the forked test could not start its server";
    EXPECT_TRUE(wait_gone(server_pid, 5s)) << "ganesha.nfsd " << server_pid << " outlived its test";
    // A killed thread group's leader shows as a zombie while its other threads still
    // unwind; the listening socket closes when the last one is gone.
    const auto deadline = std::chrono::steady_clock::now() + 5s;
    while (tcp_port_open(address, 2049, 200ms) && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(20ms);
    EXPECT_FALSE(tcp_port_open(address, 2049, 200ms)) << "something still listens on " << address;
}

TEST(Harness, PrivateBusCarriesTwoServers) {
    ClusterOptions options;
    options.data_servers = 1;
    options.with_dbus = true;
    Cluster cluster(options);
    ASSERT_NE(cluster.dbus(), nullptr);
    EXPECT_EQ(cluster.mds().dbus_bus_name(), "org.ganesha.nfsd");
    EXPECT_EQ(cluster.ds(0).dbus_bus_name(), "ds1.org.ganesha.nfsd");

    const auto names = cluster.dbus()->list_names();
    auto has = [&](const std::string& n) {
        return std::find(names.begin(), names.end(), n) != names.end();
    };
    EXPECT_TRUE(has("org.ganesha.nfsd"));
    EXPECT_TRUE(has("ds1.org.ganesha.nfsd"));

    const auto exports =
        cluster.dbus()->send(cluster.ds(0).dbus_bus_name(), "/org/ganesha/nfsd/ExportMgr",
                             "org.ganesha.nfsd.exportmgr.ShowExports");
    ASSERT_TRUE(exports.ok()) << exports.output;
    EXPECT_NE(exports.output.find(cluster.ds(0).export_path().string()), std::string::npos)
        << exports.output;
    for (auto* server : cluster.servers())
        EXPECT_TRUE(server->error_lines().empty()) << server->name();
}

TEST(Harness, BadInputIsRefusedClearly) {
    AddressBlock a = AddressBlock::acquire();
    AddressBlock b = AddressBlock::acquire();
    EXPECT_NE(a.slot(), b.slot());
    EXPECT_THROW(a.address(0), std::out_of_range);
    EXPECT_THROW(a.address(255), std::out_of_range);

    ServerOptions o = ServerOptions::data_server("prefix", a.address(2), 3);
    o.dbus_name_prefix = "1-bad";
    EXPECT_THROW(GaneshaServer{o}, std::invalid_argument);
    o.dbus_name_prefix.clear();
    o.protocols = {2};
    EXPECT_THROW(GaneshaServer{o}, std::invalid_argument);

    EXPECT_THROW(Nfs3Client("nfs://127.0.0.1/export"), std::invalid_argument);
    EXPECT_THROW(Nfs3Client("http://127.0.0.1/x?nfsport=1&mountport=2"), std::invalid_argument);
    EXPECT_THROW(Nfs3Client("nfs://127.0.0.1/x?nfsport=0&mountport=2"), std::invalid_argument);
    // Nothing listens there: a transport error, not a hang or a crash.
    EXPECT_THROW(Nfs3Client("nfs://" + a.address(99) + "/x?nfsport=2049&mountport=20048",
                            Nfs3Credentials{}, 2000ms),
                 Nfs3TransportError);
}
