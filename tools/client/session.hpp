// SPDX-License-Identifier: LGPL-3.0-or-later
//
// An NFSv4.1/4.2 client session on one TCP connection.
//
// Session::open connects, sends EXCHANGE_ID (asking for the pNFS MDS role by default),
// CREATE_SESSION (fore channel plus a backchannel on the same connection) and
// RECLAIM_COMPLETE, and reads the server's lease time. While open, a renewer thread
// sends a lone SEQUENCE whenever the session has been idle for a third of the lease. send() puts a
// SEQUENCE first (slot table, sequence ids), resends after NFS4ERR_DELAY, and is safe to call from
// many threads at once; send_async() does the same without blocking for the reply. close() (or the
// destructor) sends DESTROY_SESSION and DESTROY_CLIENTID.
//
// The server's calls on the same connection go to a Backchannel (backchannel.hpp);
// set_callback_handler is the hook for CB_LAYOUTRECALL and friends.
#pragma once

#include "backchannel.hpp"
#include "compound.hpp"
#include "rpc_transport.hpp"
#include "slot_table.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace flexfiles::client {

constexpr uint32_t kNfsV4 = 4;
constexpr uint32_t kNfsProcCompound = 1;

struct ChannelAttrs {
    uint32_t header_pad = 0;
    uint32_t max_request = 0;
    uint32_t max_response = 0;
    uint32_t max_response_cached = 0;
    uint32_t max_ops = 0;
    uint32_t max_requests = 0; // slots
};

struct DelayPolicy {
    int max_retries = 10;
    std::chrono::milliseconds first{10};
    std::chrono::milliseconds max{1000};
};

struct SessionOptions {
    std::string host = "127.0.0.1";
    uint16_t port = 2049;
    uint32_t minor_version = 2;               // 1 or 2; op 77 exists only in 2
    AuthSys cred;                             // default root, this host's name
    std::chrono::milliseconds timeout{10000}; // per RPC
    std::chrono::milliseconds connect_timeout{5000};
    std::string owner_id; // client owner; empty: unique per Session object
    uint32_t exchange_flags = EXCHGID4_FLAG_USE_PNFS_MDS;
    ChannelAttrs fore{0, 1u << 20 | 4096, 1u << 20 | 4096, 64u << 10, 16, 16};
    ChannelAttrs back{0, 16u << 10, 16u << 10, 0, 8, 4};
    bool back_channel = true; // CREATE_SESSION4_FLAG_CONN_BACK_CHAN
    uint32_t cb_program = kCbProgramDefault;
    bool reclaim_complete = true;
    bool renew_lease = true; // off for tests that want the lease to expire
    DelayPolicy delay;
    // Called with one line per compound sent and per reply (and backchannel call).
    std::function<void(const std::string&)> trace;
};

class Session {
public:
    // Throws TransportError / NfsError (with the failing step in the message).
    static std::unique_ptr<Session> open(SessionOptions options);
    ~Session();
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;

    // Sends `c` (with SEQUENCE first unless c.no_sequence()). Never throws for NFS or
    // transport errors: inspect the result, or call result.check().
    CompoundResult send(const Compound& c);
    // Same, but returns at once; `done` runs on the receive thread (or on this thread if
    // the call could not be sent). Blocks only while every slot is busy. No DELAY retry.
    void send_async(const Compound& c, std::function<void(CompoundResult&&)> done);
    std::future<CompoundResult> send_future(const Compound& c);

    // BIND_CONN_TO_SESSION on this session's connection.
    CompoundResult bind_connection(channel_dir_from_client4 dir = CDFC4_BACK_OR_BOTH);

    // DESTROY_SESSION + DESTROY_CLIENTID; idempotent. Throws nothing; returns false if the
    // server refused either (the reason goes to the trace).
    bool close();

    // Open-state helpers need these.
    clientid4 clientid() const { return clientid_; }
    const sessionid4& id() const { return sessionid_; }
    std::string id_hex() const;
    uint32_t minor_version() const { return options_.minor_version; }
    uint32_t exchange_flags() const { return eir_flags_; } // as granted
    uint32_t session_flags() const { return csr_flags_; }  // csr_flags
    bool has_back_channel() const {
        return (csr_flags_ & CREATE_SESSION4_FLAG_CONN_BACK_CHAN) != 0;
    }
    const ChannelAttrs& fore_attrs() const { return fore_; } // as granted
    const ChannelAttrs& back_attrs() const { return back_; }
    uint32_t last_status_flags() const { return status_flags_.load(); } // sr_status_flags
    uint32_t lease_time() const { return lease_time_; } // seconds, as the server said
    const SessionOptions& options() const { return options_; }
    RpcTransport& transport() { return *transport_; }
    SlotTable& slots() { return *slots_; }

    void set_callback_handler(CallbackOpHandler handler);
    uint64_t callbacks_answered() const { return backchannel_.answered(); }

    // Sends `c` as-is as a COMPOUND of `minor_version`, outside the slot table (for
    // session-less ops: EXCHANGE_ID, CREATE_SESSION, DESTROY_*, BIND_CONN_TO_SESSION).
    CompoundResult send_unsequenced(const Compound& c, uint32_t minor_version);

private:
    explicit Session(SessionOptions options);
    void establish();
    void trace(const std::string& line) const;
    void renew_loop();
    void stop_renewer();
    // Encodes (with SEQUENCE from `lease` if given) and starts the RPC.
    void start(const Compound& c, uint32_t minor, std::optional<SlotTable::Lease> lease,
               std::function<void(CompoundResult&&)> done);
    CompoundResult finish_reply(std::size_t ops_sent, std::optional<SlotTable::Lease> lease,
                                RpcReply&& reply);

    SessionOptions options_;
    std::unique_ptr<RpcTransport> transport_;
    std::unique_ptr<SlotTable> slots_;
    clientid4 clientid_ = 0;
    sequenceid4 eir_sequence_ = 0;
    uint32_t eir_flags_ = 0;
    uint32_t csr_flags_ = 0;
    sessionid4 sessionid_{};
    ChannelAttrs fore_;
    ChannelAttrs back_;
    std::atomic<uint32_t> status_flags_{0};
    uint32_t lease_time_ = 0;
    std::atomic<int64_t> last_sent_ns_{0}; // steady clock, of the last compound sent
    std::mutex renew_mu_;
    std::condition_variable renew_cv_;
    bool renew_stop_ = false;
    std::thread renewer_;
    bool have_clientid_ = false; // EXCHANGE_ID succeeded
    bool have_session_ = false;  // CREATE_SESSION succeeded
    bool closed_ = false;
    std::mutex close_mu_;
    Backchannel backchannel_;
};

} // namespace flexfiles::client
