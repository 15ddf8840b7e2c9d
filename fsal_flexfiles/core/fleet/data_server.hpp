// SPDX-License-Identifier: LGPL-3.0-or-later
//
// One NFSv3 data server: its connection, its health and every request sent to it.
//
// Threading. Each DataServer owns a libnfs RPC context (libnfs contexts are not thread-safe)
// and one event thread, the only thread that touches it. Callers on any thread submit a
// request (a short mutex-protected push and an eventfd write, never an RPC wait); the event
// thread polls the socket and the eventfd, sends, matches replies and completes requests.
// The one exception is write_here(): a caller's thread sends WRITEs and waits for them
// itself, each on a direct connection of its server (a context of its own, used by one
// thread at a time).
// Completion is a callback, run on the event thread (keep it short, never block in it; it
// may submit further requests), or a std::future for the overloads without a callback.
// Exception: a request refused before it is queued (DsErrc::invalid_argument, or
// DsErrc::shutdown after stop()) completes on the caller's thread before the call returns.
//
// Deadlines. Every request has one (Deadline{} = now + request_timeout). A request still
// unanswered at its deadline completes with DsErrc::timeout; if it had been sent, that
// counts against health (Up -> Suspect). A late reply is then dropped. So future::get() never waits
// past the deadline (plus the event thread's wake-up latency, about a millisecond).
//
// Connection. MOUNT (MNT) on the fixed mount_port, then a TCP connection to nfs_port; no
// portmapper. When the connection drops, or the server goes Down, the context is destroyed
// and rebuilt with exponential backoff (see Backoff; the first retry after a drop is
// immediate). Requests while there is no connection:
//   * a connection attempt is in progress (also the very first one) and the server is not
//     Down: the request waits for it, until its deadline;
//   * otherwise (waiting out a backoff delay, or health Down): it fails fast with
//     DsErrc::unavailable. Callers get an answer quickly and can use another mirror.
// A request in flight when the connection fails completes with DsErrc::disconnected; it
// may or may not have been executed by the server.
//
// Health. A NULL probe every probe_interval (deadline probe_timeout) drives HealthTracker.
// A failed connection attempt counts as a failed probe. Requests that time out and
// report_error() make an Up server Suspect. Reaching Down drops the connection (pending
// requests complete with DsErrc::disconnected) and reconnects with backoff; the first
// successful probe on a new connection makes it Up again. NFS errors in replies
// (NOENT, ACCES, ...) do not change health: the caller knows whether they are expected
// and can report_error().
//
// Errors never escape as exceptions. Allocation failure terminates, as Ganesha's
// gsh_malloc does.
#pragma once

#include "fleet/ds_types.hpp"
#include "fleet/health.hpp"
#include "fleet/lent_buffer.hpp"
#include "model/deviceid.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace flexfiles::fleet {

struct DataServerConfig {
    std::uint64_t id = 0;    // >= 1: names the server in logs and derives its deviceid
    std::string host;        // IPv4/IPv6 address (a host name is resolved on every connect)
    std::string export_path; // the MOUNT path (the export's Path on a Ganesha data server)
    std::uint16_t nfs_port = 2049;
    std::uint16_t mount_port = 20048;
    std::uint32_t uid = 0; // AUTH_SYS credentials of every request
    std::uint32_t gid = 0;
    std::uint8_t fsal_id = kDefaultFsalId; // byte 0 of the deviceid

    std::chrono::milliseconds request_timeout{5000}; // used for Deadline{}
    std::chrono::milliseconds connect_timeout{3000}; // TCP + MNT + TCP, per attempt
    std::chrono::milliseconds probe_interval{2000};
    std::chrono::milliseconds probe_timeout{1000};
    // Down after this many failed probes in a row (a failed connect or a lost connection
    // counts as one), and no sooner than (down_after - 1) * probe_interval after the first.
    unsigned down_after = 3;
    std::chrono::milliseconds backoff_initial{100};
    std::chrono::milliseconds backoff_max{5000};
    std::uint32_t max_io_size = 1u << 20; // larger READ/WRITE/COMMIT counts are refused
    // Connections on which a caller's thread sends a WRITE or a READ and waits for its
    // reply itself (DataServer::write_here, read_here); 0: every request goes through the
    // event thread.
    unsigned direct_connections = 8;
    // How long such a caller, when it is the only one waiting on direct connections,
    // polls for the reply before sleeping in poll(): a thread woken from sleep costs a
    // proxied write tens of microseconds (README.md); 0: sleep at once.
    std::chrono::microseconds direct_spin{0};

    LogSink log; // may be empty

    // ok, or invalid_argument naming the bad field.
    DsStatus validate() const;
};

enum class ConnState : std::uint8_t {
    connecting, // MNT or TCP connect in progress
    connected,
    backoff, // waiting before the next attempt
    stopped,
};

std::string_view to_string(ConnState s);

struct DsCounters {
    std::uint64_t requests = 0;        // operations submitted (probes not included)
    std::uint64_t errors = 0;          // operations completed with an error (timeouts included)
    std::uint64_t timeouts = 0;        // operations completed by their deadline
    std::uint64_t reported_errors = 0; // report_error() calls
    std::uint64_t probes = 0;
    std::uint64_t probe_failures = 0;
    std::uint64_t connects = 0; // successful connections (first one included)
    std::uint64_t connect_failures = 0;
    std::uint32_t in_flight = 0;          // submitted, not yet completed
    std::uint64_t direct_writes = 0;      // WRITEs sent on a caller's thread (write_here)
    std::uint32_t direct_connections = 0; // open now, idle or in use
    std::uint64_t direct_spun = 0;        // direct WRITEs whose reply came while polling for it
    std::uint64_t direct_reads = 0;       // READs sent on a caller's thread (read_here)
    // Wall-clock time the last probe completed (success or failure), if any.
    std::optional<std::chrono::system_clock::time_point> last_probe;
    bool last_probe_ok = false;
    std::chrono::microseconds last_probe_rtt{0};
};

class DataServer;

// One WRITE for DataServer::write_here: the same arguments as write().
struct DirectWrite {
    std::shared_ptr<DataServer> ds;
    DsFh fh;
    std::uint64_t offset = 0;
    std::shared_ptr<WriteSource> source;
    std::size_t at = 0;
    std::size_t length = 0;
    StableHow stable = StableHow::file_sync;
    Deadline deadline{};
    // Its answer (a failure included) when it went on the calling thread; empty when it
    // did not go at all, and the caller sends it with write().
    std::optional<DsResult<WriteResult>> result;
};

struct CreateArgs {
    std::string name; // one component, created in the export root
    CreateMode mode = CreateMode::guarded;
    SetAttrs attrs;            // mode/uid/gid (and size) of the new file
    CreateVerifier verifier{}; // CreateMode::exclusive only
};

class DataServer {
public:
    // Validates the config and starts the event thread, which connects at once.
    static DsResult<std::shared_ptr<DataServer>> start(DataServerConfig config);

    // Stops (see stop()).
    ~DataServer();
    DataServer(const DataServer&) = delete;
    DataServer& operator=(const DataServer&) = delete;

    // Completes every pending request with DsErrc::shutdown and ends the event thread
    // (joined, unless stop() runs on that thread itself). Later requests complete at once,
    // on the caller's thread, with DsErrc::shutdown. Idempotent.
    void stop() noexcept;

    std::uint64_t id() const noexcept { return id_; }
    const DeviceId& deviceid() const noexcept { return deviceid_; }
    const DataServerConfig& config() const noexcept;
    // "ds 2 (127.0.0.22:/srv/ds2)"
    const std::string& label() const noexcept;

    Health health() const noexcept;
    ConnState conn_state() const noexcept;
    DsCounters counters() const noexcept;
    std::uint32_t in_flight() const noexcept;

    bool drained() const noexcept { return drained_.load(std::memory_order_acquire); }
    void set_drained(bool d) noexcept { drained_.store(d, std::memory_order_release); }

    // A caller saw an error with this data server: Up -> Suspect (see HealthTracker).
    void report_error(ErrorKind kind) noexcept;
    // Probe now instead of at the next interval; while waiting out a backoff delay,
    // reconnect now.
    void probe_now() noexcept;

    // ---- Operations. Callback forms (the callback runs on the event thread). ----
    void null(Deadline deadline, Callback<NullResult> cb) noexcept;
    void getattr(const DsFh& fh, Deadline deadline, Callback<DsAttrs> cb) noexcept;
    void lookup(std::string name, Deadline deadline, Callback<LookupResult> cb) noexcept;
    // Creates `args.name` in the export root. guarded/unchecked send mode/uid/gid in the
    // CREATE; exclusive sends the verifier and then a SETATTR. If the server's post-op
    // attributes do not show the requested mode/uid/gid, a SETATTR follows. Returns the
    // filehandle and the final attributes.
    void create(CreateArgs args, Deadline deadline, Callback<CreateResult> cb) noexcept;
    void remove(std::string name, Deadline deadline, Callback<Empty> cb) noexcept;
    void setattr(const DsFh& fh, SetAttrs attrs, Deadline deadline,
                 Callback<SetattrResult> cb) noexcept;
    void read(const DsFh& fh, std::uint64_t offset, std::uint32_t count, Deadline deadline,
              Callback<ReadResult> cb) noexcept;
    // The same, the reply's bytes copied into `sink` from `at` on (ReadResult::placed says
    // how many; `data` stays empty). `count` is at most the room left in the sink.
    void read_into(const DsFh& fh, std::uint64_t offset, std::uint32_t count,
                   std::shared_ptr<ReadSink> sink, std::size_t at, Deadline deadline,
                   Callback<ReadResult> cb) noexcept;
    void write(const DsFh& fh, std::uint64_t offset, std::vector<std::uint8_t> data,
               StableHow stable, Deadline deadline, Callback<WriteResult> cb) noexcept;
    // The same for `length` bytes at `at` of a buffer shared with other writes (the mirrors
    // of one proxied WRITE, its chunks), often lent by the caller: held until the request
    // is encoded, never copied. A WRITE whose source was closed before it was encoded is
    // not sent (DsErrc::rpc).
    void write(const DsFh& fh, std::uint64_t offset, std::shared_ptr<WriteSource> source,
               std::size_t at, std::size_t length, StableHow stable, Deadline deadline,
               Callback<WriteResult> cb) noexcept;
    void commit(const DsFh& fh, std::uint64_t offset, std::uint32_t count, Deadline deadline,
                Callback<CommitResult> cb) noexcept;

    // ---- On the calling thread ----
    // Sends the WRITEs, each to its own data server, and waits for their replies on the
    // calling thread, over connections of the servers' own (a few per server, one thread
    // at a time on each): no hand-off to the event thread and back (README.md has what
    // that saves). A write goes this way only when its server is Up and
    // connected, has no change unanswered after its deadline (the ordering rule of
    // README.md) and a direct connection free or able to open; otherwise its `result`
    // stays empty and nothing was sent. Deadlines, health, counters and the ordering
    // rule are as for write(): a WRITE that times out here is handed to the event thread
    // with its connection, which holds newer changes of the file until it is settled.
    // `not_sent(i)` runs for each writes[i] that did not go, once the others are sent and
    // before waiting for them: the caller can send it the other way meanwhile.
    static void write_here(std::span<DirectWrite> writes,
                           const std::function<void(std::size_t)>& not_sent = {}) noexcept;
    // A READ of into.size() bytes at `offset`, sent and answered on the calling thread over
    // a direct connection as write_here's, the data received straight into `into`
    // (ReadResult::placed says how many bytes; `data` stays empty): no hand-off, and no
    // copy out of libnfs's reply buffer (README.md). Empty when it did not go this way
    // (the conditions of write_here, or a request read_into() would refuse): nothing was
    // sent, and the caller reads the other way. Deadline, health and counters as read().
    std::optional<DsResult<ReadResult>> read_here(const DsFh& fh, std::uint64_t offset,
                                                  std::span<std::uint8_t> into,
                                                  Deadline deadline = {}) noexcept;

    // ---- Future forms: the same operations; get() returns by the deadline. ----
    std::future<DsResult<NullResult>> null(Deadline deadline = {});
    std::future<DsResult<DsAttrs>> getattr(const DsFh& fh, Deadline deadline = {});
    std::future<DsResult<LookupResult>> lookup(std::string name, Deadline deadline = {});
    std::future<DsResult<CreateResult>> create(CreateArgs args, Deadline deadline = {});
    std::future<DsResult<Empty>> remove(std::string name, Deadline deadline = {});
    std::future<DsResult<SetattrResult>> setattr(const DsFh& fh, SetAttrs attrs,
                                                 Deadline deadline = {});
    std::future<DsResult<ReadResult>> read(const DsFh& fh, std::uint64_t offset,
                                           std::uint32_t count, Deadline deadline = {});
    std::future<DsResult<ReadResult>> read_into(const DsFh& fh, std::uint64_t offset,
                                                std::uint32_t count, std::shared_ptr<ReadSink> sink,
                                                std::size_t at, Deadline deadline = {});
    std::future<DsResult<WriteResult>> write(const DsFh& fh, std::uint64_t offset,
                                             std::vector<std::uint8_t> data, StableHow stable,
                                             Deadline deadline = {});
    std::future<DsResult<CommitResult>> commit(const DsFh& fh, std::uint64_t offset,
                                               std::uint32_t count, Deadline deadline = {});

    struct Impl; // data_server_impl.hpp (private to ff_fleet)

private:
    explicit DataServer(std::shared_ptr<Impl> impl);

    std::shared_ptr<Impl> impl_;
    std::uint64_t id_;
    DeviceId deviceid_;
    std::atomic<bool> drained_{false};
};

} // namespace flexfiles::fleet
