// SPDX-License-Identifier: LGPL-3.0-or-later
//
// The admin CLI (tools/ganesha-ff) as tests and benchmarks run it: from the build tree,
// against a cluster's private dbus daemon, its `--json stats` read as name -> value.
#pragma once

#include "ff_harness/dbus_daemon.hpp"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <regex>
#include <string>
#include <vector>

namespace flexfiles::admin_cli {

/// <build>/<dir>/<dir>/<this program> -> <build>/tools/ganesha-ff (tests/integration/...,
/// tests/kernel/..., bench/e2e/...).
inline std::filesystem::path binary() {
    const auto self = std::filesystem::read_symlink("/proc/self/exe");
    return self.parent_path().parent_path().parent_path() / "tools" / "ganesha-ff";
}

inline harness::CommandResult run(const harness::DbusDaemon& dbus, std::vector<std::string> args,
                                  std::chrono::seconds timeout = std::chrono::seconds(60)) {
    std::vector<std::string> argv{binary().string()};
    argv.insert(argv.end(), args.begin(), args.end());
    return harness::run_command(argv, dbus.env(), timeout);
}

/// The counters of `ganesha-ff --json stats` output.
inline std::map<std::string, std::uint64_t> counters_of(const std::string& json) {
    static const std::regex kPair("\"([a-z_.]+)\": ([0-9]+)");
    std::map<std::string, std::uint64_t> out;
    for (auto it = std::sregex_iterator(json.begin(), json.end(), kPair);
         it != std::sregex_iterator(); ++it)
        out[(*it)[1].str()] = std::stoull((*it)[2].str());
    return out;
}

} // namespace flexfiles::admin_cli
