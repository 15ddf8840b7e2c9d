// SPDX-License-Identifier: LGPL-3.0-or-later
//
// A private message bus for one test: Ganesha only talks to the *system* bus, so a test
// that reads its stats over dbus starts this bus and hands its address to the servers
// (ServerOptions::dbus_address, exported as DBUS_SYSTEM_BUS_ADDRESS) and to the query tool.
// The policy lets anyone own any name and call anything.
#pragma once

#include "ff_harness/process.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace flexfiles::harness {

struct CommandResult {
    int wait_status = 0; // raw, see describe_wait_status
    std::string output;  // stdout and stderr, interleaved
    bool ok() const;     // exited with status 0
};

// Runs an absolute-path program with extra environment, capturing its output; gives up
// (SIGKILL) after `timeout`.
CommandResult run_command(const std::vector<std::string>& argv,
                          const std::map<std::string, std::string>& env = {},
                          std::chrono::milliseconds timeout = std::chrono::seconds(30));

class DbusDaemon {
public:
    // Writes <dir>/bus.conf (dir defaults to test_work_dir()/dbus, wiped) and starts
    // dbus-daemon in the foreground; throws std::runtime_error if it gives no address.
    explicit DbusDaemon(std::filesystem::path dir = {});
    ~DbusDaemon() = default;
    DbusDaemon(const DbusDaemon&) = delete;
    DbusDaemon& operator=(const DbusDaemon&) = delete;

    // "unix:path=/tmp/dbus-XXXX,guid=..." for DBUS_SYSTEM_BUS_ADDRESS.
    const std::string& address() const { return address_; }
    pid_t pid() const { return process_.pid(); }
    // {"DBUS_SYSTEM_BUS_ADDRESS", address()} for a child's environment.
    std::map<std::string, std::string> env() const;

    // dbus-send --bus=ADDRESS --print-reply --dest=DEST PATH IFACE.METHOD ARGS...
    CommandResult send(const std::string& dest, const std::string& object_path,
                       const std::string& interface_method,
                       const std::vector<std::string>& args = {}) const;
    // The names currently on the bus (org.freedesktop.DBus.ListNames).
    std::vector<std::string> list_names() const;

private:
    std::filesystem::path dir_;
    std::string address_;
    ChildProcess process_;
};

} // namespace flexfiles::harness
