// SPDX-License-Identifier: LGPL-3.0-or-later
//
// The admin CLI (tools/ganesha-ff) as the scenarios that read counters or identities run
// it: from the build tree, against the cluster's private dbus daemon. What the hostile-
// client scenarios and the dbus management scenario share.
#pragma once

#include "ff_harness/admin_cli.hpp"
#include "ff_harness/harness.hpp"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <gtest/gtest.h>
#include <map>
#include <string>
#include <thread>
#include <vector>

namespace flexfiles::admin_cli {

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
inline std::map<std::string, std::uint64_t> counters(const harness::DbusDaemon& dbus) {
    const harness::CommandResult r = run(dbus, {"--json", "stats"});
    auto out = counters_of(r.output);
    EXPECT_FALSE(out.empty()) << r.output;
    return out;
}

} // namespace flexfiles::admin_cli
