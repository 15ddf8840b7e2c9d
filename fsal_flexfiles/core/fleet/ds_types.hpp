// SPDX-License-Identifier: LGPL-3.0-or-later
//
// Value types of the data-server fleet: filehandles, NFSv3 attributes, results and errors.
// Nothing here knows about NFSv4, Ganesha or libnfs.
#pragma once

#include "model/nfs3.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace flexfiles::fleet {

using Clock = std::chrono::steady_clock;
// Absolute point in time after which a request completes with DsErrc::timeout.
// Deadline{} (the clock's epoch) means "the data server's default request timeout".
using Deadline = Clock::time_point;

inline Deadline deadline_in(std::chrono::milliseconds timeout) {
    return Clock::now() + timeout;
}

// The NFSv3 values (model/nfs3.hpp) under the names the fleet's users know them by.
// DsAttrs is fattr3 as the data server reported it, except that the fleet keeps only mode's
// permission bits (07777), which is what the attribute cache and LAYOUT_WCC's mode hold.
using DsFh = nfs3::Fh; // inline, so that layouts and calls copy it without allocating
using DsTime = nfs3::Time;
using DsAttrs = nfs3::Fattr;
using StableHow = nfs3::StableHow;
using WriteVerifier = nfs3::WriteVerf;
// Which attributes a SETATTR (or a create) sets; the fleet sends only mode's 07777 bits.
using SetAttrs = nfs3::SetAttrs;
using CreateVerifier = std::array<std::uint8_t, 8>;

enum class CreateMode {
    unchecked, // succeeds (and truncates nothing) if the file exists
    guarded,   // NFS3ERR_EXIST if the file exists
    exclusive, // verifier-based exactly-once create; attributes are then set with SETATTR
};

enum class DsErrc {
    ok = 0,
    nfs,              // the server answered with an NFSv3 error (DsStatus::nfs3 holds it)
    timeout,          // the request's deadline passed before a reply
    unavailable,      // not sent: no connection (reconnecting with backoff) or server Down
    disconnected,     // the connection dropped while the request was in flight
    rpc,              // RPC-level failure: could not queue, empty reply, call rejected
    invalid_argument, // rejected before sending (bad name, oversized I/O, empty fh, ...)
    shutdown,         // the data server object is stopping or was removed from the fleet
    not_found,        // fleet: no data server with that id / deviceid
    exists,           // fleet: a data server with that id already exists
    too_few_servers,  // fleet placement: fewer configured, undrained data servers than mirrors
    // fleet placement: enough data servers are configured and undrained, but fewer than
    // mirrors are Up right now: a shortage that heals when they come back
    servers_unavailable,
};

std::string_view to_string(DsErrc code);

struct DsStatus {
    DsErrc code = DsErrc::ok;
    std::uint32_t nfs3 = 0; // nfsstat3 when code == DsErrc::nfs
    // Human-readable context: names the data server, the operation and the object.
    std::string message;
    // DsErrc::unavailable only: the data server is not Down, a new connection to it is
    // being made (after a restart, a dropped connection): asking again soon should work.
    bool reconnecting = false;

    bool ok() const { return code == DsErrc::ok; }
    static DsStatus success() { return {}; }
    static DsStatus error(DsErrc c, std::string msg) { return {c, 0, std::move(msg)}; }
};

template <class T> struct DsResult {
    DsStatus status;
    T value{};

    bool ok() const { return status.ok(); }
    static DsResult success(T v) { return {DsStatus::success(), std::move(v)}; }
    static DsResult failure(DsStatus s) { return {std::move(s), T{}}; }
};

// Operation results. Post-operation attributes are optional in NFSv3 replies, so they are
// std::optional here; Ganesha's data servers always send them on success.
struct Empty {};

struct NullResult {
    std::chrono::microseconds rtt{0};
};

struct LookupResult {
    DsFh fh;
    std::optional<DsAttrs> attrs;
};

using CreateResult = LookupResult;

struct ReadResult {
    std::vector<std::uint8_t> data; // read(); empty for read_into()
    std::size_t placed = 0;         // read_into(): the bytes copied into the sink
    bool eof = false;
    std::optional<DsAttrs> attrs;
};

// When a request went through its data server's client: handed over by the caller, sent
// by the event thread, answered (the reply reached the event thread).
struct CallTimes {
    Clock::time_point submitted{};
    Clock::time_point sent{};
    Clock::time_point replied{};
};

struct WriteResult {
    std::uint32_t count = 0;
    StableHow committed = StableHow::unstable;
    WriteVerifier verifier{};
    std::optional<DsAttrs> attrs;
    CallTimes times;
};

struct CommitResult {
    WriteVerifier verifier{};
    std::optional<DsAttrs> attrs;
};

struct SetattrResult {
    std::optional<DsAttrs> attrs;
};

// Completion callbacks run on the data server's event thread (see DataServer): they must be
// short and must not block; they may submit further requests.
template <class T> using Callback = std::function<void(DsResult<T>)>;

enum class LogLevel { debug, info, warn, error };
// Where the fleet's log lines go (the FSAL maps this onto Ganesha's log). Called from any
// thread, including event threads; must not block for long.
using LogSink = std::function<void(LogLevel, std::string_view)>;

} // namespace flexfiles::fleet
