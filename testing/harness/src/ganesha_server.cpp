// SPDX-License-Identifier: LGPL-3.0-or-later
#include "ff_harness/ganesha_server.hpp"

#include "ff_harness/rpc_ping.hpp"
#include "ff_harness/work_dir.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <gtest/gtest.h>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <sys/file.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace fs = std::filesystem;

namespace flexfiles::harness {

namespace {

constexpr const char* kInitializedLine = "NFS SERVER INITIALIZED";
// A loopback address no test uses: if a server answers there, it bound the wildcard.
constexpr const char* kWildcardProbe = "127.255.255.254";

// True when every thread of `pid` is in state T (stopped) or t (traced).
bool all_threads_stopped(pid_t pid) {
    std::error_code ec;
    const fs::path tasks = "/proc/" + std::to_string(pid) + "/task";
    bool any = false;
    for (const auto& task : fs::directory_iterator(tasks, ec)) {
        std::ifstream in(task.path() / "stat");
        std::string stat;
        if (!std::getline(in, stat))
            continue;
        const auto close = stat.rfind(')');
        if (close == std::string::npos || close + 2 >= stat.size())
            return false;
        const char state = stat[close + 2];
        if (state != 'T' && state != 't')
            return false;
        any = true;
    }
    return any;
}

// flock(2) on a file, held for the object's lifetime (released if the process dies).
class FileLock {
public:
    explicit FileLock(const fs::path& path) {
        fs::create_directories(path.parent_path());
        fd_ = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
        if (fd_ < 0)
            throw std::runtime_error("cannot open lock " + path.string() + ": " +
                                     std::strerror(errno));
        while (flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
        }
    }
    ~FileLock() { close(fd_); }
    FileLock(const FileLock&) = delete;
    FileLock& operator=(const FileLock&) = delete;

private:
    int fd_ = -1;
};

bool has(const std::vector<int>& v, int x) {
    return std::find(v.begin(), v.end(), x) != v.end();
}

std::string join(const std::vector<int>& v) {
    std::string out;
    for (int x : v) {
        if (!out.empty())
            out += ", ";
        out += std::to_string(x);
    }
    return out;
}

std::string quoted(const fs::path& p) {
    return "\"" + p.string() + "\"";
}

bool valid_dbus_prefix(const std::string& prefix) {
    if (prefix.empty() ||
        !(std::isalpha(static_cast<unsigned char>(prefix[0])) || prefix[0] == '_'))
        return false;
    return std::all_of(prefix.begin(), prefix.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
    });
}

} // namespace

ServerOptions ServerOptions::data_server(std::string name, std::string address,
                                         std::uint16_t export_id) {
    ServerOptions o;
    o.name = std::move(name);
    o.address = std::move(address);
    o.protocols = {3};
    ExportSpec e;
    e.export_id = export_id;
    e.protocols = {3};
    o.exports.push_back(e);
    return o;
}

ServerOptions ServerOptions::metadata_server(std::string name, std::string address,
                                             std::uint16_t export_id) {
    ServerOptions o;
    o.name = std::move(name);
    o.address = std::move(address);
    o.protocols = {4};
    o.minor_versions = {1, 2};
    ExportSpec e;
    e.export_id = export_id;
    e.protocols = {4};
    o.exports.push_back(e);
    return o;
}

GaneshaServer::GaneshaServer(ServerOptions options, fs::path dir)
    : options_(std::move(options)), dir_(std::move(dir)) {
    if (dir_.empty())
        dir_ = test_work_dir() / options_.name;
    dir_ = fs::absolute(dir_);
    fresh_dir(dir_);
    start();
}

GaneshaServer::~GaneshaServer() {
    const bool failed = ::testing::UnitTest::GetInstance()->current_test_info() != nullptr &&
                        ::testing::Test::HasFailure();
    try {
        stop();
        if (failed) {
            std::cerr << "[ff_harness] " << options_.name << " (" << options_.address
                      << ") log kept at " << log_path() << "; last lines:\n";
            for (const auto& line : log_tail(30))
                std::cerr << "    " << line << "\n";
        }
    } catch (...) {
        // A destructor must not throw; the process is stopped by ChildProcess anyway.
    }
}

fs::path GaneshaServer::export_path(std::uint16_t export_id) const {
    for (const auto& e : options_.exports)
        if (e.export_id == export_id)
            return e.path.empty() ? dir_ / ("export" + std::to_string(export_id)) : e.path;
    throw std::out_of_range(options_.name + " has no export " + std::to_string(export_id));
}

fs::path GaneshaServer::export_path() const {
    if (options_.exports.empty())
        throw std::out_of_range(options_.name + " has no exports");
    return export_path(options_.exports.front().export_id);
}

std::string GaneshaServer::nfs3_url(std::optional<std::uint16_t> export_id) const {
    const fs::path path = export_id ? export_path(*export_id) : export_path();
    return "nfs://" + options_.address + path.string() +
           "?nfsport=" + std::to_string(options_.nfs_port) +
           "&mountport=" + std::to_string(options_.mnt_port);
}

std::string GaneshaServer::dbus_bus_name() const {
    return options_.dbus_name_prefix.empty() ? "org.ganesha.nfsd"
                                             : options_.dbus_name_prefix + ".org.ganesha.nfsd";
}

std::string GaneshaServer::render_config() const {
    const auto& o = options_;
    if (!o.config_text.empty())
        return o.config_text;
    std::ostringstream c;
    c << "# Written by ff_harness for " << o.name << "\n";
    c << "NFS_CORE_PARAM {\n";
    c << "    Protocols = " << join(o.protocols) << ";\n";
    c << "    Bind_addr = " << o.address << ";\n";
    c << "    NFS_Port = " << o.nfs_port << ";\n";
    if (has(o.protocols, 3))
        c << "    MNT_Port = " << o.mnt_port << ";\n";
    c << "    Enable_NLM = false;\n";
    c << "    Enable_RQUOTA = false;\n";
    c << "    Enable_UDP = false;\n";
    c << "    Plugins_Dir = " << quoted(plugins_dir()) << ";\n";
    if (!o.dbus_name_prefix.empty())
        c << "    Dbus_Name_Prefix = \"" << o.dbus_name_prefix << "\";\n";
    if (!o.core_extra.empty())
        c << o.core_extra << "\n";
    c << "}\n";
    c << "NFS_KRB5 { Active_krb5 = false; }\n";
    c << "NFSv4 {\n";
    c << "    RecoveryBackend = " << o.recovery_backend << ";\n";
    c << "    RecoveryRoot = " << quoted(recovery_root()) << ";\n";
    c << "    Graceless = " << (o.graceless ? "true" : "false") << ";\n";
    if (o.grace_period)
        c << "    Grace_Period = " << *o.grace_period << ";\n";
    if (o.lease_lifetime)
        c << "    Lease_Lifetime = " << *o.lease_lifetime << ";\n";
    if (has(o.protocols, 4) && !o.minor_versions.empty())
        c << "    minor_versions = " << join(o.minor_versions) << ";\n";
    if (!o.nfsv4_extra.empty())
        c << o.nfsv4_extra << "\n";
    c << "}\n";
    for (const auto& e : o.exports) {
        c << "EXPORT {\n";
        c << "    Export_Id = " << e.export_id << ";\n";
        c << "    Path = " << quoted(export_path(e.export_id)) << ";\n";
        c << "    Pseudo = \""
          << (e.pseudo.empty() ? "/export" + std::to_string(e.export_id) : e.pseudo) << "\";\n";
        c << "    Access_Type = " << e.access_type << ";\n";
        c << "    Squash = " << e.squash << ";\n";
        if (!e.protocols.empty())
            c << "    Protocols = " << join(e.protocols) << ";\n";
        c << "    Transports = TCP;\n";
        c << "    SecType = sys;\n";
        c << "    " << e.fsal << "\n";
        if (!e.extra.empty())
            c << e.extra << "\n";
        c << "}\n";
    }
    if (!o.extra_config.empty())
        c << o.extra_config << "\n";
    return c.str();
}

void GaneshaServer::prepare_dirs() {
    fs::create_directories(dir_);
    if (!options_.recovery_root.empty() && !options_.recovery_root.is_absolute())
        throw std::invalid_argument(options_.name + ": the recovery root must be absolute: " +
                                    options_.recovery_root.string());
    fs::create_directories(recovery_root());
    for (const auto& e : options_.exports) {
        if (!e.path.empty() && !e.path.is_absolute())
            throw std::invalid_argument(options_.name + ": export " + std::to_string(e.export_id) +
                                        " path must be absolute: " + e.path.string());
        if (!e.local_path && e.path.empty())
            throw std::invalid_argument(options_.name + ": export " + std::to_string(e.export_id) +
                                        " has a path in its FSAL's namespace: it needs one");
        if (e.local_path)
            fs::create_directories(export_path(e.export_id));
    }
}

void GaneshaServer::start() {
    if (running())
        throw std::logic_error(options_.name + ": start() while running");
    const auto& o = options_;
    if (o.protocols.empty() ||
        std::any_of(o.protocols.begin(), o.protocols.end(), [](int p) { return p != 3 && p != 4; }))
        throw std::invalid_argument(o.name + ": protocols must be a non-empty set of 3 and 4");
    if (!o.dbus_name_prefix.empty() && !valid_dbus_prefix(o.dbus_name_prefix))
        throw std::invalid_argument(o.name + ": invalid Dbus_Name_Prefix '" + o.dbus_name_prefix +
                                    "' (want [A-Za-z_][A-Za-z0-9_]*)");
    // A stale server on our address would answer the readiness probe in our stead.
    if (tcp_port_open(o.address, o.nfs_port, std::chrono::milliseconds(500)))
        throw std::runtime_error(o.name + ": " + o.address + ":" + std::to_string(o.nfs_port) +
                                 " is already in use by another process");

    prepare_dirs();
    {
        std::ofstream conf(config_path(), std::ios::trunc);
        conf << render_config();
        if (!conf)
            throw std::runtime_error(o.name + ": cannot write " + config_path().string());
    }
    fs::remove(pid_path());

    SpawnOptions spawn;
    spawn.argv = {ganesha_nfsd_binary().string(),
                  "-F",
                  "-f",
                  config_path().string(),
                  "-L",
                  log_path().string(),
                  "-p",
                  pid_path().string(),
                  "-N",
                  o.log_level};
    spawn.env = o.env;
    spawn.env["DBUS_SYSTEM_BUS_ADDRESS"] =
        o.dbus_address.empty() ? "unix:path=" + (dir_ / "no-system-bus").string() : o.dbus_address;
    spawn.output = dir_ / "stdout.log";

    // Every NFSv3 server registers with the one rpcbind, unregistering first; two starting
    // at once can interleave so that one's registration fails, and it exits. Starts are
    // serialised across test processes, and a start lost to someone else's is retried.
    FileLock lock(lock_dir() / "ganesha-start.lock");
    constexpr int kAttempts = 3;
    for (int attempt = 1;; ++attempt) {
        start_log_offset_ = log_offset();
        try {
            process_ = ChildProcess(spawn);
            wait_until_ready();
            return;
        } catch (const std::runtime_error&) {
            if (attempt >= kAttempts || !log_contains("Cannot register", start_log_offset_))
                throw;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100 * attempt));
    }
}

void GaneshaServer::wait_until_ready() {
    const auto& o = options_;
    const auto deadline = std::chrono::steady_clock::now() + o.startup_timeout;
    const std::uint32_t version = has(o.protocols, 3) ? 3 : 4;
    RpcPingResult nfs;
    for (;;) {
        if (!running())
            fail("exited during startup (" + describe_wait_status(*process_.wait_status()) + ")");
        nfs = rpc_null_ping(o.address, o.nfs_port, kNfsProgram, version,
                            std::chrono::milliseconds(1000));
        if (nfs) {
            if (version != 3 || rpc_null_ping(o.address, o.mnt_port, kMountProgram, 3,
                                              std::chrono::milliseconds(1000)))
                break;
            nfs.error = "MOUNT v3 NULL not answered on port " + std::to_string(o.mnt_port);
        }
        if (std::chrono::steady_clock::now() >= deadline)
            fail("did not answer NFSv" + std::to_string(version) + " NULL on " + o.address + ":" +
                 std::to_string(o.nfs_port) + " within " +
                 std::to_string(o.startup_timeout.count()) + " ms (" + nfs.error + ")");
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    // The RPC listener answers a moment before nfs_start() finishes; its last line says so.
    // Wait for it a little, but do not insist: a quieter log level never prints it.
    const auto settle = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (!log_contains(kInitializedLine, start_log_offset_) &&
           std::chrono::steady_clock::now() < settle) {
        if (!running())
            break;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (!running())
        fail("exited right after answering (" + describe_wait_status(*process_.wait_status()) +
             ")");
    // Ganesha serves on after a bad block (without that export) and, after a syntax error,
    // with built-in defaults for everything (all addresses, default paths).
    if (!o.allow_config_errors && !config_errors().empty())
        fail("logged configuration errors (ServerOptions::allow_config_errors permits them)");
    // Ganesha 4.3 resolves Bind_addr with AI_ADDRCONFIG: on a host without a non-loopback
    // IPv6 address it stores an IPv4 sockaddr that its IPv6 bind path reads as "::", and
    // serves on every address. Servers sharing a port then collide; say so plainly.
    if (o.address.rfind("127.", 0) == 0 && o.address != kWildcardProbe &&
        tcp_port_open(kWildcardProbe, o.nfs_port, std::chrono::milliseconds(200)))
        fail("listens on every address, not only " + o.address +
             ": Ganesha 4.3 ignores Bind_addr when the host has no non-loopback IPv6 address");
}

std::vector<std::string> GaneshaServer::config_errors() const {
    std::vector<std::string> errors;
    const std::string log = log_text();
    std::istringstream in(log.substr(std::min(start_log_offset_, log.size())));
    for (std::string line; std::getline(in, line);)
        if (line.find(" :CONFIG :CRIT :") != std::string::npos)
            errors.push_back(line);
    return errors;
}

void GaneshaServer::fail(const std::string& why) {
    process_.stop(options_.stop_grace);
    std::ostringstream msg;
    msg << "ganesha.nfsd '" << options_.name << "' (" << options_.address << ") " << why
        << "\n  config: " << config_path().string() << "\n  log: " << log_path().string() << "\n";
    const auto config = config_errors();
    if (!config.empty()) {
        msg << "  configuration errors:\n";
        for (const auto& line : config)
            msg << "    " << line << "\n";
    }
    msg << "  last log lines:\n";
    for (const auto& line : log_tail(30))
        msg << "    " << line << "\n";
    std::ifstream out(dir_ / "stdout.log");
    std::string line;
    bool header = false;
    while (std::getline(out, line)) {
        if (!header) {
            msg << "  stdout/stderr:\n";
            header = true;
        }
        msg << "    " << line << "\n";
    }
    throw std::runtime_error(msg.str());
}

int GaneshaServer::stop() {
    return process_.stop(options_.stop_grace);
}

void GaneshaServer::restart() {
    stop();
    start();
}

bool GaneshaServer::running() {
    return process_.running();
}

bool GaneshaServer::signal(int sig) {
    if (!process_.signal(sig))
        return false;
    // SIGSTOP reaches each thread on its way back to user space; return once all are
    // stopped, so that "frozen" means frozen for whatever the test does next.
    if (sig == SIGSTOP) {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
        while (!all_threads_stopped(process_.pid())) {
            if (std::chrono::steady_clock::now() >= deadline)
                return false;
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
    }
    return true;
}

std::string GaneshaServer::log_text() const {
    std::ifstream in(log_path(), std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

std::size_t GaneshaServer::log_offset() const {
    std::error_code ec;
    const auto size = fs::file_size(log_path(), ec);
    return ec ? 0 : static_cast<std::size_t>(size);
}

bool GaneshaServer::log_contains(const std::string& text, std::size_t from_offset) const {
    const std::string log = log_text();
    return from_offset <= log.size() && log.find(text, from_offset) != std::string::npos;
}

std::vector<std::string> GaneshaServer::log_tail(std::size_t lines) const {
    return last_lines(log_path(), lines);
}

std::vector<std::string> GaneshaServer::error_lines(const std::vector<std::string>& ignore) const {
    // Every server here logs these: there is no Kerberos keytab, and the callback channel
    // setup tries one anyway.
    std::vector<std::string> benign{"gssd_refresh_krb5_machine_credential"};
    if (options_.dbus_address.empty()) {
        benign.insert(benign.end(), {"dbus_bus_get failed", "called with no DBUS connection",
                                     "DBUS not initialized"});
    }
    benign.insert(benign.end(), ignore.begin(), ignore.end());
    std::vector<std::string> errors;
    std::istringstream in(log_text());
    for (std::string line; std::getline(in, line);) {
        const bool severe = line.find(" :CRIT :") != std::string::npos ||
                            line.find(" :MAJ :") != std::string::npos ||
                            line.find(" :FATAL :") != std::string::npos;
        if (!severe)
            continue;
        if (std::none_of(benign.begin(), benign.end(),
                         [&](const std::string& b) { return line.find(b) != std::string::npos; }))
            errors.push_back(line);
    }
    return errors;
}

} // namespace flexfiles::harness
