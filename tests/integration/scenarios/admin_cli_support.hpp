// SPDX-License-Identifier: LGPL-3.0-or-later
//
// The admin CLI (tools/ganesha-ff) as the scenarios that read counters or identities run
// it: from the build tree, against the cluster's private dbus daemon. What the hostile-
// client scenarios and the dbus management scenario share.
#pragma once

#include "ff_harness/harness.hpp"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <gtest/gtest.h>
#include <map>
#include <regex>
#include <string>
#include <thread>
#include <vector>

namespace flexfiles::admin_cli {

// <build>/tests/integration/<this test> -> <build>/tools/ganesha-ff
inline std::filesystem::path binary() {
    const auto self = std::filesystem::read_symlink("/proc/self/exe");
    return self.parent_path().parent_path().parent_path() / "tools" / "ganesha-ff";
}

// `ganesha-ff ARGS...` with the daemon's environment.
inline harness::CommandResult run(const harness::DbusDaemon& dbus, std::vector<std::string> args,
                                  std::chrono::seconds timeout = std::chrono::seconds(60)) {
    std::vector<std::string> argv{binary().string()};
    argv.insert(argv.end(), args.begin(), args.end());
    return harness::run_command(argv, dbus.env(), timeout);
}

// The FLEXFILES interface registers a moment after the server answers NFS: true once
// `ganesha-ff exports` succeeds, false after `timeout`.
inline bool wait_until_registered(const harness::DbusDaemon& dbus,
                                  std::chrono::seconds timeout = std::chrono::seconds(10)) {
    const auto until = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < until) {
        if (run(dbus, {"exports"}, std::chrono::seconds(10)).ok())
            return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
}

// The `"name": value` pairs of `ganesha-ff --json stats` output ("layout.fencings", ...).
inline std::map<std::string, std::uint64_t> counters_of(const std::string& json) {
    static const std::regex kPair("\"([a-z_.]+)\": ([0-9]+)");
    std::map<std::string, std::uint64_t> out;
    for (auto it = std::sregex_iterator(json.begin(), json.end(), kPair);
         it != std::sregex_iterator(); ++it)
        out[(*it)[1].str()] = std::stoull((*it)[2].str());
    return out;
}

// The export's counters (`ganesha-ff --json stats`), or a test failure when there are none.
inline std::map<std::string, std::uint64_t> counters(const harness::DbusDaemon& dbus) {
    const harness::CommandResult r = run(dbus, {"--json", "stats"});
    auto out = counters_of(r.output);
    EXPECT_FALSE(out.empty()) << r.output;
    return out;
}

} // namespace flexfiles::admin_cli
