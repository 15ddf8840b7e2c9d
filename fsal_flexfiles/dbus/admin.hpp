// SPDX-License-Identifier: LGPL-3.0-or-later
//
// The management operations on one FLEXFILES export, as the dbus methods
// (dbus_methods.cpp) call them: plain C++ values in and out, no dbus types.
//
// Every operation checks everything before it changes anything: an answer other than
// Verdict::ok means nothing was changed. Verdict::invalid is a request that is wrong in
// itself (an unknown data server, a malformed block, a value out of range): the dbus layer
// answers it with a dbus error, as Ganesha's ExportMgr does for bad arguments.
// Verdict::refused is a well-formed request the export cannot honour now (removing a data
// server that still holds data files): the dbus layer answers status false and the message,
// Ganesha's way for an operation that did not happen.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace flexfiles {
struct Export;
}

namespace flexfiles::mgmt {

enum class Verdict { ok, refused, invalid };

struct Result {
    Verdict verdict = Verdict::ok;
    std::string message; // for ok too: what was done

    static Result ok(std::string msg) { return {Verdict::ok, std::move(msg)}; }
    static Result refused(std::string msg) { return {Verdict::refused, std::move(msg)}; }
    static Result invalid(std::string msg) { return {Verdict::invalid, std::move(msg)}; }
};

// One data server as ListDataServers shows it.
struct DataServerRow {
    std::uint64_t id = 0;
    std::string address;
    std::uint16_t nfs_port = 0;
    std::uint16_t mnt_port = 0;
    std::string export_path;
    std::uint32_t rsize = 0;
    std::uint32_t wsize = 0;
    std::string state; // "up", "suspect", "down"
    bool drained = false;
    std::string connection; // "connecting", "connected", "backoff", "stopped"
    std::string deviceid;   // 32 hex digits
    std::uint64_t data_files = 0;
    std::uint64_t stale_data_files = 0; // of data_files: stale mirrors waiting to be resilvered
    std::uint64_t creates_pending = 0;
    std::uint64_t removals_pending = 0;
    std::uint64_t requests = 0;
    std::uint64_t errors = 0;
    std::uint64_t timeouts = 0;
    std::uint64_t reported_errors = 0;
    std::uint64_t probes = 0;
    std::uint64_t probe_failures = 0;
    std::uint64_t connects = 0;
    std::uint64_t connect_failures = 0;
    std::uint32_t in_flight = 0;
    std::uint64_t direct_writes = 0;      // WRITEs a worker sent itself (no event thread)
    std::uint64_t direct_spun = 0;        // of those, answered while it polled (DS_Direct_Spin)
    std::uint64_t direct_reads = 0;       // READs a worker sent itself, into Ganesha's buffer
    std::uint32_t direct_connections = 0; // open now for them
    std::int64_t last_probe_ms = -1;      // wall clock, ms since the epoch; -1: never probed
    bool last_probe_ok = false;
    std::uint64_t last_probe_rtt_us = 0;
};

struct PolicyValues {
    bool trust_wcc = true;
    std::uint32_t wcc_max_age_ms = 0;
    std::uint32_t ds_getattr_deadline_ms = 0;
};

using Counters = std::vector<std::pair<std::string, std::uint64_t>>;

// Ordered by Id. Fails (refused) only when the layout store cannot be read.
Result list_data_servers(Export& exp, std::vector<DataServerRow>& rows);
// "group.name" -> value, all of this export: wcc.* (LAYOUT_WCC, GETATTR overlay and
// fallback counters), cache.* (its attribute cache), data_path.*, reaper.*, layout.*,
// store.*.
Counters stats(Export& exp);
PolicyValues policy(const Export& exp);
Result set_policy(Export& exp, const PolicyValues& values);
Result set_drained(Export& exp, std::uint64_t ds_id, bool drained);
Result add_data_server(Export& exp, std::string_view block);
Result remove_data_server(Export& exp, std::uint64_t ds_id);
// Drops the attribute cache's entries of every file of the export / of one file, so the
// next GETATTR asks the data servers.
Result flush_cache_all(Export& exp);
Result flush_cache_file(Export& exp, std::uint64_t file_id, const std::string& path);

} // namespace flexfiles::mgmt
