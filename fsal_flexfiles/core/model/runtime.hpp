// SPDX-License-Identifier: LGPL-3.0-or-later
//
// What an administrator may change on a FLEXFILES export while it serves (through the
// dbus interface, dbus/dbus_methods.cpp): the WCC policy and the set of data servers.
// Export::settings stays what the configuration file said; these start as a copy of it.
// Nothing here is persisted: a change lasts until the export is recreated (put it in
// ganesha.conf to keep it).
#pragma once

#include "model/config.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <vector>

namespace flexfiles::mgmt {

// Trust_WCC, WCC_Max_Age and DS_Getattr_Deadline, read on every LAYOUT_WCC and GETATTR:
// relaxed atomics, each one consistent on its own (a GETATTR racing a SetPolicy may see the
// old max age with the new deadline, which is harmless).
class Policy {
public:
    explicit Policy(const config::ExportConfig& cfg)
        : trust_wcc_(cfg.trust_wcc), wcc_max_age_ms_(cfg.wcc_max_age.count()),
          ds_getattr_deadline_ms_(cfg.ds_getattr_deadline.count()) {}

    bool trust_wcc() const noexcept { return trust_wcc_.load(std::memory_order_relaxed); }
    std::chrono::milliseconds wcc_max_age() const noexcept {
        return std::chrono::milliseconds(wcc_max_age_ms_.load(std::memory_order_relaxed));
    }
    std::chrono::milliseconds ds_getattr_deadline() const noexcept {
        return std::chrono::milliseconds(ds_getattr_deadline_ms_.load(std::memory_order_relaxed));
    }

    // Values already validated (dbus/admin.cpp).
    void set(bool trust_wcc, std::chrono::milliseconds wcc_max_age,
             std::chrono::milliseconds ds_getattr_deadline) noexcept {
        trust_wcc_.store(trust_wcc, std::memory_order_relaxed);
        wcc_max_age_ms_.store(wcc_max_age.count(), std::memory_order_relaxed);
        ds_getattr_deadline_ms_.store(ds_getattr_deadline.count(), std::memory_order_relaxed);
    }

private:
    std::atomic<bool> trust_wcc_;
    std::atomic<std::int64_t> wcc_max_age_ms_;
    std::atomic<std::int64_t> ds_getattr_deadline_ms_;
};

// The Data_Server blocks the export uses now (the configured ones plus those added, minus
// those removed at run time): what GETDEVICEINFO answers from and what ListDataServers
// shows. Readers copy under a shared lock.
class DataServerBlocks {
public:
    explicit DataServerBlocks(std::vector<config::DataServer> initial)
        : blocks_(std::move(initial)) {}

    std::vector<config::DataServer> list() const {
        std::shared_lock lk(mu_);
        return blocks_;
    }
    std::optional<config::DataServer> find(std::uint64_t id) const {
        std::shared_lock lk(mu_);
        for (const config::DataServer& ds : blocks_)
            if (ds.id == id)
                return ds;
        return std::nullopt;
    }
    void add(const config::DataServer& ds) {
        std::unique_lock lk(mu_);
        blocks_.push_back(ds);
    }
    void remove(std::uint64_t id) {
        std::unique_lock lk(mu_);
        std::erase_if(blocks_, [id](const config::DataServer& ds) { return ds.id == id; });
    }

private:
    mutable std::shared_mutex mu_;
    std::vector<config::DataServer> blocks_;
};

struct Runtime {
    explicit Runtime(const config::ExportConfig& cfg)
        : policy(cfg), data_servers(cfg.data_servers) {}

    Policy policy;
    DataServerBlocks data_servers;
    // Serialises the changes that take several steps (add, remove, drain checks), so that
    // two administrators cannot interleave them. Never held by the I/O paths.
    std::mutex changes;
};

} // namespace flexfiles::mgmt
