// SPDX-License-Identifier: LGPL-3.0-or-later
#include "ff_harness/dbus_daemon.hpp"

#include "ff_harness/work_dir.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <poll.h>
#include <regex>
#include <stdexcept>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace flexfiles::harness {

namespace {

using Clock = std::chrono::steady_clock;

class Pipe {
public:
    Pipe() {
        if (pipe2(fds_, O_CLOEXEC) != 0)
            throw std::runtime_error(std::string("pipe2: ") + std::strerror(errno));
    }
    ~Pipe() {
        close_read();
        close_write();
    }
    Pipe(const Pipe&) = delete;
    Pipe& operator=(const Pipe&) = delete;
    int read_fd() const { return fds_[0]; }
    int write_fd() const { return fds_[1]; }
    void close_read() {
        if (fds_[0] >= 0)
            close(fds_[0]);
        fds_[0] = -1;
    }
    void close_write() {
        if (fds_[1] >= 0)
            close(fds_[1]);
        fds_[1] = -1;
    }

private:
    int fds_[2] = {-1, -1};
};

// Reads from fd until EOF, a newline (if stop_at_newline) or the deadline.
std::string read_until(int fd, Clock::time_point deadline, bool stop_at_newline) {
    std::string out;
    for (;;) {
        const auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
        if (left <= 0)
            return out;
        pollfd p{fd, POLLIN, 0};
        if (poll(&p, 1, static_cast<int>(left)) <= 0)
            continue;
        char buf[4096];
        const ssize_t n = read(fd, buf, sizeof(buf));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return out;
        out.append(buf, static_cast<std::size_t>(n));
        if (stop_at_newline && out.find('\n') != std::string::npos)
            return out;
    }
}

const char* kBusConfig =
    R"(<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<!-- Written by ff_harness: a private bus for one test, open to everyone. -->
<busconfig>
  <listen>unix:tmpdir=/tmp</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_type="method_call"/>
    <allow send_destination="*"/>
    <allow receive_sender="*"/>
  </policy>
</busconfig>
)";

} // namespace

bool CommandResult::ok() const {
    return WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0;
}

CommandResult run_command(const std::vector<std::string>& argv,
                          const std::map<std::string, std::string>& env,
                          std::chrono::milliseconds timeout) {
    Pipe pipe;
    SpawnOptions spawn;
    spawn.argv = argv;
    spawn.env = env;
    spawn.stdout_fd = pipe.write_fd();
    spawn.stderr_to_stdout = true;
    ChildProcess child(spawn);
    pipe.close_write();
    CommandResult result;
    result.output = read_until(pipe.read_fd(), Clock::now() + timeout, false);
    const auto status = child.wait_for(std::chrono::milliseconds(100));
    result.wait_status = status ? *status : child.stop(std::chrono::milliseconds(0));
    return result;
}

DbusDaemon::DbusDaemon(fs::path dir) : dir_(std::move(dir)) {
    if (dir_.empty())
        dir_ = test_work_dir() / "dbus";
    fresh_dir(dir_);
    const fs::path conf = dir_ / "bus.conf";
    std::ofstream(conf) << kBusConfig;

    Pipe pipe;
    SpawnOptions spawn;
    spawn.argv = {"/usr/bin/dbus-daemon", "--config-file=" + conf.string(), "--nofork",
                  "--nopidfile", "--print-address=1"};
    spawn.stdout_fd = pipe.write_fd();
    spawn.output = dir_ / "dbus-daemon.log";
    process_ = ChildProcess(spawn);
    pipe.close_write();
    const std::string line =
        read_until(pipe.read_fd(), Clock::now() + std::chrono::seconds(10), true);
    const auto nl = line.find('\n');
    if (nl == std::string::npos || nl == 0) {
        process_.stop();
        std::ifstream log(dir_ / "dbus-daemon.log");
        std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
        throw std::runtime_error("dbus-daemon printed no address; its output: " + text);
    }
    address_ = line.substr(0, nl);
}

std::map<std::string, std::string> DbusDaemon::env() const {
    return {{"DBUS_SYSTEM_BUS_ADDRESS", address_}};
}

CommandResult DbusDaemon::send(const std::string& dest, const std::string& object_path,
                               const std::string& interface_method,
                               const std::vector<std::string>& args) const {
    std::vector<std::string> argv{"/usr/bin/dbus-send",    "--bus=" + address_, "--print-reply",
                                  "--reply-timeout=10000", "--dest=" + dest,    object_path,
                                  interface_method};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_command(argv);
}

std::vector<std::string> DbusDaemon::list_names() const {
    const auto r =
        send("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus.ListNames");
    if (!r.ok())
        throw std::runtime_error("dbus ListNames failed: " + r.output);
    std::vector<std::string> names;
    static const std::regex quoted(R"re(string "([^"]*)")re");
    for (std::sregex_iterator it(r.output.begin(), r.output.end(), quoted), end; it != end; ++it)
        names.push_back((*it)[1]);
    return names;
}

} // namespace flexfiles::harness
