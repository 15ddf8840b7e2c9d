// SPDX-License-Identifier: LGPL-3.0-or-later
//
// An active/passive MDS pair on one loopback address, as docs/failover.md describes it for
// a real site: both members serve the same namespace folders and keep their recovery
// records and layout stores under one RecoveryRoot (the shared storage, here the folder
// <test work dir>/shared), and both say the same Server_Owner and Server_Scope, so that a
// client sees one server that restarted. Each member keeps its own folder for its config,
// log and pid file. The test plays the cluster manager: it kills the active member and
// starts the standby on the address.
#pragma once

#include "ff_harness/harness.hpp"

#include <chrono>
#include <csignal>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>

namespace flexfiles::failover_test {

using harness::GaneshaServer;
using harness::ServerOptions;
namespace fs = std::filesystem;

inline fs::path shared_storage() {
    return harness::test_work_dir() / "shared";
}

// Makes `mds` a member of the pair: its exports and recovery root on the shared storage.
inline void make_failover_member(ServerOptions& mds) {
    mds.recovery_root = shared_storage() / "recovery";
    for (auto& e : mds.exports)
        e.path = shared_storage() / ("export" + std::to_string(e.export_id));
    mds.nfsv4_extra += "    Server_Owner = \"ff-mds-pair\";\n"
                       "    Server_Scope = \"ff-mds-pair\";\n";
}

// The standby's options: the active member's, under its own name and folder, starting
// with a grace period so that clients reclaim what they held.
inline ServerOptions standby_of(const GaneshaServer& active, const std::string& name = "mds-b") {
    ServerOptions o = active.options();
    o.name = name;
    o.graceless = false;
    return o;
}

// Kills the active member (SIGKILL) and starts the standby on its address; returns the
// standby (ready: it answers NULL and has logged its start) and how long the takeover took.
struct Takeover {
    std::unique_ptr<GaneshaServer> standby;
    std::chrono::milliseconds took{0};
};
inline Takeover fail_over(GaneshaServer& active, const std::string& name = "mds-b") {
    ServerOptions o = standby_of(active, name);
    const auto killed_at = std::chrono::steady_clock::now();
    if (!active.signal(SIGKILL))
        throw std::runtime_error("the active MDS was not running");
    active.stop(); // reaps it
    Takeover t;
    t.standby = std::make_unique<GaneshaServer>(std::move(o));
    t.took = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - killed_at);
    return t;
}

} // namespace flexfiles::failover_test
